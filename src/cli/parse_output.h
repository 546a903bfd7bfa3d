// How `parse` prints, whichever parser produced the result: one JSON object per line, outputs
// fed in --chunk pieces, the closing {"finish_reason", "message"} line of --stream, messages
// with an id on every call, and output errors located in stdin (exit 1).
#pragma once

#include <algorithm>
#include <iostream>
#include <string_view>

#include "chatpeg/base/error.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/reader.h"
#include "cli/commands.h"

namespace chatpeg::cli {

inline void print_line(const json::value& v) {
  std::cout << json::dump(v) << '\n';
}

// Reports an error in the model output read from stdin; returns exit 1.
inline int fail_on_output(base::error e) {
  e.where.file = "stdin";
  report(e);
  return exit_failed;
}

// Calls feed(piece) on `output` in pieces of `chunk` bytes (0 = all at once) until one returns
// a non-zero exit code, which it returns.
template <typename Feed>
int feed_in_chunks(std::string_view output, std::size_t chunk, Feed&& feed) {
  const std::size_t step = chunk == 0 ? std::max<std::size_t>(output.size(), 1) : chunk;
  for (std::size_t at = 0; at < output.size(); at += step) {
    if (int code = feed(output.substr(at, step)); code != exit_ok) return code;
  }
  return exit_ok;
}

// The end of --stream: the deltas still held back, then {"finish_reason", "message"}.
inline void print_finish(const stream::finish_result& done) {
  for (const auto& d : done.deltas) print_line(d.to_json());
  json::value last = json::value::object();
  last["finish_reason"] = std::string(stream::finish_reason_name(done.reason));
  last["message"] = done.message.to_json();
  print_line(last);
}

// --stream with either parser: one JSON line per delta (built from the reader's views), then
// print_finish. An output error ends it with exit 1.
inline int print_stream(stream::reader& r, std::string_view output, std::size_t chunk) {
  int code = feed_in_chunks(output, chunk, [&r](std::string_view piece) {
    auto deltas = r.feed(piece);
    if (!deltas) return fail_on_output(std::move(deltas).error());
    for (const auto& d : *deltas) print_line(d.to_json());
    return exit_ok;
  });
  if (code != exit_ok) return code;
  auto done = r.finish();
  if (!done) return fail_on_output(std::move(done).error());
  print_finish(*done);
  return exit_ok;
}

// As OpenAI sends them: every call has an id.
inline void print_message(chat::message msg) {
  msg.fill_call_ids(stream::generate_call_id);
  print_line(msg.to_json());
}

}  // namespace chatpeg::cli

// Drives a stream::session over one output split into chunks and checks the streaming
// invariants of stream/session.h on the way; violations are returned as text (not gtest
// assertions) so that the conformance property test can count and print them per case.
//   - every delta is valid UTF-8; a call's header {index, id, name, arguments ""} comes
//     before its argument fragments, headers in index order, names and ids sent once;
//   - after every feed, current() is the concatenation of the deltas so far;
//   - after finish, the concatenation equals the final message (ids too), and the final
//     arguments are JSON objects;
//   - marker text (preserved tokens) occurs in streamed content/reasoning no more often than
//     in the final message.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/session.h"

namespace chatpeg::stream::testing {

// Chunk lengths: n bytes each (0 = the whole output at once).
inline std::vector<std::size_t> fixed_chunks(std::size_t total, std::size_t n) {
  std::vector<std::size_t> out;
  if (n == 0 || n >= total) {
    out.push_back(total);
    return out;
  }
  for (std::size_t at = 0; at < total; at += n) out.push_back(std::min(n, total - at));
  return out;
}

// Seeded random chunk lengths in [1, max].
inline std::vector<std::size_t> random_chunks(std::size_t total, std::uint64_t seed,
                                              std::size_t max = 16) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> out;
  for (std::size_t at = 0; at < total;) {
    const std::size_t n = std::min<std::size_t>(1 + rng() % max, total - at);
    out.push_back(n);
    at += n;
  }
  if (out.empty()) out.push_back(0);
  return out;
}

inline std::size_t count_of(std::string_view text, std::string_view what) {
  if (what.empty()) return 0;
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos;
       at = text.find(what, at + what.size())) {
    ++n;
  }
  return n;
}

// "" when equal (content, reasoning, calls with id/name/arguments), else what differs.
inline std::string message_difference(const chat::message& a, const chat::message& b,
                                      bool compare_ids = true) {
  if (a.content.value_or("") != b.content.value_or("")) {
    return "content " + json::quote(a.content.value_or("")) + " vs " +
           json::quote(b.content.value_or(""));
  }
  if (a.reasoning_content.value_or("") != b.reasoning_content.value_or("")) {
    return "reasoning " + json::quote(a.reasoning_content.value_or("")) + " vs " +
           json::quote(b.reasoning_content.value_or(""));
  }
  if (a.tool_calls.size() != b.tool_calls.size()) {
    return "calls " + std::to_string(a.tool_calls.size()) + " vs " +
           std::to_string(b.tool_calls.size());
  }
  for (std::size_t i = 0; i < a.tool_calls.size(); ++i) {
    const auto &x = a.tool_calls[i], &y = b.tool_calls[i];
    const std::string at = "call " + std::to_string(i) + " ";
    if (x.name != y.name) return at + "name " + x.name + " vs " + y.name;
    if (compare_ids && x.id != y.id) return at + "id " + x.id + " vs " + y.id;
    if (x.arguments != y.arguments) return at + "arguments " + x.arguments + " vs " + y.arguments;
  }
  return "";
}

struct stream_outcome {
  bool ok = false;    // no feed/finish error
  base::error error;  // the first error when !ok
  bool error_in_finish = false;
  chat::message assembled;  // concatenation of every delta
  chat::message final_message;
  finish_reason reason = finish_reason::stop;
  std::vector<delta> deltas;
  std::vector<std::string> violations;
};

class delta_checker {
 public:
  explicit delta_checker(stream_outcome& out) : out_(out) {}

  void add(const delta& d) {
    auto bad = [&](std::string what) { out_.violations.push_back(std::move(what)); };
    if (!base::is_valid_utf8(d.content) || !base::is_valid_utf8(d.reasoning_content)) {
      bad("delta text is not valid UTF-8");
    }
    if (!d.content.empty()) {
      if (!out_.assembled.content) out_.assembled.content.emplace();
      out_.assembled.content->append(d.content);
    }
    if (!d.reasoning_content.empty()) {
      if (!out_.assembled.reasoning_content) out_.assembled.reasoning_content.emplace();
      out_.assembled.reasoning_content->append(d.reasoning_content);
    }
    if (d.empty()) bad("empty delta");
    for (const auto& t : d.tool_calls) {
      auto& calls = out_.assembled.tool_calls;
      if (!base::is_valid_utf8(t.arguments)) bad("argument fragment is not valid UTF-8");
      if (t.id || t.name) {
        if (!t.id || !t.name || t.id->empty() || t.name->empty()) bad("header without id/name");
        if (!t.arguments.empty()) bad("header with arguments");
        if (t.index != calls.size()) {
          bad("header for index " + std::to_string(t.index) + " after " +
              std::to_string(calls.size()) + " headers");
          continue;
        }
        chat::tool_call c;
        c.id = t.id.value_or("");
        c.name = t.name.value_or("");
        calls.push_back(std::move(c));
      } else {
        if (t.index >= calls.size()) {
          bad("arguments for call " + std::to_string(t.index) + " before its header");
          continue;
        }
        if (t.arguments.empty()) bad("empty argument fragment");
        calls[t.index].arguments += t.arguments;
      }
    }
    out_.deltas.push_back(d);
  }

 private:
  stream_outcome& out_;
};

// "" when two delta lists are equal field by field (ids: only whether there is one; two
// sessions generate different ids), else the first difference.
inline std::string delta_difference(const std::vector<delta>& a, const std::vector<delta>& b) {
  if (a.size() != b.size()) {
    return std::to_string(a.size()) + " deltas vs " + std::to_string(b.size());
  }
  auto shown = [](delta d) {
    for (auto& t : d.tool_calls) {
      if (t.id) t.id = "id";
    }
    return json::dump(d.to_json());
  };
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (shown(a[i]) != shown(b[i])) {
      return "delta " + std::to_string(i) + ": " + shown(a[i]) + " vs " + shown(b[i]);
    }
  }
  return "";
}

// Feeds output in the given chunks, then finishes (unless do_finish is false); after every feed
// the views it returned are copied and current() must be the deltas so far.
inline stream_outcome run_stream(const chat::prepared& p, std::string_view output,
                                 const std::vector<std::size_t>& chunks,
                                 const finish_options& finish = {}, bool do_finish = true,
                                 session_options options = {}) {
  stream_outcome out;
  delta_checker check(out);
  session s(p, std::move(options));
  std::size_t at = 0;
  for (const std::size_t n : chunks) {
    auto r = s.feed(output.substr(at, n));
    at += n;
    if (!r) {
      out.error = std::move(r).error();
      return out;
    }
    for (const auto& v : *r) check.add(v.to_delta());
    if (auto diff = message_difference(s.current(), out.assembled); !diff.empty()) {
      out.violations.push_back("current() after " + std::to_string(at) +
                               " bytes is not the deltas so far: " + diff);
    }
  }
  if (at < output.size()) out.violations.push_back("chunks do not cover the output");
  if (s.received() != at) out.violations.push_back("received() is not the bytes fed");
  if (!do_finish) {
    out.ok = true;
    out.final_message = s.current();
    return out;
  }
  auto f = s.finish(finish);
  if (!f) {
    out.error = std::move(f).error();
    out.error_in_finish = true;
    return out;
  }
  for (const auto& d : f->deltas) check.add(d);
  out.ok = true;
  out.final_message = f->message;
  out.reason = f->reason;
  if (auto diff = message_difference(out.assembled, f->message); !diff.empty()) {
    out.violations.push_back("deltas do not add up to the final message: " + diff);
  }
  if (auto diff = message_difference(s.current(), f->message); !diff.empty()) {
    out.violations.push_back("current() after finish is not the final message: " + diff);
  } else if (s.current().to_json().dump() != f->message.to_json().dump()) {
    out.violations.push_back("current() after finish: " + s.current().to_json().dump() + " vs " +
                             f->message.to_json().dump());
  }
  for (const auto& c : f->message.tool_calls) {
    auto v = json::parse(c.arguments);
    if (!v || !v->is_object())
      out.violations.push_back("final arguments not an object: " + c.arguments);
  }
  return out;
}

// Marker text in streamed content/reasoning that the reference message does not have.
inline std::string marker_leak(const chat::message& streamed, const chat::message& reference,
                               const std::vector<std::string>& markers) {
  for (const auto& m : markers) {
    if (count_of(streamed.content.value_or(""), m) > count_of(reference.content.value_or(""), m) ||
        count_of(streamed.reasoning_content.value_or(""), m) >
            count_of(reference.reasoning_content.value_or(""), m)) {
      return "marker " + json::quote(m) + " leaked into streamed text";
    }
  }
  return "";
}

}  // namespace chatpeg::stream::testing

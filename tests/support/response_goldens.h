// Reading a response template's goldens (tools/transformers_goldens.py): a case read one-shot
// and streamed in pieces of n code points (transformers' streams split characters, not bytes),
// and whether a reading gives the golden ({"expected": dict} or {"error": why}).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/response/response.h"

namespace chatpeg::testing {

// text cut into pieces of n code points.
inline std::vector<std::string_view> code_point_chunks(std::string_view text, std::size_t n) {
  std::vector<std::string_view> out;
  std::size_t start = 0, at = 0, count = 0;
  while (at < text.size()) {
    const auto d = base::decode_utf8(text, at);
    at += d.length == 0 ? 1 : d.length;
    if (++count == n) {
      out.push_back(text.substr(start, at - start));
      start = at;
      count = 0;
    }
  }
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

// The dict a parser gives when fed output in pieces of n code points.
inline base::result<json::value> read_streamed(const response::template_ptr& t,
                                               const response::parse_options& o,
                                               std::string_view output, std::size_t n) {
  response::parser p(t, o);
  for (auto piece : code_point_chunks(output, n)) {
    auto e = p.feed(piece);
    if (!e) return std::move(e).error();
  }
  auto done = p.finalize();
  if (!done) return std::move(done).error();
  return std::move(done->message);
}

// "" when the reading gives the golden (json::same: objects compared as Python compares
// dicts), else what differs.
inline std::string differs_from_golden(const base::result<json::value>& got,
                                       const json::value& golden) {
  if (golden.contains("error")) {
    return got ? "transformers fails (" + golden["error"].get<std::string>() +
                     ") but chatpeg reads " + json::dump(*got)
               : "";
  }
  if (!got) return "chatpeg fails: " + got.error().to_string();
  if (!json::same(*got, golden["expected"])) {
    return "chatpeg " + json::dump(*got) + " vs transformers " + json::dump(golden["expected"]);
  }
  return "";
}

}  // namespace chatpeg::testing

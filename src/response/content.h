// The content parsers of response templates: what a region's body becomes (text, int, float,
// bool, json with its lenient options, xml-inline, kv-lines), and the whitespace rule of
// Python's str.strip that `text` and the streaming hold-back share.
#pragma once

#include <optional>
#include <string_view>

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"
#include "response/compiled.h"

namespace chatpeg::response::detail {

// Bytes of whitespace (Python str.isspace: ASCII \t\n\v\f\r, \x1c-\x1f, space, and Unicode
// spaces) at the start / at the end of s.
std::size_t leading_space(std::string_view s);
std::size_t trailing_space(std::string_view s);
std::string_view strip(std::string_view s);

// Python's int(text) and float(text) (surrounding whitespace, a sign, '_' between digits;
// float also inf, infinity and nan): nullopt where Python raises ValueError. An integer that
// does not fit 64 bits is nullopt too.
std::optional<json::value> python_int(std::string_view text);
std::optional<double> python_float(std::string_view text);

// A region body parsed by spec. A body that does not parse is errc::no_match whose offset is
// relative to the body and whose message says what was expected.
base::result<json::value> parse_content(const content_spec& spec, std::string_view body);

}  // namespace chatpeg::response::detail

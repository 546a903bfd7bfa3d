// The one place that includes full nlohmann json. Everything uses
// ordered_json: chat templates see key order, so we must keep it.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chatpeg/base/result.h"

namespace chatpeg::json {

using value = nlohmann::ordered_json;

struct parse_options {
  std::size_t max_depth = 512;  // deeper nesting is errc::limit_exceeded
  std::string file;             // used in error locations
};

// Parses JSON text; syntax errors carry the byte offset and line:column.
base::result<value> parse(std::string_view text, const parse_options& options = {});

// Compact serialization, UTF-8 kept as is (ensure_ascii off); invalid UTF-8 is replaced.
std::string dump(const value& v);

// The JSON string literal for text, quotes included.
std::string quote(std::string_view text);

// Appends the JSON escape of text (no quotes) to out.
void append_escaped(std::string& out, std::string_view text);

// Whether JSON strings must escape the byte ('"', '\\', the control bytes).
constexpr bool needs_escape(unsigned char b) {
  return b < 0x20 || b == '"' || b == '\\';
}
// Writes the escape of a byte that needs one (2 or 6 bytes) at `to`; returns its end.
inline char* write_escape(char* to, unsigned char b) {
  static constexpr char kHex[] = "0123456789abcdef";
  *to++ = '\\';
  switch (b) {
    case '"':
    case '\\':
      *to++ = static_cast<char>(b);
      return to;
    case '\n':
      *to++ = 'n';
      return to;
    case '\r':
      *to++ = 'r';
      return to;
    case '\t':
      *to++ = 't';
      return to;
    case '\b':
      *to++ = 'b';
      return to;
    case '\f':
      *to++ = 'f';
      return to;
    default:
      *to++ = 'u';
      *to++ = '0';
      *to++ = '0';
      *to++ = kHex[b >> 4];
      *to++ = kHex[b & 0xF];
      return to;
  }
}

// "a string", "an object", "null", ... for error messages about wrong types.
const char* type_name(const value& v);

// Equality as Python compares parsed JSON: objects as unordered maps (value keeps key order,
// so its operator== also compares the order of keys); numbers by value (1 == 1.0).
bool same(const value& a, const value& b);

// JSON path of a child, for error locations: path_key("$", "a") == "$.a",
// path_index("$.a", 2) == "$.a[2]".
std::string path_key(std::string_view parent, std::string_view key);
std::string path_index(std::string_view parent, std::size_t index);

}  // namespace chatpeg::json

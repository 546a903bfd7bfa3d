// The one place that includes full nlohmann json (DESIGN.md §3). Everything uses
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

// "a string", "an object", "null", ... for error messages about wrong types.
const char* type_name(const value& v);

// JSON path of a child, for error locations: path_key("$", "a") == "$.a",
// path_index("$.a", 2) == "$.a[2]".
std::string path_key(std::string_view parent, std::string_view key);
std::string path_index(std::string_view parent, std::size_t index);

}  // namespace chatpeg::json

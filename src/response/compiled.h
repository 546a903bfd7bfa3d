// A validated response template in the form the scanner and the content parsers run on:
// delimiters compiled to regexes, content parsers resolved with their arguments, transforms
// kept as JSON. Built once by response_template::from_json, immutable afterwards.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chatpeg/json/json.h"
#include "response/regex.h"

namespace chatpeg::response::detail {

enum class content_kind : std::uint8_t {
  text,
  integer,
  floating,
  boolean,
  json,
  xml_inline,
  kv_lines
};

struct content_spec {
  content_kind kind = content_kind::text;
  bool strip = true;  // text, kv-lines
  // json
  bool unquoted_keys = false;
  bool allow_non_json = false;
  std::vector<std::pair<std::string, std::string>> string_delims;
  // xml-inline
  std::optional<regex> tag_pattern;
  bool merge_duplicates = false;
  // kv-lines
  std::string line_sep = "\n";
  std::string kv_sep = ":";
  // xml-inline and kv-lines: how each value is parsed (text when absent)
  std::shared_ptr<const content_spec> value_parser;
  std::string path;  // $.fields.<key>.content_args, for errors
};

// An open or close: one regex (a list of literals is their alternation, longest first). A
// complete match that ends where the text received so far ends is held back unless it is a
// literal that no other literal of its list extends.
struct delimiter_spec {
  std::optional<regex> re;  // absent: no such delimiter
  bool literal = false;
  bool can_extend = false;  // a literal of the list is a strict prefix of another
  explicit operator bool() const { return re.has_value(); }
};

struct field_spec {
  std::string key;
  std::string path;  // $.fields.<key>
  bool implicit = false;
  delimiter_spec open;
  delimiter_spec close;  // absent: the region runs to the end of the output
  bool repeats = false;
  std::optional<std::string> join;
  bool optional = true;
  content_spec content;
  std::optional<json::value> transform;
  bool transform_each = false;
};

struct compiled_template {
  json::value source;
  json::value defaults = json::value::object();
  delimiter_spec anchor;  // start_anchor (literals) or start_anchor_pattern
  std::vector<field_spec> fields;
  int implicit = -1;  // index into fields
};

bool is_structured(content_kind k);  // json, xml-inline, kv-lines: chunks are "dirty"

// Where the first placeholder "{name(.name)*}" of s starts (npos: none), and its length. A
// transform string is a placeholder only when that is the whole string (template.cpp).
std::size_t find_placeholder(std::string_view s, std::size_t& length);

// Validates and compiles a template object (template.cpp).
base::result<std::shared_ptr<const compiled_template>> compile_template(const json::value& j);

}  // namespace chatpeg::response::detail

// Error-returning JSON parse and dump helpers around nlohmann::ordered_json, so that no
// caller has to catch nlohmann exceptions.
#include "chatpeg/json/json.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "chatpeg/base/utf8.h"

namespace chatpeg::json {
namespace {

// Depth of nesting of JSON text, counted without parsing strings' contents as structure.
std::size_t max_nesting(std::string_view text) {
  std::size_t depth = 0, best = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{')
      best = std::max(best, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return best;
}

}  // namespace

base::result<value> parse(std::string_view text, const parse_options& options) {
  base::location where;
  where.file = options.file;
  if (max_nesting(text) > options.max_depth) {
    return base::make_error(base::errc::limit_exceeded,
                            "JSON nesting deeper than " + std::to_string(options.max_depth), where);
  }
  try {
    return value::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports the 1-based index of the offending byte.
    where.offset = e.byte > 0 ? e.byte - 1 : 0;
    base::fill_line_column(where, text);
    std::string what = e.what();
    if (auto pos = what.find("parse error"); pos != std::string::npos) what = what.substr(pos);
    return base::make_error(base::errc::syntax_error, "invalid JSON: " + what, where);
  } catch (const std::exception& e) {
    return base::make_error(base::errc::syntax_error, std::string("invalid JSON: ") + e.what(),
                            where);
  }
}

std::string dump(const value& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// Bytes that JSON strings must escape: '"', '\\' and the control bytes.
constexpr base::byte_stops kNeedsEscape{.below = 0x20, .count = 2, .bytes = {'"', '\\'}};

}  // namespace

// Plain runs are found 16 or 8 bytes at a time and copied in one append each (the hot path of
// argument streaming and of the one-shot parse of a large string argument); only the escaped
// bytes go one by one.
void append_escaped(std::string& out, std::string_view text) {
  if (out.capacity() - out.size() < text.size()) out.reserve(out.size() + text.size());
  const base::stop_scanner scanner(kNeedsEscape);
  std::size_t p = 0;
  while (p < text.size()) {
    const std::size_t stop = scanner.find(text, p);
    out.append(text.data() + p, stop - p);
    if (stop == text.size()) break;
    p = stop + 1;
    char esc[6];
    out.append(esc, static_cast<std::size_t>(
                        write_escape(esc, static_cast<unsigned char>(text[stop])) - esc));
  }
}

std::string quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  append_escaped(out, text);
  out += '"';
  return out;
}

std::string path_key(std::string_view parent, std::string_view key) {
  std::string out(parent);
  bool plain = !key.empty();
  for (const char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) plain = false;
  }
  if (plain) {
    out += '.';
    out += key;
  } else {
    out += '[';
    out += quote(key);
    out += ']';
  }
  return out;
}

const char* type_name(const value& v) {
  switch (v.type()) {
    case value::value_t::null:
      return "null";
    case value::value_t::boolean:
      return "a boolean";
    case value::value_t::string:
      return "a string";
    case value::value_t::array:
      return "an array";
    case value::value_t::object:
      return "an object";
    case value::value_t::binary:
      return "binary";
    case value::value_t::discarded:
      return "nothing";
    default:
      return "a number";
  }
}

std::string path_index(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

bool same(const value& a, const value& b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

}  // namespace chatpeg::json

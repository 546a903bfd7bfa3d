// Content parsers. `json` is a small recursive reader rather than a strict JSON parser because
// templates ask for JavaScript-style unquoted keys and custom string delimiters (Gemma's
// <|"|>...<|"|>); with allow_non_json a body that is not JSON is kept as stripped text.
// xml-inline applies its tag regex repeatedly; kv-lines splits lines at the first separator.
// Nesting is bounded; nothing here allocates beyond the value it returns.
#include "response/content.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "chatpeg/base/utf8.h"

namespace chatpeg::response::detail {
namespace {

using base::errc;

constexpr int kMaxDepth = 128;

bool is_space_code_point(char32_t c) {
  switch (c) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x1C:
    case 0x1D:
    case 0x1E:
    case 0x1F:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

base::error body_error(std::string message, std::size_t offset) {
  return base::make_error(errc::no_match, std::move(message), base::location{.offset = offset});
}

std::string_view stripped_if(bool strip_it, std::string_view s) {
  return strip_it ? strip(s) : s;
}

// ---- json ----------------------------------------------------------------------------------

class json_reader {
 public:
  json_reader(const content_spec& spec, std::string_view text) : spec_(spec), text_(text) {}

  base::result<json::value> document() {
    skip_space();
    auto v = value(0);
    if (!v) return v;
    skip_space();
    if (pos_ != text_.size()) return fail("the end of the JSON value");
    return v;
  }

 private:
  base::error fail(std::string expected) {
    auto e = body_error("the body is not JSON", pos_);
    e.expected = std::move(expected);
    return e;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool at(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  base::result<json::value> value(int depth) {
    if (depth > kMaxDepth) {
      return base::make_error(errc::limit_exceeded, "JSON nests deeper than 128",
                              base::location{.offset = pos_});
    }
    if (pos_ >= text_.size()) return fail("a JSON value");
    for (const auto& [open, close] : spec_.string_delims) {
      if (at(open)) return delimited_string(open, close);
    }
    const char c = text_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return quoted_string();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    for (const auto& [word, v] : {std::pair<std::string_view, json::value>{"true", true},
                                  {"false", false},
                                  {"null", nullptr}}) {
      if (at(word)) {
        pos_ += word.size();
        return v;
      }
    }
    return fail("a JSON value");
  }

  base::result<json::value> delimited_string(const std::string& open, const std::string& close) {
    const std::size_t start = pos_ + open.size();
    const std::size_t end = text_.find(close, start);
    if (end == std::string_view::npos) return fail("the string's closing " + close);
    pos_ = end + close.size();
    return json::value(std::string(text_.substr(start, end - start)));
  }

  base::result<json::value> quoted_string() {
    const std::size_t start = pos_;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      pos_ += text_[pos_] == '\\' ? 2 : 1;
    }
    if (pos_ >= text_.size()) return fail("the closing quote of the string");
    ++pos_;
    auto v = json::parse(text_.substr(start, pos_ - start));
    if (!v) {
      pos_ = start;
      return fail("a valid JSON string");
    }
    return std::move(*v);
  }

  base::result<json::value> number() {
    const std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() &&
           std::string_view("0123456789.eE+-").find(text_[pos_]) != std::string_view::npos) {
      ++pos_;
    }
    auto v = json::parse(text_.substr(start, pos_ - start));
    if (!v || !v->is_number()) {
      pos_ = start;
      return fail("a JSON number");
    }
    return std::move(*v);
  }

  base::result<std::string> key() {
    if (pos_ < text_.size() && text_[pos_] == '"') {
      auto k = quoted_string();
      if (!k) return std::move(k).error();
      return k->get<std::string>();
    }
    for (const auto& [open, close] : spec_.string_delims) {
      if (at(open)) {
        auto k = delimited_string(open, close);
        if (!k) return std::move(k).error();
        return k->get<std::string>();
      }
    }
    if (spec_.unquoted_keys) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
              text_[pos_] == '$' || text_[pos_] == '-' ||
              static_cast<unsigned char>(text_[pos_]) >= 0x80)) {
        ++pos_;
      }
      if (pos_ > start) return std::string(text_.substr(start, pos_ - start));
    }
    return fail(spec_.unquoted_keys ? "an object key" : "a quoted object key");
  }

  base::result<json::value> object(int depth) {
    ++pos_;
    json::value out = json::value::object();
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return out;
    }
    while (true) {
      skip_space();
      auto k = key();
      if (!k) return std::move(k).error();
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') return fail("':' after the key");
      ++pos_;
      skip_space();
      auto v = value(depth + 1);
      if (!v) return v;
      out[*k] = std::move(*v);
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return out;
      }
      return fail("',' or '}'");
    }
  }

  base::result<json::value> array(int depth) {
    ++pos_;
    json::value out = json::value::array();
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return out;
    }
    while (true) {
      skip_space();
      auto v = value(depth + 1);
      if (!v) return v;
      out.push_back(std::move(*v));
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return out;
      }
      return fail("',' or ']'");
    }
  }

  const content_spec& spec_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

base::result<json::value> parse_json(const content_spec& spec, std::string_view body) {
  const std::string_view s = strip(body);
  const std::size_t lead = static_cast<std::size_t>(s.data() - body.data());
  json_reader reader(spec, s);
  auto v = reader.document();
  if (v) return v;
  if (spec.allow_non_json) return json::value(std::string(s));
  auto e = std::move(v).error();
  if (e.where.offset != base::npos) e.where.offset += lead;
  return e;
}

// ---- scalars -------------------------------------------------------------------------------

base::result<json::value> parse_int(std::string_view body) {
  std::string s(strip(body));
  std::string digits;
  for (char c : s) {
    if (c != '_') digits += c;  // Python allows 1_000
  }
  errno = 0;
  char* end = nullptr;
  const long long v = digits.empty() ? 0 : std::strtoll(digits.c_str(), &end, 10);
  if (digits.empty() || end != digits.c_str() + digits.size() || errno == ERANGE ||
      s.find("__") != std::string::npos) {
    auto e = body_error("the body is not an integer: \"" + s + "\"", 0);
    e.expected = "an integer";
    return e;
  }
  return json::value(v);
}

base::result<json::value> parse_float(std::string_view body) {
  std::string s(strip(body));
  errno = 0;
  char* end = nullptr;
  const double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
    auto e = body_error("the body is not a finite number: \"" + s + "\"", 0);
    e.expected = "a number";
    return e;
  }
  return json::value(v);
}

base::result<json::value> parse_bool(std::string_view body) {
  std::string s(strip(body));
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "true" || s == "1") return json::value(true);
  if (s == "false" || s == "0") return json::value(false);
  auto e = body_error("the body is not a boolean: \"" + s + "\"", 0);
  e.expected = "true or false";
  return e;
}

// ---- xml-inline and kv-lines ---------------------------------------------------------------

base::result<json::value> parse_value(const content_spec& spec, std::string_view raw) {
  if (spec.value_parser) return parse_content(*spec.value_parser, raw);
  return json::value(std::string(strip(raw)));
}

void put(json::value& out, const std::string& key, json::value v, bool merge) {
  if (merge && out.contains(key)) {
    auto& slot = out[key];
    if (!slot.is_array()) slot = json::value::array({slot});
    slot.push_back(std::move(v));
    return;
  }
  out[key] = std::move(v);
}

base::result<json::value> parse_xml_inline(const content_spec& spec, std::string_view body) {
  auto matches = spec.tag_pattern->find_all(body);
  if (!matches) return std::move(matches).error();
  json::value out = json::value::object();
  for (const auto& [m, groups] : *matches) {
    std::string key, value;
    for (const auto& g : groups) {
      if (g.name == "key") key = g.text;
      if (g.name == "value") value = g.text;
    }
    auto v = parse_value(spec, value);
    if (!v) {
      auto e = std::move(v).error();
      e.where.offset = m.start;
      return e;
    }
    put(out, key, std::move(*v), spec.merge_duplicates);
  }
  return out;
}

base::result<json::value> parse_kv_lines(const content_spec& spec, std::string_view body) {
  json::value out = json::value::object();
  std::size_t at = 0;
  while (at <= body.size()) {
    std::size_t end = body.find(spec.line_sep, at);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view line = body.substr(at, end - at);
    if (const std::size_t sep = line.find(spec.kv_sep); sep != std::string_view::npos) {
      const std::string key(stripped_if(spec.strip, line.substr(0, sep)));
      std::string_view raw = line.substr(sep + spec.kv_sep.size());
      raw = stripped_if(spec.strip, raw);
      auto v = spec.value_parser ? parse_content(*spec.value_parser, raw)
                                 : base::result<json::value>(json::value(std::string(raw)));
      if (!v) {
        auto e = std::move(v).error();
        e.where.offset = at;
        return e;
      }
      put(out, key, std::move(*v), false);
    }
    at = end + spec.line_sep.size();
  }
  return out;
}

}  // namespace

std::size_t leading_space(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto d = base::decode_utf8(s, i);
    if (d.status != base::utf8_status::ok || !is_space_code_point(d.code_point)) break;
    i += d.length;
  }
  return i;
}

std::size_t trailing_space(std::string_view s) {
  std::size_t end = s.size();
  while (end > 0) {
    std::size_t start = end - 1;  // back to the lead byte of the last sequence
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
      --start;
    }
    const auto d = base::decode_utf8(s, start);
    if (d.status != base::utf8_status::ok || start + d.length != end ||
        !is_space_code_point(d.code_point)) {
      break;
    }
    end = start;
  }
  return s.size() - end;
}

std::string_view strip(std::string_view s) {
  s.remove_prefix(leading_space(s));
  s.remove_suffix(trailing_space(s));
  return s;
}

base::result<json::value> parse_content(const content_spec& spec, std::string_view body) {
  switch (spec.kind) {
    case content_kind::text:
      return json::value(std::string(stripped_if(spec.strip, body)));
    case content_kind::integer:
      return parse_int(body);
    case content_kind::floating:
      return parse_float(body);
    case content_kind::boolean:
      return parse_bool(body);
    case content_kind::json:
      return parse_json(spec, body);
    case content_kind::xml_inline:
      return parse_xml_inline(spec, body);
    case content_kind::kv_lines:
      return parse_kv_lines(spec, body);
  }
  return json::value(std::string(body));
}

}  // namespace chatpeg::response::detail

// Content parsers, each reading a body as transformers' parsers do. `json` rewrites the
// body's dialect (custom string delimiters such as Gemma's <|"|>...<|"|>, JavaScript-style
// unquoted keys) into strict JSON and parses that; with allow_non_json a body that is not
// JSON is kept as text. xml-inline applies its tag regex repeatedly; kv-lines splits lines at
// the first separator. Nesting is bounded.
#include "response/content.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "chatpeg/base/utf8.h"
#include "response/regex.h"

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

constexpr char kDelimOpen = '\x01', kDelimClose = '\x02';  // marks a pre-extracted string

// The body as JSON after the dialect rewrites: strings between custom delimiters are taken
// out (the shortest run from each open to the next close, pair by pair), bare word keys right
// after '{' or ',' are quoted, and the taken-out strings come back as JSON strings.
base::result<json::value> parse_json(const content_spec& spec, std::string_view body) {
  if (!spec.string_delims.empty() &&
      body.find_first_of(std::string_view("\x01\x02", 2)) != std::string_view::npos) {
    return body_error("the body holds a reserved byte \\x01 or \\x02 (string_delims)", 0);
  }
  std::string working(body);
  std::vector<std::string> taken;
  for (const auto& [open, close] : spec.string_delims) {
    std::string out;
    std::size_t at = 0;
    while (true) {
      const std::size_t o = working.find(open, at);
      const std::size_t c = o == std::string::npos ? o : working.find(close, o + open.size());
      if (c == std::string::npos) break;
      out.append(working, at, o - at);
      taken.emplace_back(working, o + open.size(), c - o - open.size());
      out += kDelimOpen + std::to_string(taken.size() - 1) + kDelimClose;
      at = c + close.size();
    }
    out.append(working, at);
    working = std::move(out);
  }
  if (spec.unquoted_keys) {
    static const auto bare_key = regex::compile("(?<=[{,])(\\w+):", false, "");
    auto keys = bare_key->find_all(working);
    if (!keys) return std::move(keys).error();
    std::string out;
    std::size_t at = 0;
    for (const auto& [m, groups] : *keys) {
      out.append(working, at, m.start - at);
      out += '"' + std::string(working, m.start, m.end - 1 - m.start) + "\":";
      at = m.end;
    }
    out.append(working, at);
    working = std::move(out);
  }
  for (std::size_t i = 0; i < taken.size(); ++i) {
    const std::string mark = kDelimOpen + std::to_string(i) + kDelimClose;
    std::string out;
    std::size_t at = 0;
    for (std::size_t f = working.find(mark); f != std::string::npos; f = working.find(mark, at)) {
      out.append(working, at, f - at);
      out += json::quote(taken[i]);
      at = f + mark.size();
    }
    out.append(working, at);
    working = std::move(out);
  }
  auto v = json::parse(working, json::parse_options{.max_depth = kMaxDepth});
  if (v) return v;
  if (spec.allow_non_json) return json::value(std::string(stripped_if(spec.strip, body)));
  auto e = body_error("the body is not JSON: " + v.error().message, 0);
  e.expected = "a JSON value";
  if (v.error().code == errc::limit_exceeded) e.code = errc::limit_exceeded;
  return e;
}

// ---- scalars -------------------------------------------------------------------------------

// Python's int(): an optional sign, then digits with single '_' between them.
base::result<json::value> parse_int(const content_spec& spec, std::string_view body) {
  const std::string s(strip(stripped_if(spec.strip, body)));
  if (auto v = python_int(s)) return std::move(*v);
  auto e = body_error("the body is not an integer: \"" + s + "\"", 0);
  e.expected = "an integer";
  return e;
}

base::result<json::value> parse_float(const content_spec& spec, std::string_view body) {
  const std::string s(strip(stripped_if(spec.strip, body)));
  if (auto v = python_float(s); v && std::isfinite(*v)) return json::value(*v);
  auto e = body_error("the body is not a finite number: \"" + s + "\"", 0);
  e.expected = "a number";
  return e;
}

// Python's `text.lower() in ("true", "1")`: anything else is false.
json::value parse_bool(const content_spec& spec, std::string_view body) {
  std::string s(stripped_if(spec.strip, body));
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return json::value(s == "true" || s == "1");
}

// ---- xml-inline and kv-lines ---------------------------------------------------------------

base::result<json::value> parse_value(const content_spec& spec, std::string_view raw) {
  if (spec.value_parser) return parse_content(*spec.value_parser, raw);
  return json::value(std::string(raw));
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

namespace {

// Digits with single '_' between them (Python's numeric literals); out gets them without '_'.
bool digit_run(std::string_view s, std::string& out) {
  if (s.empty() || s.front() == '_' || s.back() == '_') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (s[i - 1] == '_') return false;
      continue;
    }
    if (s[i] < '0' || s[i] > '9') return false;
    out += s[i];
  }
  return true;
}

}  // namespace

std::optional<json::value> python_int(std::string_view text) {
  std::string_view s = strip(text);
  std::string digits;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    if (s[0] == '-') digits += '-';
    s.remove_prefix(1);
  }
  if (!digit_run(s, digits)) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, 10);
  if (errno == ERANGE) {
    if (digits[0] != '-') {
      const unsigned long long u = std::strtoull(digits.c_str(), &end, 10);
      if (errno != ERANGE) return json::value(u);
    }
    return std::nullopt;
  }
  return json::value(v);
}

std::optional<double> python_float(std::string_view text) {
  std::string_view s = strip(text);
  std::string clean;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    if (s[0] == '-') clean += '-';
    s.remove_prefix(1);
  }
  std::string lower(s);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "inf" || lower == "infinity") {
    return clean.empty() ? HUGE_VAL : -HUGE_VAL;
  }
  if (lower == "nan") return std::nan("");
  // mantissa: digits [. digits] | . digits; then an optional exponent
  const std::size_t e = lower.find('e');
  const std::string_view mantissa = std::string_view(lower).substr(0, e);
  const std::size_t dot = mantissa.find('.');
  const std::string_view whole = mantissa.substr(0, dot);
  const std::string_view frac =
      dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
  if (whole.empty() && frac.empty()) return std::nullopt;
  if (!whole.empty() && !digit_run(whole, clean)) return std::nullopt;
  if (dot != std::string_view::npos) {
    clean += '.';
    if (!frac.empty() && !digit_run(frac, clean)) return std::nullopt;
  }
  if (e != std::string::npos) {
    std::string_view exp = std::string_view(lower).substr(e + 1);
    clean += 'e';
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      clean += exp[0];
      exp.remove_prefix(1);
    }
    if (!digit_run(exp, clean)) return std::nullopt;
  }
  return std::strtod(clean.c_str(), nullptr);
}

base::result<json::value> parse_content(const content_spec& spec, std::string_view body) {
  switch (spec.kind) {
    case content_kind::text:
      return json::value(std::string(stripped_if(spec.strip, body)));
    case content_kind::integer:
      return parse_int(spec, body);
    case content_kind::floating:
      return parse_float(spec, body);
    case content_kind::boolean:
      return parse_bool(spec, body);
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

// Python methods callable on values from templates: str (split/rsplit/strip/startswith/
// endswith/replace/find/count/format/join/splitlines/case and is* predicates/...), dict
// (items/keys/values/get/copy) and list/tuple (index/count/copy); in compat mode, Python's
// in-place list methods. Each type has one table of name → function, read by method_of.
#include <algorithm>
#include <cstdio>

#include "jinja/casemap.h"
#include "jinja/interp.h"
#include "jinja/strutil.h"

namespace chatpeg::jinja::detail {
namespace {

const std::string* opt_str(interp& in, const value& v, std::string& holder, const char* fn) {
  if (v.is_none() || v.is_undefined()) return nullptr;
  if (!v.is_string()) in.fail(std::string(fn) + " arg must be None or str");
  holder = v.str();
  return &holder;
}

value str_list(std::vector<std::string> parts) {
  std::vector<value> out;
  out.reserve(parts.size());
  for (auto& p : parts) out.push_back(value::string(std::move(p)));
  return value::list(std::move(out));
}

// Code-point index ↔ byte offset helpers for find/index with start/end.
std::size_t cp_to_byte(std::string_view s, std::int64_t cp) {
  std::size_t i = 0;
  std::int64_t n = 0;
  while (i < s.size() && n < cp) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    ++n;
  }
  return i;
}

std::int64_t byte_to_cp(std::string_view s, std::size_t b) {
  return static_cast<std::int64_t>(utf8_length(s.substr(0, b)));
}

// Python str.format with auto/explicit indices, names, attribute/index access and a subset of
// the format-spec mini-language (fill, align, sign, width, precision, type).
std::string format_spec(interp& in, const value& v, std::string_view spec) {
  if (spec.empty()) return to_str(v);
  std::size_t i = 0;
  char fill = ' ', align = 0;
  if (spec.size() >= 2 && std::string_view("<>^=").find(spec[1]) != std::string_view::npos) {
    fill = spec[0];
    align = spec[1];
    i = 2;
  } else if (!spec.empty() && std::string_view("<>^=").find(spec[0]) != std::string_view::npos) {
    align = spec[0];
    i = 1;
  }
  char sign = 0;
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) sign = spec[i++];
  if (i < spec.size() && spec[i] == '0') {
    if (!align) {
      fill = '0';
      align = '=';
    }
    ++i;
  }
  std::size_t width = 0;
  while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) {
    width = width * 10 + static_cast<std::size_t>(spec[i++] - '0');
    if (width > in.options.limits.max_output_bytes) in.check_output_size(width);
  }
  char group = 0;
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) group = spec[i++];
  int prec = -1;
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    prec = 0;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) {
      prec = prec * 10 + (spec[i++] - '0');
      // Wider than any double's digits (and than the formatting buffer).
      if (prec > 400) in.fail("format precision too large", base::errc::limit_exceeded);
    }
  }
  char type = i < spec.size() ? spec[i] : 0;
  std::string body;
  char buf[512];
  bool numeric = v.is_number();
  if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' || type == 'G' ||
      type == '%') {
    if (!numeric)
      in.fail("Unknown format code '" + std::string(1, type) + "' for object of type '" +
              type_name(v) + "'");
    double d = v.as_float();
    if (type == '%') d *= 100;
    std::string f = "%" +
                    std::string(sign == '+'   ? "+"
                                : sign == ' ' ? " "
                                              : "") +
                    "." + std::to_string(prec < 0 ? 6 : prec) + (type == '%' ? 'f' : type);
    std::snprintf(buf, sizeof buf, f.c_str(), d);
    body = buf;
    if (type == '%') body += '%';
  } else if (type == 'd' || type == 'x' || type == 'X' || type == 'o' || type == 'b') {
    if (!v.is_int() && !v.is_bool())
      in.fail("Unknown format code '" + std::string(1, type) + "' for object of type '" +
              type_name(v) + "'");
    std::int64_t x = v.as_int();
    if (type == 'b') {
      std::uint64_t u = static_cast<std::uint64_t>(x < 0 ? -x : x);
      std::string bits;
      do {
        bits.insert(bits.begin(), static_cast<char>('0' + (u & 1)));
        u >>= 1;
      } while (u);
      body = (x < 0 ? "-" : (sign == '+' ? "+" : "")) + bits;
    } else {
      std::string f = "%" + std::string(sign == '+' ? "+" : sign == ' ' ? " " : "") + "ll" + type;
      std::snprintf(buf, sizeof buf, f.c_str(), static_cast<long long>(x));
      body = buf;
    }
  } else {
    if (numeric && prec >= 0 && v.is_float()) {
      std::snprintf(buf, sizeof buf, "%.*g", prec, v.as_float());
      body = buf;
    } else {
      body = to_str(v);
      if (prec >= 0 && v.is_string()) {
        body.resize(utf8_prefix_bytes(body, static_cast<std::size_t>(prec)));
      }
      if (sign == '+' && numeric && body[0] != '-') body = "+" + body;
    }
  }
  if (group && numeric) {
    std::size_t start = (!body.empty() && (body[0] == '-' || body[0] == '+')) ? 1 : 0;
    std::size_t end = start;
    while (end < body.size() && std::isdigit(static_cast<unsigned char>(body[end]))) ++end;
    std::string digits = body.substr(start, end - start), grouped;
    for (std::size_t k = 0; k < digits.size(); ++k) {
      if (k && (digits.size() - k) % 3 == 0) grouped += group;
      grouped += digits[k];
    }
    body = body.substr(0, start) + grouped + body.substr(end);
  }
  std::size_t len = utf8_length(body);
  if (len >= width) return body;
  std::size_t pad = width - len;
  if (!align) align = numeric ? '>' : '<';
  switch (align) {
    case '<':
      return body + std::string(pad, fill);
    case '>':
      return std::string(pad, fill) + body;
    case '^':
      return std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
    default: {
      std::size_t s = (!body.empty() && (body[0] == '-' || body[0] == '+')) ? 1 : 0;
      return body.substr(0, s) + std::string(pad, fill) + body.substr(s);
    }
  }
}

// str.format; for a Markup format string (`markup`), every field not itself Markup is
// HTML-escaped after formatting, as markupsafe's EscapeFormatter does.
std::string str_format(interp& in, std::string_view fmt, call_args& args, bool markup) {
  std::string out;
  std::size_t auto_idx = 0;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '{') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
        out += '{';
        ++i;
        continue;
      }
      std::size_t close = fmt.find('}', i);
      if (close == std::string_view::npos) in.fail("Single '{' encountered in format string");
      std::string_view field = fmt.substr(i + 1, close - i - 1);
      i = close;
      std::string_view spec;
      char conv = 0;
      if (auto colon = field.find(':'); colon != std::string_view::npos) {
        spec = field.substr(colon + 1);
        field = field.substr(0, colon);
      }
      if (auto bang = field.find('!'); bang != std::string_view::npos) {
        if (bang + 1 < field.size()) conv = field[bang + 1];
        field = field.substr(0, bang);
      }
      std::size_t p = 0;
      while (p < field.size() && field[p] != '.' && field[p] != '[') ++p;
      std::string_view head = field.substr(0, p);
      value v;
      if (head.empty()) {
        if (auto_idx >= args.positional.size())
          in.fail("Replacement index " + std::to_string(auto_idx) +
                  " out of range for positional args tuple");
        v = args.positional[auto_idx++];
      } else if (std::all_of(head.begin(), head.end(),
                             [](char ch) { return ch >= '0' && ch <= '9'; })) {
        std::size_t k =
            head.size() > 9 ? SIZE_MAX : static_cast<std::size_t>(std::stoul(std::string(head)));
        if (k >= args.positional.size())
          in.fail("Replacement index " + std::to_string(k) +
                  " out of range for positional args tuple");
        v = args.positional[k];
      } else {
        bool found = false;
        for (auto& kw : args.keyword)
          if (kw.first == head) {
            v = kw.second;
            found = true;
          }
        if (!found) in.fail("'" + std::string(head) + "'");
      }
      while (p < field.size()) {
        if (field[p] == '.') {
          std::size_t q = p + 1;
          while (q < field.size() && field[q] != '.' && field[q] != '[') ++q;
          v = getattr_value(in, v, field.substr(p + 1, q - p - 1));
          p = q;
        } else {
          std::size_t q = field.find(']', p);
          if (q == std::string_view::npos) in.fail("Missing ']' in format string");
          std::string_view key = field.substr(p + 1, q - p - 1);
          bool digits = !key.empty() && std::all_of(key.begin(), key.end(),
                                                    [](char ch) { return ch >= '0' && ch <= '9'; });
          if (digits && key.size() > 18) digits = false;  // Python: a huge index misses anyway
          v = getitem_value(in, v,
                            digits ? value::integer(std::stoll(std::string(key)))
                                   : value::string(std::string(key)));
          p = q + 1;
        }
      }
      if (conv == 'r' || conv == 'a')
        v = value::string(to_repr(v));
      else if (conv == 's')
        v = value::string(to_str(v));
      if (markup && !v.is_markup())
        out += html_escape(format_spec(in, v, spec));
      else
        out += format_spec(in, v, spec);
      in.check_output_size(out.size());
    } else if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}')
        ++i;
      else
        in.fail("Single '}' encountered in format string");
      out += '}';
    } else {
      out += c;
    }
  }
  return out;
}

bool all_cps(std::string_view s, bool (*pred)(char32_t)) {
  auto cps = decode(s);
  if (cps.empty()) return false;
  for (char32_t c : cps)
    if (!pred(c)) return false;
  return true;
}

bool has_prop(char32_t c, unsigned props) {
  return (case_props(c) & props) != 0;
}
bool is_alpha_cp(char32_t c) {
  return has_prop(c, prop_alpha);
}
bool is_decimal_cp(char32_t c) {
  return has_prop(c, prop_decimal);
}
bool is_digit_cp(char32_t c) {
  return has_prop(c, prop_digit);
}
bool is_numeric_cp(char32_t c) {
  return has_prop(c, prop_numeric);
}
bool is_alnum_cp(char32_t c) {
  return has_prop(c, prop_alpha | prop_decimal | prop_digit | prop_numeric);
}

// ---- str ----

template <std::string (*convert)(std::string_view)>
value str_convert(interp&, const value& self, std::string_view, call_args&) {
  return value::string(convert(self.str()));
}

// isdigit, isalpha, ...: every code point has the property (and there is one).
template <bool (*pred)(char32_t)>
value str_all(interp&, const value& self, std::string_view, call_args&) {
  return value::boolean(all_cps(self.str(), pred));
}

value str_strip(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  std::string holder;
  const std::string* chars = opt_str(in, r.get(0, "chars", value::none()), holder, n.data());
  r.done(1);
  return value::string(py_strip(s, n != "rstrip", n != "lstrip", chars));
}

value str_split(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  std::string holder;
  const std::string* sep = opt_str(in, r.get(0, "sep", value::none()), holder, n.data());
  if (sep && sep->empty()) in.fail("empty separator");
  std::int64_t maxsplit = r.get(1, "maxsplit", value::integer(-1)).as_int();
  r.done(2);
  return str_list(n == "split" ? py_split(s, sep, maxsplit) : py_rsplit(s, sep, maxsplit));
}

value str_splitlines(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  bool keep = r.get(0, "keepends", value::boolean(false)).truthy();
  return str_list(py_splitlines(s, keep));
}

// The optional start and end arguments (positions 1 and 2) of find, count, startswith...:
// code-point indices clamped as Python clamps slice indices, with the string's length.
struct start_end {
  std::int64_t len, b, e;
};
start_end start_end_args(arg_reader& r, std::string_view s) {
  std::int64_t len = static_cast<std::int64_t>(utf8_length(s));
  value st = r.get(1, "start", value::none());
  value en = r.get(2, "end", value::none());
  std::int64_t b = st.is_none() ? 0 : st.as_int();
  std::int64_t e = en.is_none() ? len : en.as_int();
  if (b < 0) b = std::max<std::int64_t>(0, b + len);
  if (e < 0) e = std::max<std::int64_t>(0, e + len);
  return {len, b, std::min(e, len)};
}

value str_starts_ends(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  value what = r.get(0, "prefix");
  auto [len, b, e] = start_end_args(r, s);
  std::string_view sub;
  if (b <= e) {
    std::size_t bb = cp_to_byte(s, b), eb = cp_to_byte(s, e);
    sub = std::string_view(s).substr(bb, eb - bb);
  } else if (b > len) {
    return value::boolean(false);
  }
  std::vector<value> cands = what.is_tuple() ? what.items() : std::vector<value>{what};
  for (const auto& c : cands) {
    if (!c.is_string())
      in.fail(std::string(n) + " first arg must be str or a tuple of str, not " + type_name(c));
    const std::string& x = c.str();
    if (n == "startswith" ? sub.substr(0, x.size()) == x
                          : (sub.size() >= x.size() && sub.substr(sub.size() - x.size()) == x))
      return value::boolean(true);
  }
  return value::boolean(false);
}

value str_replace(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  value a = r.get(0, "old"), b = r.get(1, "new");
  if (!a.is_string() || !b.is_string()) in.fail("replace() argument must be str");
  std::int64_t count = r.get(2, "count", value::integer(-1)).as_int();
  in.check_output_size(py_replace_size(s, a.str(), b.str(), count));
  std::string out = py_replace(s, a.str(), b.str(), count);
  return value::string(std::move(out));
}

value str_find(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  value sub = r.get(0, "sub");
  if (!sub.is_string()) in.fail("must be str, not " + type_name(sub));
  auto [len, b, e] = start_end_args(r, s);
  std::size_t bb = cp_to_byte(s, b), eb = cp_to_byte(s, std::max(b, e));
  std::string_view hay = std::string_view(s).substr(bb, eb - bb);
  const std::string& needle = sub.str();
  if (n == "count") {
    if (b > len) return value::integer(0);
    if (needle.empty()) return value::integer(static_cast<std::int64_t>(utf8_length(hay)) + 1);
    std::int64_t c = 0;
    for (std::size_t p = hay.find(needle); p != std::string_view::npos;
         p = hay.find(needle, p + needle.size()))
      ++c;
    return value::integer(c);
  }
  std::size_t p = (n == "find" || n == "index") ? hay.find(needle) : hay.rfind(needle);
  if (b > len) p = std::string_view::npos;
  if (p == std::string_view::npos) {
    if (n == "index" || n == "rindex") in.fail("substring not found");
    return value::integer(-1);
  }
  return value::integer(byte_to_cp(s, bb + p));
}

value str_join(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  std::string out;
  bool first = true;
  for (const auto& item : iterate(in, r.get(0, "iterable"))) {
    if (!item.is_string())
      in.fail("sequence item: expected str instance, " + type_name(item) + " found");
    if (!first) out += s;
    first = false;
    out += item.str();
    in.check_output_size(out.size());
  }
  return value::string(std::move(out));
}

value str_is_cased(interp&, const value& self, std::string_view n, call_args&) {
  const std::string& s = self.str();
  return value::boolean(py_isupper(s, n == "isupper"));
}

value str_istitle(interp&, const value& self, std::string_view, call_args&) {
  const std::string& s = self.str();
  return value::boolean(py_istitle(s));
}

value str_partition(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  value sep = r.get(0, "sep");
  if (!sep.is_string() || sep.str().empty()) in.fail("empty separator");
  std::size_t p = n == "partition" ? s.find(sep.str()) : s.rfind(sep.str());
  if (p == std::string::npos) {
    if (n == "partition")
      return value::tuple({value::string(s), value::string(""), value::string("")});
    return value::tuple({value::string(""), value::string(""), value::string(s)});
  }
  return value::tuple(
      {value::string(s.substr(0, p)), sep, value::string(s.substr(p + sep.str().size()))});
}

value str_pad(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  std::int64_t width = r.get(0, "width").as_int();
  std::string fill = "0";
  if (n != "zfill") {
    value f = r.get(1, "fillchar", value::string(" "));
    if (!f.is_string())
      in.fail("The fill character must be a unicode character, not " + type_name(f));
    if (utf8_length(f.str()) != 1) in.fail("The fill character must be exactly one character long");
    fill = f.str();
  }
  auto len = static_cast<std::int64_t>(utf8_length(s));
  if (width <= len) return self;
  in.check_output_size(
      add_sat(s.size(), mul_sat(static_cast<std::uint64_t>(width - len), fill.size())));
  auto pad = static_cast<std::size_t>(width - len);
  auto rep = [&](std::size_t k) {
    std::string o;
    for (std::size_t i = 0; i < k; ++i) o += fill;
    return o;
  };
  if (n == "ljust") return value::string(s + rep(pad));
  if (n == "rjust") return value::string(rep(pad) + s);
  if (n == "zfill") {
    if (!s.empty() && (s[0] == '-' || s[0] == '+'))
      return value::string(s.substr(0, 1) + rep(pad) + s.substr(1));
    return value::string(rep(pad) + s);
  }
  std::size_t left = pad / 2 + (pad & static_cast<std::size_t>(width) & 1);
  return value::string(rep(left) + s + rep(pad - left));
}

value str_remove_affix(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  const std::string& s = self.str();
  std::string x = to_str(r.get(0, "prefix"));
  if (n == "removeprefix" && s.compare(0, x.size(), x) == 0)
    return value::string(s.substr(x.size()));
  if (n == "removesuffix" && !x.empty() && s.size() >= x.size() &&
      s.compare(s.size() - x.size(), x.size(), x) == 0)
    return value::string(s.substr(0, s.size() - x.size()));
  return self;
}

value str_format_method(interp& in, const value& self, std::string_view, call_args& args) {
  return value::string(str_format(in, self.str(), args, false));
}

// ---- Markup (markupsafe) ----

std::string escaped(const value& v) {
  if (v.is_markup()) return v.str();
  return html_escape(v.is_string() ? v.str() : to_str(v));
}

// format and % escape their arguments.
value markup_format(interp& in, const value& self, std::string_view, call_args& args) {
  return value::markup(str_format(in, self.str(), args, true));
}

// join escapes the items.
value markup_join(interp& in, const value& self, std::string_view, call_args& args) {
  arg_reader r{in, args, "join"};
  const std::string& s = self.str();
  std::string out;
  bool first = true;
  for (const auto& item : iterate(in, r.get(0, "iterable"))) {
    if (!first) out += s;
    first = false;
    out += escaped(item);
    in.check_output_size(out.size());
  }
  return value::markup(std::move(out));
}

// The str methods markupsafe wraps: their str arguments are escaped and their results are
// Markup (lists of Markup for split & co).
value markup_wrapped(interp& in, const value& self, std::string_view n, method_fn fn,
                     call_args& args) {
  for (auto& a : args.positional)
    if (a.is_string() && !a.is_markup()) a = value::string(html_escape(a.str()));
  for (auto& k : args.keyword)
    if (k.second.is_string() && !k.second.is_markup())
      k.second = value::string(html_escape(k.second.str()));
  value v = fn(in, self, n, args);
  if (v.is_string()) return value::markup(v.str());
  if (v.is_sequence()) {
    std::vector<value> items;
    for (const auto& x : v.items()) items.push_back(x.is_string() ? value::markup(x.str()) : x);
    return v.is_tuple() ? value::tuple(std::move(items)) : value::list(std::move(items));
  }
  return v;
}

// ---- dict ----

value dict_items(interp&, const value& self, std::string_view, call_args&) {
  std::vector<value> out;
  out.reserve(self.dict().size());
  for (const auto& e : self.dict().entries) out.push_back(value::tuple({e.first, e.second}));
  return value::dict_view(std::move(out), value::view::items);
}

value dict_keys(interp&, const value& self, std::string_view, call_args&) {
  std::vector<value> out;
  for (const auto& e : self.dict().entries) out.push_back(e.first);
  return value::dict_view(std::move(out), value::view::keys);
}

value dict_values(interp&, const value& self, std::string_view, call_args&) {
  std::vector<value> out;
  for (const auto& e : self.dict().entries) out.push_back(e.second);
  return value::dict_view(std::move(out), value::view::values);
}

value dict_get(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  value key = r.get(0, "key");
  value def = r.get(1, "default", value::none());
  r.done(2);
  if (const value* v = self.dict().find(key)) return *v;
  return def;
}

value dict_copy(interp&, const value& self, std::string_view, call_args&) {
  return value::dict(std::make_shared<dict_obj>(self.dict()));
}

// ---- list and tuple ----

value list_index(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  value x = r.get(0, "value");
  const auto& items = self.items();
  for (std::size_t i = 0; i < items.size(); ++i)
    if (equals(items[i], x)) return value::integer(static_cast<std::int64_t>(i));
  in.fail(to_repr(x) + " is not in list");
}

value list_count(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  value x = r.get(0, "value");
  std::int64_t c = 0;
  for (const auto& v : self.items())
    if (equals(v, x)) ++c;
  return value::integer(c);
}

value list_copy(interp&, const value& self, std::string_view, call_args&) {
  return value::list(self.items());
}

// Whether `v` is or contains the object `self` (a list appended into itself would make
// printing and serializing recurse forever).
bool refers_to(const value& v, const object* self) {
  if (v.ptr().get() == self) return true;
  if (v.is_sequence())
    return std::any_of(v.items().begin(), v.items().end(),
                       [&](const value& x) { return refers_to(x, self); });
  if (v.is_dict() || v.is_ns())
    return std::any_of(v.dict().entries.begin(), v.dict().entries.end(),
                       [&](const auto& e) { return refers_to(e.second, self); });
  return false;
}

// Compat mode's mutable sandbox: Python's in-place list methods. Lists stay bounded (at
// most limits.max_range items, no cycles).
struct list_edit {
  interp& in;
  list_obj& l;
  std::vector<value>& items;
  arg_reader& r;

  std::int64_t size() const { return static_cast<std::int64_t>(items.size()); }
  void check_growth(std::size_t more, const std::vector<value>& added) const {
    if (items.size() + more > in.options.limits.max_range)
      in.fail("list length limit (" + std::to_string(in.options.limits.max_range) + ") exceeded",
              base::errc::limit_exceeded);
    for (const auto& x : added)
      if (refers_to(x, &l)) in.fail("a list cannot contain itself");
  }
  std::int64_t index_arg(const value& v) const {
    if (!v.is_int() && !v.is_bool())
      in.fail("'" + type_name(v) + "' object cannot be interpreted as an integer");
    return v.as_int();
  }
};

// Runs one in-place edit; the list learns it changed however the edit ends.
template <value (*edit)(list_edit&)>
value list_mutation(interp& in, const value& self, std::string_view n, call_args& args) {
  arg_reader r{in, args, n.data()};
  list_obj& l = self.mutable_list();
  struct touch {
    list_obj& l;
    ~touch() { l.touched(); }
  } t{l};
  list_edit e{in, l, l.mutable_items(), r};
  return edit(e);
}

value list_append(list_edit& e) {
  value x = e.r.get(0, "object");
  e.r.done(1);
  e.check_growth(1, {x});
  e.items.push_back(std::move(x));
  return value::none();
}

value list_extend(list_edit& e) {
  std::vector<value> more = iterate(e.in, e.r.get(0, "iterable"));
  e.r.done(1);
  e.check_growth(more.size(), more);
  e.items.insert(e.items.end(), more.begin(), more.end());
  return value::none();
}

value list_insert(list_edit& e) {
  std::int64_t i = e.index_arg(e.r.get(0, "index"));
  value x = e.r.get(1, "object");
  e.r.done(2);
  e.check_growth(1, {x});
  if (i < 0) i = std::max<std::int64_t>(0, i + e.size());
  i = std::min(i, e.size());
  e.items.insert(e.items.begin() + i, std::move(x));
  return value::none();
}

value list_pop(list_edit& e) {
  std::int64_t i = e.index_arg(e.r.get(0, "index", value::integer(-1)));
  e.r.done(1);
  if (e.items.empty()) e.in.fail("pop from empty list");
  if (i < 0) i += e.size();
  if (i < 0 || i >= e.size()) e.in.fail("pop index out of range");
  value x = e.items[static_cast<std::size_t>(i)];
  e.items.erase(e.items.begin() + i);
  return x;
}

value list_remove(list_edit& e) {
  value x = e.r.get(0, "value");
  e.r.done(1);
  for (auto it = e.items.begin(); it != e.items.end(); ++it)
    if (equals(*it, x)) {
      e.items.erase(it);
      return value::none();
    }
  e.in.fail("list.remove(x): x not in list");
}

value list_clear(list_edit& e) {
  e.r.done(0);
  e.items.clear();
  return value::none();
}

value list_reverse(list_edit& e) {
  e.r.done(0);
  std::reverse(e.items.begin(), e.items.end());
  return value::none();
}

// ---- the tables ----

// On a Markup string, a str method runs unchanged, is wrapped (`markup_wraps`: arguments
// escaped, Markup returned) or is replaced (`on_markup`).
struct str_method_row {
  std::string_view name;
  method_fn fn;
  bool markup_wraps = false;
  method_fn on_markup = nullptr;
};

const str_method_row str_methods[] = {
    {"upper", str_convert<py_upper>, true},
    {"lower", str_convert<py_lower>, true},
    {"casefold", str_convert<py_casefold>},
    {"title", str_convert<py_title>, true},
    {"capitalize", str_convert<py_capitalize>, true},
    {"swapcase", str_convert<py_swapcase>, true},
    {"strip", str_strip, true},
    {"lstrip", str_strip, true},
    {"rstrip", str_strip, true},
    {"split", str_split, true},
    {"rsplit", str_split, true},
    {"splitlines", str_splitlines, true},
    {"startswith", str_starts_ends},
    {"endswith", str_starts_ends},
    {"replace", str_replace, true},
    {"find", str_find},
    {"rfind", str_find},
    {"index", str_find},
    {"rindex", str_find},
    {"count", str_find},
    {"join", str_join, false, markup_join},
    {"format", str_format_method, false, markup_format},
    {"isdigit", str_all<is_digit_cp>},
    {"isdecimal", str_all<is_decimal_cp>},
    {"isnumeric", str_all<is_numeric_cp>},
    {"isalpha", str_all<is_alpha_cp>},
    {"isalnum", str_all<is_alnum_cp>},
    {"isspace", str_all<py_is_space>},
    {"isupper", str_is_cased},
    {"islower", str_is_cased},
    {"istitle", str_istitle},
    {"partition", str_partition, true},
    {"rpartition", str_partition, true},
    {"center", str_pad, true},
    {"ljust", str_pad, true},
    {"rjust", str_pad, true},
    {"zfill", str_pad, true},
    {"removeprefix", str_remove_affix},
    {"removesuffix", str_remove_affix},
};

struct dict_method_row {
  std::string_view name;
  method_fn fn;
};

const dict_method_row dict_methods[] = {
    {"items", dict_items}, {"keys", dict_keys}, {"values", dict_values},
    {"get", dict_get},     {"copy", dict_copy},
};

// Tuples have the methods marked `on_tuple`; the in-place ones (`mutates`) exist on lists in
// compat mode only, and never on dict views.
struct list_method_row {
  std::string_view name;
  method_fn fn;
  bool on_tuple = false;
  bool mutates = false;
};

const list_method_row list_methods[] = {
    {"index", list_index, true},
    {"count", list_count, true},
    {"copy", list_copy},
    {"append", list_mutation<list_append>, false, true},
    {"extend", list_mutation<list_extend>, false, true},
    {"insert", list_mutation<list_insert>, false, true},
    {"pop", list_mutation<list_pop>, false, true},
    {"remove", list_mutation<list_remove>, false, true},
    {"clear", list_mutation<list_clear>, false, true},
    {"reverse", list_mutation<list_reverse>, false, true},
};

struct bound_method final : callable_obj {
  value self;
  std::string name;
  method_fn fn = nullptr;
  bool wrap_markup = false;  // a markupsafe-wrapped method on Markup
  std::string repr() const override {
    return "<built-in method " + name + " of " + type_name(self) + " object>";
  }
  value call(interp& in, call_args& args) const override {
    if (wrap_markup) return markup_wrapped(in, self, name, fn, args);
    return fn(in, self, name, args);
  }
};

}  // namespace

value method_of(interp& in, const value& obj, std::string_view n) {
  method_fn fn = nullptr;
  bool wrapped = false;
  switch (obj.kind()) {
    case vkind::string:
      if (const str_method_row* row = find_row(str_methods, n)) {
        fn = obj.is_markup() && row->on_markup ? row->on_markup : row->fn;
        wrapped = obj.is_markup() && row->markup_wraps;
      }
      break;
    case vkind::dict:
      if (const dict_method_row* row = find_row(dict_methods, n)) fn = row->fn;
      break;
    case vkind::list:
    case vkind::tuple:
      if (const list_method_row* row = find_row(list_methods, n)) {
        bool ok = obj.is_list()
                      ? !row->mutates || (in.options.compat && obj.view_kind() == value::view::none)
                      : row->on_tuple;
        if (ok) fn = row->fn;
      }
      break;
    default:
      break;
  }
  if (!fn) return value();
  auto m = std::make_shared<bound_method>();
  m->self = obj;
  m->name = std::string(n);
  m->fn = fn;
  m->wrap_markup = wrapped;
  return value::callable(m);
}

}  // namespace chatpeg::jinja::detail

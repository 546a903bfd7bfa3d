// Jinja2's filters that format values for HTML and URLs, byte-identical to Jinja2 3.1:
// filesizeformat (Python float formatting; exact int/float comparisons with 10**24, 10**27),
// urlencode (urllib.parse.quote: UTF-8 bytes, '/' kept for a string, query pairs with '+'
// for spaces) and xmlattr (markupsafe escaping, None/Undefined values skipped, keys with
// whitespace, '/', '>' or '=' refused). Each output is checked against the output limit
// before it is built.
#include <cmath>
#include <cstdio>

#include "jinja/interp.h"
#include "jinja/strutil.h"

namespace chatpeg::jinja::detail {
namespace {

// Python's float(v) for filesizeformat.
double py_float(interp& in, const value& v) {
  if (v.is_undefined()) in.fail_undefined(v);
  if (v.is_number()) return v.as_float();
  if (v.is_string()) {
    if (auto f = py_parse_float(v.str())) return *f;
    in.fail("could not convert string to float: " + to_repr(value::string(v.str())));
  }
  in.fail("float() argument must be a string or a real number, not '" + type_name(v) + "'");
}

// f"{x:.1f}" (printf rounds the exact binary value as Python does; nan has no sign there).
std::string fixed1(double x) {
  if (std::isnan(x)) return "nan";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

// Python's `d < base ** k` compares the float with the exact integer; 1000**8 and 1000**9
// are not doubles (the nearest double of 10**24 is below it, that of 10**27 above it).
bool below_power(double d, bool binary, int k) {
  static const double decimal[] = {1, 1e3, 1e6, 1e9, 1e12, 1e15, 1e18, 1e21, 1e24, 1e27};
  if (binary) return d < std::ldexp(1.0, 10 * k);
  if (k == 8) return d <= 1e24;
  return d < decimal[k];
}

// urllib.parse.quote_from_bytes(str(v).encode(), safe): unreserved bytes kept, the rest %XX;
// for a query string ('/' not safe) "%20" then becomes "+".
void url_quote(interp& in, std::string& out, const value& v, bool for_qs) {
  static const char hex[] = "0123456789ABCDEF";
  std::string s = to_str(v);
  in.check_output_size(add_sat(out.size(), mul_sat(s.size(), 3)));
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-' || c == '~' || (c == '/' && !for_qs);
    if (safe) {
      out += static_cast<char>(c);
    } else if (c == ' ' && for_qs) {
      out += '+';
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
}

bool bad_attr_key_char(char c) {  // re.compile(r"[\s/>=]", flags=re.ASCII)
  return c == ' ' || (c >= '\t' && c <= '\r') || c == '/' || c == '>' || c == '=';
}

}  // namespace

value filter_filesizeformat(interp& in, std::string_view, const value& v, call_args& args) {
  arg_reader r{in, args, "do_filesizeformat"};
  bool binary = r.get(0, "binary", value::boolean(false)).truthy();
  r.done(1);
  static const char* const decimal[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  static const char* const binary_names[] = {"KiB", "MiB", "GiB", "TiB",
                                             "PiB", "EiB", "ZiB", "YiB"};
  const double bytes = py_float(in, v);
  const double base = binary ? 1024 : 1000;
  if (bytes == 1) return value::string("1 Byte");
  if (bytes < base) {
    if (std::isinf(bytes)) in.fail("cannot convert float infinity to integer");
    char buf[512];  // int(bytes): the exact integer (%.0f of an integral double is exact)
    std::snprintf(buf, sizeof buf, "%.0f", std::trunc(bytes) + 0.0);
    return value::string(std::string(buf) + " Bytes");
  }
  int i = 0;  // prefix i stands for base ** (i + 2); past the last one Python keeps it
  while (i < 7 && !below_power(bytes, binary, i + 2)) ++i;
  static const double decimal_units[] = {1e6, 1e9, 1e12, 1e15, 1e18, 1e21, 1e24, 1e27};
  const double unit = binary ? std::ldexp(1.0, 10 * (i + 2)) : decimal_units[i];
  return value::string(fixed1(base * bytes / unit) + " " + (binary ? binary_names : decimal)[i]);
}

value filter_urlencode(interp& in, std::string_view, const value& v, call_args& args) {
  arg_reader r{in, args, "do_urlencode"};
  r.done(0);
  std::string out;
  if (v.is_string() || v.is_none() || v.is_bool() || v.is_number() || v.is_callable() ||
      v.is_ns()) {
    url_quote(in, out, v, false);
    return value::string(std::move(out));
  }
  std::vector<value> items;
  if (v.is_dict()) {
    for (const auto& e : v.dict().entries) items.push_back(value::tuple({e.first, e.second}));
  } else {
    items = iterate(in, v);
  }
  bool first = true;
  for (const value& item : items) {
    auto kv = iterate(in, item);
    if (kv.size() > 2) in.fail("too many values to unpack (expected 2)");
    if (kv.size() < 2)
      in.fail("not enough values to unpack (expected 2, got " + std::to_string(kv.size()) + ")");
    if (!first) out += '&';
    first = false;
    url_quote(in, out, kv[0], true);
    out += '=';
    url_quote(in, out, kv[1], true);
  }
  return value::string(std::move(out));
}

value filter_xmlattr(interp& in, std::string_view, const value& v, call_args& args) {
  arg_reader r{in, args, "do_xmlattr"};
  bool autospace = r.get(0, "autospace", value::boolean(true)).truthy();
  r.done(1);
  if (v.is_undefined()) in.fail_undefined(v);
  if (!v.is_dict()) in.fail("'" + type_name(v) + "' object has no attribute 'items'");
  std::string out;
  for (const auto& [key, val] : v.dict().entries) {
    if (val.is_none() || val.is_undefined()) continue;
    if (!key.is_string())
      in.fail("expected string or bytes-like object, got '" + type_name(key) + "'");
    for (char c : key.str())
      if (bad_attr_key_char(c))
        in.fail("Invalid character in attribute name: " + to_repr(value::string(key.str())));
    std::string text = val.is_markup() ? val.str() : html_escape(to_str(val));
    std::string k = key.is_markup() ? key.str() : html_escape(key.str());
    in.check_output_size(add_sat(out.size(), add_sat(text.size(), k.size() + 4)));
    if (!out.empty() || autospace) out += ' ';
    out += k;
    out += "=\"";
    out += text;
    out += '"';
  }
  return value::string(std::move(out));
}

}  // namespace chatpeg::jinja::detail

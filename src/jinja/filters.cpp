// Built-in filters and tests with Jinja2 3.1 semantics (as used by real chat templates):
// tojson (transformers' json.dumps flavour), length/count, string, trim, items, default,
// join, list, safe, select/reject(attr), map, first/last, case filters, replace, round,
// int/float, abs, unique, sort, dictsort, batch, indent, wordcount, center, truncate,
// escape, sum/min/max, reverse, attr, format, pprint; and the `is` tests. Each list is one
// table of name → function; the name queries (has_filter, has_test) read the same tables.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "jinja/interp.h"
#include "jinja/strutil.h"
#include "jinja/textwrap.h"

namespace chatpeg::jinja::detail {
namespace {

// Attribute path lookup of Jinja's make_attrgetter: "a.b.0" → item lookups.
value attr_path(interp& in, const value& item, const value& attribute) {
  if (!attribute.is_string()) return getitem_value(in, item, attribute);
  value cur = item;
  std::string_view path = attribute.str();
  std::size_t pos = 0;
  while (true) {
    std::size_t dot = path.find('.', pos);
    std::string_view part = path.substr(pos, dot == std::string_view::npos ? dot : dot - pos);
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                                [](char c) { return c >= '0' && c <= '9'; });
    if (numeric)
      cur = getitem_value(in, cur,
                          value::integer(std::strtoll(std::string(part).c_str(), nullptr, 10)));
    else
      cur = getitem_value(in, cur, value::string(std::string(part)));
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
  }
  return cur;
}

value lower_key(const value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return value::string(py_lower(v.str()));
  return v;
}

double py_round(double x, std::int64_t ndigits) {
  if (!std::isfinite(x)) return x;
  if (ndigits == 0) return std::nearbyint(x);
  if (ndigits > 300 || ndigits < -300) return ndigits > 0 ? x : 0.0 * x;
  if (ndigits > 0) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(ndigits), x);
    return std::strtod(buf, nullptr);
  }
  double p = std::pow(10.0, static_cast<double>(-ndigits));
  return std::nearbyint(x / p) * p;
}

std::optional<std::int64_t> parse_py_int(std::string s, int base) {
  std::string t;
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  for (std::size_t i = b; i < e; ++i) {
    if (s[i] == '_') {
      if (i == b || i + 1 >= e || s[i - 1] == '_') return std::nullopt;
      continue;
    }
    t += s[i];
  }
  if (t.empty()) return std::nullopt;
  std::size_t start = (t[0] == '+' || t[0] == '-') ? 1 : 0;
  if (base == 16 && t.size() > start + 2 && t[start] == '0' &&
      (t[start + 1] == 'x' || t[start + 1] == 'X'))
    t.erase(start, 2);
  if (t.size() == start) return std::nullopt;
  for (std::size_t i = start; i < t.size(); ++i) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(t[i])));
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : (c >= 'a' && c <= 'z')                    ? c - 'a' + 10
                                                        : 99;
    if (d >= base) return std::nullopt;
  }
  errno = 0;
  long long v = std::strtoll(t.c_str(), nullptr, base);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

const std::string kComma = ",";

std::vector<value> sorted_values(interp& in, std::vector<value> items, bool reverse,
                                 bool case_sensitive, const value& attribute) {
  std::vector<std::pair<value, std::size_t>> keyed;
  keyed.reserve(items.size());
  // "a,b.c": Jinja's make_multi_attrgetter, the key is the list of those attributes.
  std::vector<value> parts;
  if (attribute.is_string() && attribute.str().find(',') != std::string::npos)
    for (const auto& p : py_split(attribute.str(), &kComma, -1)) parts.push_back(value::string(p));
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!parts.empty()) {
      std::vector<value> key;
      for (const auto& p : parts)
        key.push_back(lower_key(attr_path(in, items[i], p), case_sensitive));
      keyed.emplace_back(value::list(std::move(key)), i);
      continue;
    }
    value k = attribute.is_undefined() || attribute.is_none() ? items[i]
                                                              : attr_path(in, items[i], attribute);
    keyed.emplace_back(lower_key(k, case_sensitive), i);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    in.work(1);
    int c = order(in, a.first, b.first, "<");
    return reverse ? c > 0 : c < 0;
  });
  std::vector<value> out;
  out.reserve(items.size());
  for (auto& k : keyed) out.push_back(items[k.second]);
  return out;
}

std::string soft_str(const value& v) {
  return to_str(v);
}

std::string squote_type(const value& v) {
  std::string r = "'";
  r += type_name(v);
  r += '\'';
  return r;
}

std::vector<value> select_impl(interp& in, const value& seq, call_args& args, bool by_attr,
                               bool expect) {
  std::vector<value> out;
  std::size_t argi = 0;
  value attribute;
  if (by_attr) {
    if (args.positional.empty()) in.fail("Missing parameter for attribute name");
    attribute = args.positional[argi++];
  }
  std::string test_name;
  call_args test_args;
  bool has_test = argi < args.positional.size();
  if (has_test) {
    test_name = to_str(args.positional[argi++]);
    for (; argi < args.positional.size(); ++argi)
      test_args.positional.push_back(args.positional[argi]);
    test_args.keyword = args.keyword;
  }
  if (!seq.truthy()) return out;
  for (const auto& item : iterate(in, seq)) {
    value v = by_attr ? attr_path(in, item, attribute) : item;
    bool r;
    if (has_test) {
      call_args a = test_args;
      r = apply_test(in, test_name, v, a);
    } else {
      r = v.truthy();
    }
    if (r == expect) out.push_back(item);
  }
  return out;
}

// `name in env.filters` / `env.tests` with a non-str name: False, or TypeError when unhashable.
void name_lookup_key(interp& in, const value& v) {
  if (v.is_list() || v.is_dict() || v.is_ns() || v.is_generator())
    in.fail("unhashable type: '" + type_name(v) + "'");
}

// ---- filters ----

value filter_tojson(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  value indent = r.get(0, "indent", value::none());
  value ensure_ascii = r.get(99, "ensure_ascii", value::boolean(false));
  value separators = r.get(99, "separators", value::none());
  value sort_keys = r.get(99, "sort_keys", value::boolean(false));
  r.done(1);
  return value::string(
      tojson(in, v, indent, separators, sort_keys.truthy(), ensure_ascii.truthy()));
}

value filter_length(interp& in, std::string_view, const value& v, call_args&) {
  return value::integer(length_of(in, v));
}

value filter_string(interp&, std::string_view, const value& v, call_args&) {
  return value::string(soft_str(v));
}

value filter_safe(interp&, std::string_view, const value& v, call_args&) {
  return value::markup(soft_str(v));
}

value filter_trim(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  value chars = r.get(0, "chars", value::none());
  std::string cs = chars.is_none() || chars.is_undefined() ? std::string() : to_str(chars);
  return value::string(
      py_strip(soft_str(v), true, true, chars.is_none() || chars.is_undefined() ? nullptr : &cs));
}

value filter_items(interp& in, std::string_view, const value& v, call_args&) {
  if (v.is_undefined()) return value::generator({});
  if (!v.is_dict()) in.fail("Can only get item pairs from a mapping.");
  std::vector<value> out;
  for (const auto& e : v.dict().entries) out.push_back(value::tuple({e.first, e.second}));
  return value::generator(std::move(out));
}

value filter_default(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  value def = r.get(0, "default_value", value::string(""));
  bool boolean = r.get(1, "boolean", value::boolean(false)).truthy();
  if (v.is_undefined() || (boolean && !v.truthy())) return def;
  return v;
}

value filter_join(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  std::string sep = to_str(r.get(0, "d", value::string("")));
  value attribute = r.get(1, "attribute", value::none());
  std::string out;
  bool first = true;
  for (const auto& item : iterate(in, v)) {
    if (!first) out += sep;
    first = false;
    append_str(out, attribute.is_none() ? item : attr_path(in, item, attribute));
    in.check_output_size(out.size());
  }
  return value::string(std::move(out));
}

value filter_list(interp& in, std::string_view, const value& v, call_args&) {
  return value::list(iterate(in, v));
}

// select, reject, selectattr, rejectattr.
template <bool by_attr, bool expect>
value filter_select(interp& in, std::string_view, const value& v, call_args& args) {
  return value::generator(select_impl(in, v, args, by_attr, expect));
}

value filter_map(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  std::vector<value> out;
  if (!v.truthy()) return value::generator({});
  value attribute = r.get(99, "attribute", value());
  if (!attribute.is_undefined()) {
    value def = r.get(99, "default", value());
    for (const auto& item : iterate(in, v)) {
      value x = attr_path(in, item, attribute);
      out.push_back(x.is_undefined() && !def.is_undefined() ? def : x);
    }
    return value::generator(std::move(out));
  }
  if (args.positional.empty()) in.fail("map requires a filter argument");
  std::string fname = to_str(args.positional[0]);
  call_args fargs;
  fargs.positional.assign(args.positional.begin() + 1, args.positional.end());
  fargs.keyword = args.keyword;
  for (const auto& item : iterate(in, v)) {
    call_args a = fargs;
    out.push_back(apply_filter(in, fname, item, a));
  }
  return value::generator(std::move(out));
}

value filter_first(interp& in, std::string_view, const value& v, call_args&) {
  if (v.is_generator()) {
    value x;
    if (v.take_one(x)) return x;
    return value::undefined("No first item, sequence was empty.");
  }
  auto items = iterate(in, v);
  if (items.empty()) return value::undefined("No first item, sequence was empty.");
  return items.front();
}

value filter_last(interp& in, std::string_view, const value& v, call_args&) {
  if (v.is_generator()) in.fail("'generator' object is not reversible");
  auto items = iterate(in, v);
  if (items.empty()) return value::undefined("No last item, sequence was empty.");
  return items.back();
}

value filter_lower(interp&, std::string_view, const value& v, call_args&) {
  return value::string(py_lower(soft_str(v)));
}

value filter_upper(interp&, std::string_view, const value& v, call_args&) {
  return value::string(py_upper(soft_str(v)));
}

value filter_capitalize(interp&, std::string_view, const value& v, call_args&) {
  return value::string(py_capitalize(soft_str(v)));
}

value filter_title(interp&, std::string_view, const value& v, call_args&) {
  return value::string(jinja_title(soft_str(v)));
}

value filter_replace(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  value old = r.get(0, "old");
  value rep = r.get(1, "new");
  value count = r.get(2, "count", value::none());
  std::string subject = soft_str(v), from = to_str(old), to = to_str(rep);
  std::int64_t n_max = count.is_none() ? -1 : count.as_int();
  in.check_output_size(py_replace_size(subject, from, to, n_max));
  return value::string(py_replace(subject, from, to, n_max));
}

value filter_round(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  std::int64_t precision = r.get(0, "precision", value::integer(0)).as_int();
  std::string method = to_str(r.get(1, "method", value::string("common")));
  if (v.is_undefined()) in.fail_undefined(v);
  if (!v.is_number()) in.fail("type " + type_name(v) + " doesn't define __round__ method");
  if (method == "common") {
    if (!v.is_float()) return value::integer(v.as_int());
    return value::floating(py_round(v.as_float(), precision));
  }
  double p = std::pow(10.0, static_cast<double>(precision));
  double x = v.as_float() * p;
  if (method == "ceil") return value::floating(std::ceil(x) / p);
  if (method == "floor") return value::floating(std::floor(x) / p);
  in.fail("method must be common, ceil or floor");
}

value filter_int(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  value def = r.get(0, "default", value::integer(0));
  int base = static_cast<int>(r.get(1, "base", value::integer(10)).as_int());
  if (v.is_undefined()) in.fail_undefined(v);
  if (v.is_int() || v.is_bool()) return value::integer(v.as_int());
  if (v.is_float()) {
    if (!std::isfinite(v.as_float())) return def;
    return value::integer(static_cast<std::int64_t>(std::trunc(v.as_float())));
  }
  if (v.is_string()) {
    if (auto i = parse_py_int(v.str(), base)) return value::integer(*i);
    if (auto f = py_parse_float(v.str()))
      if (std::isfinite(*f)) return value::integer(static_cast<std::int64_t>(std::trunc(*f)));
  }
  return def;
}

value filter_float(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  value def = r.get(0, "default", value::floating(0.0));
  if (v.is_undefined()) in.fail_undefined(v);
  if (v.is_number()) return value::floating(v.as_float());
  if (v.is_string())
    if (auto f = py_parse_float(v.str())) return value::floating(*f);
  return def;
}

value filter_abs(interp& in, std::string_view, const value& v, call_args&) {
  if (v.is_float()) return value::floating(std::fabs(v.as_float()));
  if (v.is_number()) return value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
  if (v.is_undefined()) in.fail_undefined(v);
  in.fail("bad operand type for abs(): '" + type_name(v) + "'");
}

value filter_unique(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  bool cs = r.get(0, "case_sensitive", value::boolean(false)).truthy();
  value attribute = r.get(1, "attribute", value::none());
  // Hashed like Python's set for str and numbers (1 == 1.0 == True); other keys (None,
  // containers) are compared one by one, as before.
  std::vector<value> out, keys, others;
  std::unordered_set<std::string_view> strings;
  std::unordered_set<std::int64_t> ints;
  std::unordered_set<double> floats;
  for (const auto& item : iterate(in, v)) {
    value key = lower_key(attribute.is_none() ? item : attr_path(in, item, attribute), cs);
    bool fresh;
    if (key.is_string()) {
      fresh = strings.insert(key.str()).second;
    } else if (key.is_int() || key.is_bool()) {
      fresh = ints.insert(key.as_int()).second;
    } else if (key.is_float() && !std::isnan(key.as_float())) {
      double d = key.as_float();
      if (d == std::trunc(d) && std::fabs(d) < 9.2e18)
        fresh = ints.insert(static_cast<std::int64_t>(d)).second;
      else
        fresh = floats.insert(d).second;
    } else {
      in.work(others.size() + 1);
      fresh = std::none_of(others.begin(), others.end(),
                           [&](const value& o) { return equals(o, key); });
      if (fresh) others.push_back(key);
    }
    if (fresh) {
      keys.push_back(key);  // keeps the hashed strings alive
      out.push_back(item);
    }
  }
  return value::generator(std::move(out));
}

value filter_sort(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  bool reverse = r.get(0, "reverse", value::boolean(false)).truthy();
  bool cs = r.get(1, "case_sensitive", value::boolean(false)).truthy();
  value attribute = r.get(2, "attribute", value::none());
  return value::list(sorted_values(in, iterate(in, v), reverse, cs, attribute));
}

value filter_dictsort(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  bool cs = r.get(0, "case_sensitive", value::boolean(false)).truthy();
  std::string by = to_str(r.get(1, "by", value::string("key")));
  bool reverse = r.get(2, "reverse", value::boolean(false)).truthy();
  if (!v.is_dict()) in.fail("You can only sort by either \"key\" or \"value\"");
  std::vector<value> pairs;
  for (const auto& e : v.dict().entries) pairs.push_back(value::tuple({e.first, e.second}));
  return value::list(sorted_values(in, pairs, reverse, cs, value::integer(by == "value" ? 1 : 0)));
}

value filter_batch(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  std::int64_t count = r.get(0, "linecount").as_int();
  value fill = r.get(1, "fill_with", value::none());
  if (count <= 0) in.fail("batch size must be positive");
  std::vector<value> out, cur;
  for (const auto& item : iterate(in, v)) {
    cur.push_back(item);
    if (static_cast<std::int64_t>(cur.size()) == count) {
      out.push_back(value::list(std::move(cur)));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    if (!fill.is_none()) in.check_items(static_cast<std::uint64_t>(count));
    if (!fill.is_none())
      while (static_cast<std::int64_t>(cur.size()) < count) cur.push_back(fill);
    out.push_back(value::list(std::move(cur)));
  }
  return value::generator(std::move(out));
}

value filter_indent(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  if (!v.is_string()) {
    if (v.is_undefined()) in.fail_undefined(v);
    in.fail("unsupported operand type(s) for +=: " + squote_type(v) + " and 'str'");
  }
  value width = r.get(0, "width", value::integer(4));
  bool first = r.get(1, "first", value::boolean(false)).truthy();
  bool blank = r.get(2, "blank", value::boolean(false)).truthy();
  std::uint64_t ind_size =
      width.is_string() ? width.str().size()
                        : static_cast<std::uint64_t>(std::max<std::int64_t>(0, width.as_int()));
  in.check_output_size(ind_size);
  std::string ind = width.is_string() ? width.str() : std::string(ind_size, ' ');
  std::string s = soft_str(v) + "\n";
  auto lines = py_splitlines(s, false);
  in.check_output_size(add_sat(s.size(), mul_sat(lines.size() + 1, ind_size)));
  std::string rv;
  if (blank) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + ind;
      rv += lines[i];
    }
  } else if (!lines.empty()) {
    rv = lines[0];
    for (std::size_t i = 1; i < lines.size(); ++i) {
      rv += "\n";
      if (!lines[i].empty()) rv += ind;
      rv += lines[i];
    }
  }
  if (first) rv = ind + rv;
  return value::string(std::move(rv));
}

value filter_wordcount(interp&, std::string_view, const value& v, call_args&) {
  auto cps = decode(soft_str(v));
  std::int64_t count = 0;
  bool in_word = false;
  for (char32_t c : cps) {  // len(re.findall(r"\w+", s))
    bool w = py_re_word(c);
    if (w && !in_word) ++count;
    in_word = w;
  }
  return value::integer(count);
}

value filter_center(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  std::int64_t width = r.get(0, "width", value::integer(80)).as_int();
  std::string s = soft_str(v);
  auto len = static_cast<std::int64_t>(utf8_length(s));
  if (width <= len) return value::string(s);
  in.check_output_size(add_sat(s.size(), static_cast<std::uint64_t>(width - len)));
  std::int64_t marg = width - len;
  std::int64_t left = marg / 2 + (marg & width & 1);
  return value::string(std::string(static_cast<std::size_t>(left), ' ') + s +
                       std::string(static_cast<std::size_t>(marg - left), ' '));
}

value filter_truncate(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  if (v.is_undefined()) return v;
  if (!v.is_string() && !v.is_sequence() && !v.is_dict())
    in.fail("object of type " + squote_type(v) + " has no len()");
  std::int64_t length = r.get(0, "length", value::integer(255)).as_int();
  bool killwords = r.get(1, "killwords", value::boolean(false)).truthy();
  std::string end = to_str(r.get(2, "end", value::string("...")));
  value lw = r.get(3, "leeway", value::none());
  std::int64_t leeway = lw.is_none() ? 5 : lw.as_int();
  auto cps = decode(soft_str(v));
  auto endlen = static_cast<std::int64_t>(utf8_length(end));
  if (static_cast<std::int64_t>(cps.size()) <= length + leeway) return value::string(encode(cps));
  std::size_t cut = static_cast<std::size_t>(std::max<std::int64_t>(0, length - endlen));
  std::string head = encode(cps, 0, cut);
  if (killwords) return value::string(head + end);
  std::size_t sp = head.rfind(' ');
  if (sp != std::string::npos) head.resize(sp);
  return value::string(head + end);
}

value filter_escape(interp&, std::string_view n, const value& v, call_args&) {
  return v.is_markup() && n != "forceescape" ? v : value::markup(html_escape(soft_str(v)));
}

value filter_sum(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  value attribute = r.get(0, "attribute", value::none());
  value total = r.get(1, "start", value::integer(0));
  for (const auto& item : iterate(in, v))
    total = binary(in, binary_op::add, total,
                   attribute.is_none() ? item : attr_path(in, item, attribute));
  return total;
}

value filter_min_max(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  bool cs = r.get(0, "case_sensitive", value::boolean(false)).truthy();
  value attribute = r.get(1, "attribute", value::none());
  auto items = iterate(in, v);
  if (items.empty()) return value::undefined("No aggregated item, sequence was empty.");
  value best = items[0];
  value bestk = lower_key(attribute.is_none() ? best : attr_path(in, best, attribute), cs);
  for (std::size_t i = 1; i < items.size(); ++i) {
    value k = lower_key(attribute.is_none() ? items[i] : attr_path(in, items[i], attribute), cs);
    int c = order(in, k, bestk, "<");
    if ((n == "min" && c < 0) || (n == "max" && c > 0)) {
      best = items[i];
      bestk = k;
    }
  }
  return best;
}

value filter_reverse(interp& in, std::string_view, const value& v, call_args&) {
  if (v.is_string()) {
    auto cps = decode(v.str());
    std::reverse(cps.begin(), cps.end());
    return value::string(encode(cps));
  }
  auto items = iterate(in, v);
  std::reverse(items.begin(), items.end());
  if (v.is_generator()) return value::list(std::move(items));
  return value::generator(std::move(items));
}

value filter_attr(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  return getattr_value(in, v, to_str(r.get(0, "name")));
}

value filter_format(interp& in, std::string_view, const value& v, call_args& args) {
  if (!args.keyword.empty()) {
    auto d = std::make_shared<dict_obj>();
    for (auto& k : args.keyword) d->set(value::string(k.first), k.second);
    return percent_format(in, soft_str(v), value::dict(d), v.is_markup());
  }
  return percent_format(in, soft_str(v), value::tuple(args.positional), v.is_markup());
}

value filter_pprint(interp&, std::string_view, const value& v, call_args&) {
  return value::string(to_repr(v));
}

value filter_groupby(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  value attribute = r.get(0, "attribute");
  value def = r.get(1, "default", value::none());
  bool cs = r.get(2, "case_sensitive", value::boolean(false)).truthy();
  auto key_of = [&](const value& item) {
    value k = attr_path(in, item, attribute);
    if (k.is_undefined() && !def.is_none()) k = def;
    return k;
  };
  std::vector<value> items = iterate(in, v);
  std::vector<std::pair<value, std::size_t>> keyed;
  for (std::size_t i = 0; i < items.size(); ++i)
    keyed.emplace_back(lower_key(key_of(items[i]), cs), i);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return order(in, a.first, b.first, "<") < 0;
  });
  std::vector<value> out;
  std::size_t i = 0;
  while (i < keyed.size()) {
    std::size_t j = i;
    std::vector<value> group;
    while (j < keyed.size() && equals(keyed[j].first, keyed[i].first))
      group.push_back(items[keyed[j++].second]);
    value grouper = cs ? keyed[i].first : key_of(group.front());
    out.push_back(value::tuple({grouper, value::list(std::move(group))}));
    i = j;
  }
  return value::list(std::move(out));
}

value filter_slice(interp& in, std::string_view n, const value& v, call_args& args) {
  arg_reader r{in, args, n.data()};
  std::int64_t slices = r.get(0, "slices").as_int();
  value fill = r.get(1, "fill_with", value::none());
  if (slices <= 0) in.fail("slices must be positive");
  in.check_items(static_cast<std::uint64_t>(slices));
  std::vector<value> seq = iterate(in, v);
  auto length = static_cast<std::int64_t>(seq.size());
  std::int64_t per = length / slices, extra = length % slices, offset = 0;
  std::vector<value> out;
  for (std::int64_t k = 0; k < slices; ++k) {
    std::int64_t start = offset + k * per;
    if (k < extra) ++offset;
    std::int64_t end = offset + (k + 1) * per;
    std::vector<value> part(seq.begin() + start, seq.begin() + end);
    if (!fill.is_none() && k >= extra) part.push_back(fill);
    out.push_back(value::list(std::move(part)));
  }
  return value::generator(std::move(out));
}

value filter_striptags(interp&, std::string_view, const value& v, call_args&) {
  std::string s = soft_str(v), text;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 4, "<!--") == 0) {
      std::size_t e = s.find("-->", i + 4);
      if (e == std::string::npos) break;
      i = e + 2;
    } else if (s[i] == '<' && i + 1 < s.size() &&
               (std::isalpha(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '/')) {
      std::size_t e = s.find('>', i);
      if (e == std::string::npos) {
        text += s.substr(i);
        break;
      }
      i = e;
    } else {
      text += s[i];
    }
  }
  std::string joined;
  for (const auto& w : py_split(text, nullptr, -1)) {
    if (!joined.empty()) joined += ' ';
    joined += w;
  }
  static const std::pair<const char*, const char*> entities[] = {{"&lt;", "<"},    {"&gt;", ">"},
                                                                 {"&quot;", "\""}, {"&#34;", "\""},
                                                                 {"&#39;", "'"},   {"&amp;", "&"}};
  for (const auto& [from, to] : entities) joined = py_replace(joined, from, to, -1);
  return value::string(std::move(joined));
}

value filter_unsupported(interp& in, std::string_view n, const value&, call_args&) {
  in.fail("filter '" + std::string(n) + "' is not supported", base::errc::unsupported);
}

// ---- tests ----

value test_arg(interp& in, std::string_view n, call_args& args) {
  if (args.positional.empty()) in.fail("test '" + std::string(n) + "' needs an argument");
  return args.positional[0];
}

bool test_sameas(interp& in, std::string_view n, const value& v, call_args& args) {
  value o = test_arg(in, n, args);
  if (v.kind() != o.kind()) return false;
  if (v.is_none() || v.is_undefined()) return true;
  if (v.is_bool() || v.is_int()) return v.as_int() == o.as_int();
  return v.identity() == o.identity();
}

bool test_divisible(interp& in, std::string_view n, const value& v, call_args& args) {
  if (v.is_undefined()) in.fail_undefined(v);
  if (!v.is_number())
    in.fail("unsupported operand type(s) for %: '" + type_name(v) + "' and 'int'");
  if (n == "divisibleby") {
    value d = test_arg(in, n, args);
    if (d.as_float() == 0) in.fail("integer division or modulo by zero");
    return std::fmod(v.as_float(), d.as_float()) == 0;
  }
  bool odd = v.is_float() ? std::fmod(v.as_float(), 2.0) != 0 : (v.as_int() % 2) != 0;
  return n == "odd" ? odd : !odd;
}

bool test_lower_upper(interp&, std::string_view n, const value& v, call_args&) {
  std::string t = soft_str(v);
  std::string up = py_upper(t), low = py_lower(t);
  if (up == low) return false;  // no cased characters
  return n == "lower" ? low == t : up == t;
}

bool test_in(interp& in, std::string_view n, const value& v, call_args& args) {
  return contains(in, test_arg(in, n, args), v);
}
bool test_eq(interp& in, std::string_view n, const value& v, call_args& args) {
  return equals(v, test_arg(in, n, args));
}
bool test_ne(interp& in, std::string_view n, const value& v, call_args& args) {
  return !equals(v, test_arg(in, n, args));
}
bool test_lt(interp& in, std::string_view n, const value& v, call_args& args) {
  return order(in, v, test_arg(in, n, args), "<") < 0;
}
bool test_le(interp& in, std::string_view n, const value& v, call_args& args) {
  return order(in, v, test_arg(in, n, args), "<=") <= 0;
}
bool test_gt(interp& in, std::string_view n, const value& v, call_args& args) {
  return order(in, v, test_arg(in, n, args), ">") > 0;
}
bool test_ge(interp& in, std::string_view n, const value& v, call_args& args) {
  return order(in, v, test_arg(in, n, args), ">=") >= 0;
}

// `filter` and `test`: whether a filter / test of that name exists.
template <bool (*has)(std::string_view)>
bool test_name_exists(interp& in, std::string_view, const value& v, call_args&) {
  return v.is_string() ? has(v.str()) : (name_lookup_key(in, v), false);
}

// ---- the tables ----

struct filter_row {
  std::string_view name;
  filter_fn fn;
};

// Jinja2's DEFAULT_FILTERS (urlize and random exist there but are not supported here).
const filter_row filters[] = {
    {"abs", filter_abs},
    {"attr", filter_attr},
    {"batch", filter_batch},
    {"capitalize", filter_capitalize},
    {"center", filter_center},
    {"count", filter_length},
    {"d", filter_default},
    {"default", filter_default},
    {"dictsort", filter_dictsort},
    {"e", filter_escape},
    {"escape", filter_escape},
    {"filesizeformat", filter_filesizeformat},
    {"first", filter_first},
    {"float", filter_float},
    {"forceescape", filter_escape},
    {"format", filter_format},
    {"groupby", filter_groupby},
    {"indent", filter_indent},
    {"int", filter_int},
    {"items", filter_items},
    {"join", filter_join},
    {"last", filter_last},
    {"length", filter_length},
    {"list", filter_list},
    {"lower", filter_lower},
    {"map", filter_map},
    {"max", filter_min_max},
    {"min", filter_min_max},
    {"pprint", filter_pprint},
    {"random", filter_unsupported},
    {"reject", filter_select<false, false>},
    {"rejectattr", filter_select<true, false>},
    {"replace", filter_replace},
    {"reverse", filter_reverse},
    {"round", filter_round},
    {"safe", filter_safe},
    {"select", filter_select<false, true>},
    {"selectattr", filter_select<true, true>},
    {"slice", filter_slice},
    {"sort", filter_sort},
    {"string", filter_string},
    {"striptags", filter_striptags},
    {"sum", filter_sum},
    {"title", filter_title},
    {"tojson", filter_tojson},
    {"trim", filter_trim},
    {"truncate", filter_truncate},
    {"unique", filter_unique},
    {"upper", filter_upper},
    {"urlencode", filter_urlencode},
    {"urlize", filter_unsupported},
    {"wordcount", filter_wordcount},
    {"wordwrap", filter_wordwrap},
    {"xmlattr", filter_xmlattr},
};

// A test reads the value alone (`pred`) or also the interpreter and the arguments (`fn`).
struct test_row {
  using pred_fn = bool (*)(const value&);
  using test_fn = bool (*)(interp&, std::string_view, const value&, call_args&);
  test_row(std::string_view n, pred_fn p) : name(n), pred(p) {}
  test_row(std::string_view n, test_fn f) : name(n), fn(f) {}
  std::string_view name;
  pred_fn pred = nullptr;
  test_fn fn = nullptr;
};

const test_row tests[] = {
    {"defined", [](const value& v) { return !v.is_undefined(); }},
    {"undefined", [](const value& v) { return v.is_undefined(); }},
    {"none", [](const value& v) { return v.is_none(); }},
    {"boolean", [](const value& v) { return v.is_bool(); }},
    {"false", [](const value& v) { return v.is_bool() && !v.as_bool(); }},
    {"true", [](const value& v) { return v.is_bool() && v.as_bool(); }},
    {"integer", [](const value& v) { return v.is_int(); }},
    {"float", [](const value& v) { return v.is_float(); }},
    {"number", [](const value& v) { return v.is_number(); }},
    {"string", [](const value& v) { return v.is_string(); }},
    {"mapping", [](const value& v) { return v.is_dict(); }},
    {"iterable",
     [](const value& v) {
       return v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined() ||
              v.is_generator();
     }},
    {"sequence",
     [](const value& v) {
       return v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined();
     }},
    {"callable", [](const value& v) { return v.is_callable() || v.kind() == vkind::loop; }},
    {"sameas", test_sameas},
    {"escaped", [](const value&) { return false; }},
    {"in", test_in},
    {"eq", test_eq},
    {"equalto", test_eq},
    {"==", test_eq},
    {"ne", test_ne},
    {"!=", test_ne},
    {"lt", test_lt},
    {"lessthan", test_lt},
    {"<", test_lt},
    {"le", test_le},
    {"<=", test_le},
    {"gt", test_gt},
    {"greaterthan", test_gt},
    {">", test_gt},
    {"ge", test_ge},
    {">=", test_ge},
    {"odd", test_divisible},
    {"even", test_divisible},
    {"divisibleby", test_divisible},
    {"lower", test_lower_upper},
    {"upper", test_lower_upper},
    {"filter", test_name_exists<has_filter>},
    {"test", test_name_exists<has_test>},
};

}  // namespace

bool has_filter(std::string_view n) {
  return find_row(filters, n) != nullptr;
}

bool has_test(std::string_view n) {
  return find_row(tests, n) != nullptr;
}

bool apply_test(interp& in, std::string_view n, const value& v, call_args& args) {
  const test_row* row = find_row(tests, n);
  if (!row) in.fail("No test named '" + std::string(n) + "'.");
  return row->pred ? row->pred(v) : row->fn(in, row->name, v, args);
}

value apply_filter(interp& in, std::string_view n, const value& v, call_args& args) {
  const filter_row* row = find_row(filters, n);
  if (!row) in.fail("No filter named '" + std::string(n) + "'.");
  return row->fn(in, row->name, v, args);
}

}  // namespace chatpeg::jinja::detail

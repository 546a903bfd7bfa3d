// Python/Jinja2 operator semantics on values: attribute vs item lookup as the sandboxed
// environment does it (methods before keys for `.`, keys before methods for `[]`, mutating
// methods refused), arithmetic with Python's int/float rules, ordering and membership,
// iteration, slicing on code points, calls, and printf-style `%` formatting.
#include <cmath>
#include <cstdio>

#include <cctype>
#include <optional>

#include "chatpeg/base/utf8.h"
#include "jinja/interp.h"

namespace chatpeg::jinja::detail {
namespace {

struct loop_method final : callable_obj {
  std::shared_ptr<loop_obj> state;
  bool is_cycle = true;
  value call(interp& in, call_args& args) const override {
    if (is_cycle) {
      if (args.positional.empty()) in.fail("no items for cycling given");
      auto n = static_cast<std::int64_t>(args.positional.size());
      return args.positional[static_cast<std::size_t>(state->index0 % n)];
    }
    value v = args.positional.size() == 1 ? args.positional[0] : value::tuple(args.positional);
    if (!state->has_changed || !equals(state->last_changed, v)) {
      state->has_changed = true;
      state->last_changed = v;
      return value::boolean(true);
    }
    return value::boolean(false);
  }
};

value loop_attr(interp& in, const value& lv, std::string_view name) {
  loop_obj& l = lv.loop_state();
  std::int64_t i = l.index0;
  std::int64_t n = l.length;
  if (name == "index") return value::integer(i + 1);
  if (name == "index0") return value::integer(i);
  if (name == "revindex") return value::integer(n - i);
  if (name == "revindex0") return value::integer(n - i - 1);
  if (name == "first") return value::boolean(i == 0);
  if (name == "last") return value::boolean(i == n - 1);
  if (name == "length") return value::integer(n);
  if (name == "depth") return value::integer(l.depth0 + 1);
  if (name == "depth0") return value::integer(l.depth0);
  if (name == "previtem") {
    if (i == 0) return value::undefined("there is no previous item");
    return (*l.items)[static_cast<std::size_t>(i - 1)];
  }
  if (name == "nextitem") {
    if (i + 1 >= n) return value::undefined("there is no next item");
    return (*l.items)[static_cast<std::size_t>(i + 1)];
  }
  if (name == "cycle" || name == "changed") {
    auto m = std::make_shared<loop_method>();
    m->state = std::static_pointer_cast<loop_obj>(lv.ptr());
    m->is_cycle = name == "cycle";
    return value::callable(m);
  }
  (void)in;
  return value::undefined("'LoopContext object' has no attribute '" + std::string(name) + "'");
}

bool is_unsafe_method(const value& obj, std::string_view name) {
  if (obj.is_list()) {
    return name == "append" || name == "extend" || name == "insert" || name == "pop" ||
           name == "remove" || name == "clear" || name == "sort" || name == "reverse";
  }
  if (obj.is_dict()) {
    return name == "pop" || name == "popitem" || name == "setdefault" || name == "update" ||
           name == "clear";
  }
  return false;
}

value unsafe(const value& obj, std::string_view name) {
  return value::undefined("access to attribute '" + std::string(name) + "' of '" + type_name(obj) +
                              "' object is unsafe.",
                          true);
}

std::string obj_desc(const value& v) {  // Jinja's object_type_repr
  if (v.is_none()) return "None";
  if (v.is_ns()) return "jinja2.utils.Namespace object";
  if (v.is_markup()) return "markupsafe.Markup object";
  return type_name(v) + " object";
}

// "'text'" built by appending (GCC 12 at -O3 warns falsely on "'" + std::string).
std::string squote(std::string_view text) {
  std::string r;
  r.reserve(text.size() + 2);
  r += '\'';
  r.append(text);
  r += '\'';
  return r;
}

value missing_item(const value& obj, const value& key) {
  return value::missing_item(obj, key);
}

std::int64_t floordiv_int(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::int64_t mod_int(std::int64_t a, std::int64_t b) {
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

double mod_float(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

[[noreturn]] void unsupported(interp& in, const char* op, const value& a, const value& b) {
  in.fail(std::string("unsupported operand type(s) for ") + op + ": '" + type_name(a) + "' and '" +
          type_name(b) + "'");
}

value repeat(interp& in, const value& seq, std::int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const std::string& s = seq.str();
    if (!s.empty()) in.check_output_size(mul_sat(s.size(), static_cast<std::uint64_t>(n)));
    std::string out;
    out.reserve(s.size() * static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) out += s;
    return value::string(std::move(out));
  }
  const auto& items = seq.items();
  if (!items.empty()) in.check_items(mul_sat(items.size(), static_cast<std::uint64_t>(n)));
  std::vector<value> out;
  for (std::int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return seq.is_tuple() ? value::tuple(std::move(out)) : value::list(std::move(out));
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Jinja's Undefined messages: "'dict object' has no attribute 'x'" for attributes and str
// keys, "list object has no element 5" (the key's repr) for other keys.
std::string undefined_message(const undefined_obj& u) {
  switch (u.missed) {
    case undefined_obj::miss::attribute:
      return squote(obj_desc(u.owner)) + " has no attribute " + squote(u.attr);
    case undefined_obj::miss::item:
      if (u.key.is_string())
        return squote(obj_desc(u.owner)) + " has no attribute " + to_repr(u.key);
      return obj_desc(u.owner) + " has no element " + to_repr(u.key);
    case undefined_obj::miss::none:
      break;
  }
  return u.hint.empty() ? "undefined value" : u.hint;
}

value getattr_value(interp& in, const value& obj, std::string_view name) {
  switch (obj.kind()) {
    case vkind::undefined:
      in.fail_undefined(obj);
    case vkind::dict: {
      value m = method_of(in, obj, name);
      if (!m.is_undefined()) return m;
      if (is_unsafe_method(obj, name)) return unsafe(obj, name);
      if (const value* v = obj.dict().find(name)) return *v;
      return value::missing_attr(obj, name);
    }
    case vkind::ns: {
      if (const value* v = obj.dict().find(name)) return *v;
      return value::missing_attr(obj, name);
    }
    case vkind::loop:
      return loop_attr(in, obj, name);
    case vkind::callable:
      return obj.fn().attr(in, name);
    case vkind::tuple:
      // groupby() yields (grouper, list) named tuples.
      if (obj.items().size() == 2 && (name == "grouper" || name == "list"))
        return obj.items()[name == "grouper" ? 0 : 1];
      [[fallthrough]];
    default: {
      value m = method_of(in, obj, name);
      if (!m.is_undefined()) return m;
      if (is_unsafe_method(obj, name)) return unsafe(obj, name);
      return value::missing_attr(obj, name);
    }
  }
}

value getitem_value(interp& in, const value& obj, const value& key) {
  switch (obj.kind()) {
    case vkind::undefined:
      in.fail_undefined(obj);
    case vkind::dict:
    case vkind::ns:
      if (const value* v = obj.dict().find(key)) return *v;
      break;
    case vkind::list:
    case vkind::tuple:
      if ((key.is_int() || key.is_bool()) &&
          (obj.view_kind() == value::view::none || obj.view_kind() == value::view::range)) {
        const auto& items = obj.items();
        std::int64_t i = key.as_int();
        auto n = static_cast<std::int64_t>(items.size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) return items[static_cast<std::size_t>(i)];
        return missing_item(obj, key);
      }
      break;
    case vkind::string:
      if (key.is_int() || key.is_bool()) {
        // Walks to the code point without building the list of all of them.
        // Negative indices walk back from the end: s[i] and s[-i] cost O(i).
        const std::string& s = obj.str();
        const char* d = s.data();
        std::size_t size = s.size();
        auto is_lead = [d](std::size_t k) {
          return (static_cast<unsigned char>(d[k]) & 0xC0) != 0x80;
        };
        std::int64_t i = key.as_int();
        std::size_t p = 0;
        if (i >= 0) {
          in.work(static_cast<std::uint64_t>(i) / 16);
          for (std::int64_t k = 0; p < size && k < i; ++k) do
              ++p;
            while (p < size && !is_lead(p));
        } else {
          in.work(static_cast<std::uint64_t>(-(i + 1)) / 16);
          p = size;
          for (std::int64_t k = 0; k > i; --k) {
            if (p == 0) return missing_item(obj, key);
            do --p;
            while (p > 0 && !is_lead(p));
          }
        }
        if (p >= size) return missing_item(obj, key);
        std::size_t e = p + 1;
        while (e < s.size() && !is_lead(e)) ++e;
        return value::string(s.substr(p, e - p));
      }
      break;
    case vkind::loop:
      if (key.is_string()) return loop_attr(in, obj, key.str());
      break;
    default:
      break;
  }
  if (key.is_string() && obj.kind() != vkind::ns) {
    value m = method_of(in, obj, key.str());
    if (!m.is_undefined()) return m;
    if (is_unsafe_method(obj, key.str())) return unsafe(obj, key.str());
  }
  return missing_item(obj, key);
}

std::vector<value> iterate(interp& in, const value& v) {
  switch (v.kind()) {
    case vkind::undefined:
      return {};
    case vkind::list:
    case vkind::tuple:
      return v.items();
    case vkind::generator:
      return v.take_all();
    case vkind::dict: {
      std::vector<value> out;
      out.reserve(v.dict().size());
      for (const auto& e : v.dict().entries) out.push_back(e.first);
      return out;
    }
    case vkind::string: {
      in.check_items(utf8_length(v.str()));
      std::vector<value> out;
      auto chars = utf8_chars(v.str());
      out.reserve(chars.size());
      for (auto c : chars) out.push_back(value::string(std::string(c)));
      return out;
    }
    default:
      in.fail(squote(type_name(v)) + " object is not iterable");
  }
}

std::int64_t length_of(interp& in, const value& v) {
  switch (v.kind()) {
    case vkind::undefined:
      return 0;
    case vkind::string:
      return static_cast<std::int64_t>(utf8_length(v.str()));
    case vkind::list:
    case vkind::tuple:
      return static_cast<std::int64_t>(v.items().size());
    case vkind::dict:
      return static_cast<std::int64_t>(v.dict().size());
    case vkind::loop:
      return v.loop_state().length;
    default:
      in.fail("object of type '" + type_name(v) + "' has no len()");
  }
}

value binary(interp& in, binary_op op, const value& a, const value& b) {
  if (op == binary_op::concat) {
    std::string s;
    append_str(s, a);
    append_str(s, b);
    in.check_output_size(s.size());
    return value::string(std::move(s));
  }
  if (a.is_undefined()) in.fail_undefined(a);
  if (b.is_undefined()) in.fail_undefined(b);
  bool nums = a.is_number() && b.is_number();
  bool any_float = a.is_float() || b.is_float();
  switch (op) {
    case binary_op::add:
      if (nums) {
        if (any_float) return value::floating(a.as_float() + b.as_float());
        std::int64_t r;
        if (__builtin_add_overflow(a.as_int(), b.as_int(), &r))
          return value::floating(a.as_float() + b.as_float());
        return value::integer(r);
      }
      if (a.is_string() && b.is_string()) {
        in.check_output_size(a.str().size() + b.str().size());
        if (a.is_markup() && !b.is_markup()) return value::markup(a.str() + html_escape(b.str()));
        if (b.is_markup() && !a.is_markup()) return value::markup(html_escape(a.str()) + b.str());
        if (a.is_markup()) return value::markup(a.str() + b.str());
        return value::string(a.str() + b.str());
      }
      if (((a.is_list() && b.is_list()) || (a.is_tuple() && b.is_tuple())) &&
          a.view_kind() == value::view::none && b.view_kind() == value::view::none) {
        in.check_items(a.items().size() + b.items().size());
        std::vector<value> out = a.items();
        out.insert(out.end(), b.items().begin(), b.items().end());
        return a.is_list() ? value::list(std::move(out)) : value::tuple(std::move(out));
      }
      if (a.is_string() || b.is_string()) {
        if (a.is_string())
          in.fail("can only concatenate str (not \"" + type_name(b) + "\") to str");
        unsupported(in, "+", a, b);
      }
      if (a.is_list() && a.view_kind() == value::view::none)
        in.fail("can only concatenate list (not \"" + type_name(b) + "\") to list");
      unsupported(in, "+", a, b);
    case binary_op::sub:
      if (!nums) unsupported(in, "-", a, b);
      if (any_float) return value::floating(a.as_float() - b.as_float());
      {
        std::int64_t r;
        if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r))
          return value::floating(a.as_float() - b.as_float());
        return value::integer(r);
      }
    case binary_op::mul:
      if (nums) {
        if (any_float) return value::floating(a.as_float() * b.as_float());
        std::int64_t r;
        if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r))
          return value::floating(a.as_float() * b.as_float());
        return value::integer(r);
      }
      if ((a.is_string() || (a.is_sequence() && a.view_kind() == value::view::none)) &&
          (b.is_int() || b.is_bool()))
        return repeat(in, a, b.as_int());
      if ((b.is_string() || (b.is_sequence() && b.view_kind() == value::view::none)) &&
          (a.is_int() || a.is_bool()))
        return repeat(in, b, a.as_int());
      unsupported(in, "*", a, b);
    case binary_op::div:
      if (!nums) unsupported(in, "/", a, b);
      if (b.as_float() == 0.0) in.fail("division by zero");
      return value::floating(a.as_float() / b.as_float());
    case binary_op::floordiv:
      if (!nums) unsupported(in, "//", a, b);
      if (b.as_float() == 0.0) in.fail("integer division or modulo by zero");
      if (any_float) return value::floating(std::floor(a.as_float() / b.as_float()));
      return value::integer(floordiv_int(a.as_int(), b.as_int()));
    case binary_op::mod:
      if (a.is_string()) return percent_format(in, a.str(), b, a.is_markup());
      if (!nums) unsupported(in, "%", a, b);
      if (b.as_float() == 0.0) in.fail("integer division or modulo by zero");
      if (any_float) return value::floating(mod_float(a.as_float(), b.as_float()));
      return value::integer(mod_int(a.as_int(), b.as_int()));
    case binary_op::pow:
      if (!nums) unsupported(in, "** or pow()", a, b);
      if (!any_float && b.as_int() >= 0) {
        std::int64_t base = a.as_int(), e = b.as_int(), r = 1;
        bool overflow = false;
        while (e > 0 && !overflow) {
          if (e & 1) overflow |= __builtin_mul_overflow(r, base, &r);
          e >>= 1;
          if (e > 0) overflow |= __builtin_mul_overflow(base, base, &base);
        }
        if (!overflow) return value::integer(r);
        return value::floating(std::pow(a.as_float(), b.as_float()));
      }
      return value::floating(std::pow(a.as_float(), b.as_float()));
    default:
      break;
  }
  in.fail("unsupported operator");
}

int order(interp& in, const value& a, const value& b, const char* op) {
  if (a.is_undefined()) in.fail_undefined(a);
  if (b.is_undefined()) in.fail_undefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      double x = a.as_float(), y = b.as_float();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.str().compare(b.str());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if ((a.is_list() && b.is_list()) || (a.is_tuple() && b.is_tuple())) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return order(in, x[i], y[i], op);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  in.fail(std::string("'") + op + "' not supported between instances of '" + type_name(a) +
          "' and '" + type_name(b) + "'");
}

bool contains(interp& in, const value& container, const value& item) {
  switch (container.kind()) {
    case vkind::undefined:
      return false;
    case vkind::string:
      if (!item.is_string())
        in.fail("'in <string>' requires string as left operand, not " + type_name(item));
      return container.str().find(item.str()) != std::string::npos;
    case vkind::list:
    case vkind::tuple:
      in.work(container.items().size());
      for (const auto& v : container.items())
        if (equals(v, item)) return true;
      return false;
    case vkind::generator: {
      value v;
      while (container.take_one(v))  // consumes up to the match, as Python does
        if (equals(v, item)) return true;
      return false;
    }
    case vkind::dict:
      if (item.is_list() || item.is_dict() || item.is_ns())
        in.fail("unhashable type: " + squote(type_name(item)));
      return container.dict().find(item) != nullptr;
    default:
      in.fail("argument of type '" + type_name(container) + "' is not iterable");
  }
}

bool compare(interp& in, compare_op op, const value& a, const value& b) {
  switch (op) {
    case compare_op::eq:
      return equals(a, b);
    case compare_op::ne:
      return !equals(a, b);
    case compare_op::lt:
      return order(in, a, b, "<") < 0;
    case compare_op::le:
      return order(in, a, b, "<=") <= 0;
    case compare_op::gt:
      return order(in, a, b, ">") > 0;
    case compare_op::ge:
      return order(in, a, b, ">=") >= 0;
    case compare_op::in:
      return contains(in, b, a);
    case compare_op::not_in:
      return !contains(in, b, a);
  }
  return false;
}

value call_value(interp& in, const value& callee, call_args& args) {
  if (callee.is_callable()) return callee.fn().call(in, args);
  if (callee.kind() == vkind::loop) {
    const value& r = callee.loop_state().recurse;
    if (!r.is_callable())
      in.fail("Tried to call non recursive loop.  Maybe you forgot the 'recursive' modifier.");
    return r.fn().call(in, args);
  }
  if (callee.is_undefined()) in.fail_undefined(callee);
  in.fail(squote(type_name(callee)) + " object is not callable");
}

value slice_value(interp& in, const value& obj, const value& start, const value& stop,
                  const value& step) {
  if (obj.is_undefined()) in.fail_undefined(obj);
  auto as_index = [&](const value& v, const char* what) -> std::optional<std::int64_t> {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (v.is_int() || v.is_bool()) return v.as_int();
    in.fail(std::string("slice indices must be integers or None or have an __index__ method (") +
            what + ")");
  };
  std::int64_t st = as_index(step, "step").value_or(1);
  if (st == 0) in.fail("slice step cannot be zero");
  // Code point starts of a non-ASCII string (8 bytes per code point, not utf8_chars' 16);
  // an ASCII string is indexed by bytes.
  std::vector<std::size_t> starts;
  std::size_t len;
  if (obj.is_string()) {
    const std::string& text = obj.str();
    len = utf8_length(text);
    if (len != text.size()) {
      starts.reserve(len + 1);
      for (std::size_t k = 0; k < text.size(); ++k)
        if (k == 0 || (static_cast<unsigned char>(text[k]) & 0xC0) != 0x80) starts.push_back(k);
      len = starts.size();
      starts.push_back(text.size());
    }
  } else if (obj.is_sequence()) {
    len = obj.items().size();
  } else {
    // Slices bypass Jinja's getitem: Python's own TypeError surfaces.
    if (obj.is_dict()) in.fail("unhashable type: 'slice'");
    in.fail(squote(type_name(obj)) + " object is not subscriptable");
  }
  auto n = static_cast<std::int64_t>(len);
  auto clamp = [&](std::optional<std::int64_t> v, std::int64_t def) {
    if (!v) return def;
    std::int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = st < 0 ? -1 : 0;
    } else if (x >= n) {
      x = st < 0 ? n - 1 : n;
    }
    return x;
  };
  std::int64_t b = clamp(as_index(start, "start"), st < 0 ? n - 1 : 0);
  std::int64_t e = clamp(as_index(stop, "stop"), st < 0 ? -1 : n);
  // Visits b, b + st, ... before e; a step past int64 ends the walk (no overflow).
  auto each_index = [&](auto&& f) {
    for (std::int64_t i = b; st > 0 ? i < e : i > e;) {
      f(static_cast<std::size_t>(i));
      if (__builtin_add_overflow(i, st, &i)) break;
    }
  };
  if (obj.is_string()) {
    const std::string& text = obj.str();
    std::string out;
    if (starts.empty()) {
      each_index([&](std::size_t i) { out += text[i]; });
    } else {
      each_index([&](std::size_t i) { out.append(text, starts[i], starts[i + 1] - starts[i]); });
    }
    return value::string(std::move(out));
  }
  std::vector<value> out;
  each_index([&](std::size_t i) { out.push_back(obj.items()[i]); });
  if (obj.view_kind() == value::view::range) {  // Python: a range of the selected positions
    auto r = obj.range_of();
    return value::range(std::move(out), {r.start + b * r.step, r.start + e * r.step, r.step * st});
  }
  return obj.is_tuple() ? value::tuple(std::move(out)) : value::list(std::move(out));
}

namespace {

// One %-conversion of a format string: %[flags][width][.prec]conv.
struct percent_conversion {
  std::string flags;
  std::string width;
  std::string prec;
  bool has_prec = false;
  char conv = 0;
};

// The text of one conversion (other than %%) applied to arg, padded to its width.
std::string percent_piece(interp& in, const percent_conversion& c, const value& arg, bool markup) {
  std::string piece;
  std::string spec = "%" + c.flags + c.width + (c.has_prec ? "." + c.prec : "");
  char buf[512];
  switch (c.conv) {
    case 's':
      piece = to_str(arg);
      if (markup && !arg.is_markup()) piece = html_escape(piece);
      if (c.has_prec) {
        piece.resize(utf8_prefix_bytes(piece, static_cast<std::size_t>(std::atoi(c.prec.c_str()))));
      }
      break;
    case 'r':
    case 'a':
      piece = to_repr(arg);
      if (markup) piece = html_escape(piece);
      break;
    case 'd':
    case 'i':
    case 'u':
      if (!arg.is_number())
        in.fail("%" + std::string(1, c.conv) + " format: a real number is required, not " +
                type_name(arg));
      std::snprintf(
          buf, sizeof buf, (spec + "lld").c_str(),
          static_cast<long long>(arg.is_float() ? std::trunc(arg.as_float()) : arg.as_int()));
      piece = buf;
      break;
    case 'x':
    case 'X':
    case 'o':
      if (!arg.is_int() && !arg.is_bool()) in.fail("%x format: an integer is required");
      std::snprintf(buf, sizeof buf, (spec + "ll" + c.conv).c_str(),
                    static_cast<long long>(arg.as_int()));
      piece = buf;
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
      if (!arg.is_number()) in.fail("must be real number, not " + type_name(arg));
      std::snprintf(buf, sizeof buf, (spec + c.conv).c_str(), arg.as_float());
      piece = buf;
      break;
    case 'c':
      if (arg.is_string())
        piece = arg.str();
      else
        base::append_utf8(piece, static_cast<char32_t>(arg.as_int()));
      break;
    default:
      in.fail(std::string("unsupported format character '") + c.conv + "'");
  }
  if (c.conv == 's' || c.conv == 'r' || c.conv == 'a' || c.conv == 'c') {
    std::size_t w = static_cast<std::size_t>(std::atoi(c.width.c_str()));
    std::size_t len = utf8_length(piece);
    if (len < w) {
      if (c.flags.find('-') != std::string::npos)
        piece.append(w - len, ' ');
      else
        piece.insert(0, w - len, ' ');
    }
  }
  return piece;
}

}  // namespace

// printf-style formatting of Python's str % args.
value percent_format(interp& in, const std::string& fmt, const value& args, bool markup) {
  std::vector<value> list;
  bool mapping = args.is_dict();
  // Python treats any non-tuple, non-str argument with __getitem__ as a mapping: no
  // "not all arguments converted" error for it.
  bool mapping_like = mapping || args.is_list();
  if (args.is_tuple())
    list = args.items();
  else
    list.push_back(args);
  std::size_t next = 0;
  std::string out;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) in.fail("incomplete format");
    value arg;
    bool have_arg = false;
    if (fmt[i] == '(') {
      std::size_t close = fmt.find(')', i);
      if (close == std::string::npos) in.fail("incomplete format key");
      std::string key = fmt.substr(i + 1, close - i - 1);
      if (!mapping) in.fail("format requires a mapping");
      const value* v = args.dict().find(key);
      if (!v) in.fail("'" + key + "'");
      arg = *v;
      have_arg = true;
      i = close + 1;
    }
    percent_conversion conversion;
    while (i < fmt.size() && std::string_view("-+ #0").find(fmt[i]) != std::string_view::npos)
      conversion.flags += fmt[i++];
    while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])))
      conversion.width += fmt[i++];
    if (i < fmt.size() && fmt[i] == '.') {
      conversion.has_prec = true;
      ++i;
      while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])))
        conversion.prec += fmt[i++];
    }
    if (i >= fmt.size()) in.fail("incomplete format");
    conversion.conv = fmt[i];
    if (conversion.conv == '%') {
      out += '%';
      continue;
    }
    if (!have_arg) {
      if (mapping && list.size() == 1 && !args.is_tuple()) {
        arg = args;
      } else {
        if (next >= list.size()) in.fail("not enough arguments for format string");
        arg = list[next++];
      }
    }
    // Python accepts any width; the result of a wider one could not be output anyway.
    if (conversion.width.size() > 9 || conversion.prec.size() > 9 ||
        static_cast<std::uint64_t>(std::atoi(conversion.width.c_str())) >
            in.options.limits.max_output_bytes)
      in.check_output_size(UINT64_MAX);
    const std::string piece = percent_piece(in, conversion, arg, markup);
    in.check_output_size(add_sat(out.size(), piece.size()));
    out += piece;
  }
  if (!mapping_like && next < list.size())
    in.fail("not all arguments converted during string formatting");
  return markup ? value::markup(std::move(out)) : value::string(std::move(out));
}

}  // namespace chatpeg::jinja::detail

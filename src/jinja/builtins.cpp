// Global functions available to templates (range with the sandbox's size bound, dict,
// namespace, raise_exception, strftime_now with an injectable clock, joiner, cycler) and
// tojson exactly as transformers defines it: json.dumps(x, ensure_ascii=False, indent,
// separators, sort_keys) — Python's separators, float repr, key coercion and escaping.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>

#include "chatpeg/base/utf8.h"
#include "jinja/interp.h"

namespace chatpeg::jinja::detail {
namespace {

using fn_ptr = value (*)(interp&, call_args&);

struct builtin_fn final : callable_obj {
  std::string name;
  fn_ptr fn;
  std::string repr() const override { return "<function " + name + ">"; }
  value call(interp& in, call_args& args) const override { return fn(in, args); }
};

value fn_range(interp& in, call_args& args) {
  if (!args.keyword.empty()) in.fail("range() takes no keyword arguments");
  std::int64_t start = 0, stop = 0, step = 1;
  auto num = [&](const value& v) {
    if (v.is_undefined()) in.fail_undefined(v);
    if (!v.is_int() && !v.is_bool())
      in.fail("'" + type_name(v) + "' object cannot be interpreted as an integer");
    return v.as_int();
  };
  switch (args.positional.size()) {
    case 1:
      stop = num(args.positional[0]);
      break;
    case 2:
      start = num(args.positional[0]);
      stop = num(args.positional[1]);
      break;
    case 3:
      start = num(args.positional[0]);
      stop = num(args.positional[1]);
      step = num(args.positional[2]);
      break;
    default:
      in.fail("range expected at most 3 arguments");
  }
  if (step == 0) in.fail("range() arg 3 must not be zero");
  // Counted in unsigned arithmetic: stop - start overflows int64 for range(-2**62, 2**62).
  std::uint64_t ucount = 0;
  if ((step > 0 && stop > start) || (step < 0 && stop < start)) {
    std::uint64_t diff = step > 0
                             ? static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start)
                             : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop);
    std::uint64_t ustep =
        step > 0 ? static_cast<std::uint64_t>(step) : static_cast<std::uint64_t>(-(step + 1)) + 1;
    ucount = diff / ustep + (diff % ustep != 0 ? 1 : 0);
  }
  if (ucount > in.options.limits.max_range)
    in.fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (" +
                std::to_string(in.options.limits.max_range) + ").",
            base::errc::limit_exceeded);
  std::vector<value> out;
  auto count = static_cast<std::int64_t>(ucount);
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) out.push_back(value::integer(start + i * step));
  return value::range(std::move(out), {start, stop, step});
}

value fn_dict(interp& in, call_args& args) {
  auto d = std::make_shared<dict_obj>();
  if (!args.positional.empty()) {
    const value& src = args.positional[0];
    if (src.is_dict()) {
      d->entries = src.dict().entries;
      d->depth_ = src.dict().depth();
    } else {
      for (const auto& item : iterate(in, src)) {
        auto kv = iterate(in, item);
        if (kv.size() != 2) in.fail("dictionary update sequence element has wrong length");
        d->set(kv[0], kv[1]);
      }
    }
  }
  for (auto& k : args.keyword) d->set(value::string(k.first), k.second);
  return value::dict(d);
}

value fn_namespace(interp&, call_args& args) {
  auto d = std::make_shared<dict_obj>();
  for (const auto& p : args.positional)
    if (p.is_dict())
      for (const auto& e : p.dict().entries) d->set(e.first, e.second);
  for (auto& k : args.keyword) d->set(value::string(k.first), k.second);
  return value::ns(d);
}

value fn_raise(interp& in, call_args& args) {
  std::string msg = args.positional.empty() ? std::string() : to_str(args.positional[0]);
  in.fail(msg, base::errc::template_error);
}

value fn_strftime(interp& in, call_args& args) {
  if (args.positional.empty())
    in.fail("strftime_now() missing 1 required positional argument: 'format'");
  std::string fmt = to_str(args.positional[0]);
  std::tm t{};
  if (in.options.now) {
    t = in.options.now();
  } else {
    std::time_t now = std::time(nullptr);
    localtime_r(&now, &t);
  }
  if (fmt.empty()) return value::string("");
  std::vector<char> buf(fmt.size() * 8 + 64);
  while (true) {
    std::size_t n = std::strftime(buf.data(), buf.size(), fmt.c_str(), &t);
    if (n > 0 || buf.size() > (1u << 20)) return value::string(std::string(buf.data(), n));
    buf.resize(buf.size() * 4);
  }
}

struct joiner_fn final : callable_obj {
  std::string sep;
  mutable bool used = false;
  value call(interp&, call_args&) const override {
    if (!used) {
      used = true;
      return value::string("");
    }
    return value::string(sep);
  }
};

struct closure_fn final : callable_obj {
  std::function<value(interp&, call_args&)> fn;
  value call(interp& in, call_args& args) const override { return fn(in, args); }
};

struct cycler_obj final : callable_obj, std::enable_shared_from_this<cycler_obj> {
  std::vector<value> items;
  mutable std::size_t pos = 0;
  std::string repr() const override { return "<Cycler>"; }
  value call(interp& in, call_args&) const override { in.fail("'Cycler' object is not callable"); }
  value attr(interp&, std::string_view name) const override {
    if (name == "current") return items[pos];
    if (name == "next" || name == "reset") {
      auto self = std::static_pointer_cast<const cycler_obj>(shared_from_this());
      auto f = std::make_shared<closure_fn>();
      if (name == "next")
        f->fn = [self](interp&, call_args&) {
          value v = self->items[self->pos];
          self->pos = (self->pos + 1) % self->items.size();
          return v;
        };
      else
        f->fn = [self](interp&, call_args&) {
          self->pos = 0;
          return value::none();
        };
      return value::callable(f);
    }
    return value::undefined("'Cycler object' has no attribute '" + std::string(name) + "'");
  }
};

value fn_cycler(interp& in, call_args& args) {
  if (args.positional.empty()) in.fail("at least one item has to be provided");
  auto c = std::make_shared<cycler_obj>();
  c->items = args.positional;
  return value::callable(c);
}

value fn_joiner(interp&, call_args& args) {
  auto j = std::make_shared<joiner_fn>();
  j->sep = args.positional.empty() ? ", " : to_str(args.positional[0]);
  return value::callable(j);
}

void add(scope& s, const char* name, fn_ptr fn) {
  auto b = std::make_shared<builtin_fn>();
  b->name = name;
  b->fn = fn;
  s.vars.emplace_back(name, value::callable(b));
}

// ---- tojson ----

struct json_writer {
  interp& in;
  std::string indent;  // empty + has_indent=false: single line
  bool has_indent;
  std::string item_sep, key_sep;
  bool sort_keys, ensure_ascii;
  std::string out;

  // Escapes grow a string at most 6x: checked before (at least its size) and after.
  void str(std::string_view s) {
    in.check_output_size(add_sat(out.size(), s.size() + 2));
    str_escaped(s);
    in.check_output_size(out.size());
  }

  void str_escaped(std::string_view s) {
    out += '"';
    std::size_t i = 0;
    while (i < s.size()) {
      // Copy the run of bytes that need no escaping in one go.
      std::size_t run = i;
      while (run < s.size()) {
        unsigned char b = static_cast<unsigned char>(s[run]);
        if (b < 0x20 || b == '"' || b == '\\' || (ensure_ascii && b >= 0x7f)) break;
        ++run;
      }
      if (run > i) {
        out.append(s.data() + i, run - i);
        i = run;
        if (i >= s.size()) break;
      }
      unsigned char c = static_cast<unsigned char>(s[i]);
      switch (c) {
        case '"':
          out += "\\\"";
          ++i;
          continue;
        case '\\':
          out += "\\\\";
          ++i;
          continue;
        case '\n':
          out += "\\n";
          ++i;
          continue;
        case '\r':
          out += "\\r";
          ++i;
          continue;
        case '\t':
          out += "\\t";
          ++i;
          continue;
        case '\b':
          out += "\\b";
          ++i;
          continue;
        case '\f':
          out += "\\f";
          ++i;
          continue;
        default:
          break;
      }
      char buf[16];
      if (c < 0x20 || (ensure_ascii && c == 0x7f)) {
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
        ++i;
        continue;
      }
      if (c < 0x80 || !ensure_ascii) {
        out += static_cast<char>(c);
        ++i;
        continue;
      }
      auto d = base::decode_utf8(s, i);
      char32_t cp = d.status == base::utf8_status::ok ? d.code_point : 0xFFFD;
      std::size_t len = d.length ? d.length : 1;
      if (cp >= 0x10000) {
        char32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                      static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      }
      out += buf;
      i += len;
    }
    out += '"';
  }

  void number(const value& v) {
    if (v.is_float()) {
      double d = v.as_float();
      if (std::isnan(d))
        out += "NaN";
      else if (std::isinf(d))
        out += d < 0 ? "-Infinity" : "Infinity";
      else
        append_float_repr(out, d);
    } else {
      out += std::to_string(v.as_int());
    }
  }

  void newline(std::size_t level) {
    in.check_output_size(add_sat(out.size() + 1, mul_sat(level, indent.size())));
    out += '\n';
    for (std::size_t i = 0; i < level; ++i) out += indent;
  }

  std::string key_string(const value& k) {
    if (k.is_string()) return k.str();
    if (k.is_bool()) return k.as_bool() ? "true" : "false";
    if (k.is_none()) return "null";
    if (k.is_int() || k.is_float()) {
      std::string saved;
      std::swap(saved, out);
      number(k);
      std::swap(saved, out);
      return saved;
    }
    in.fail("keys must be str, int, float, bool or None, not " + type_name(k));
  }

  // A container still viewing the JSON context is written straight from the JSON node (same
  // output as converting it first: from_json's rules, None past max_json_level).
  void write_json(const json::value& j, std::size_t level, std::uint32_t jlevel) {
    if (level > 512) in.fail("maximum recursion depth exceeded while encoding a JSON object");
    in.check_output_size(out.size());
    if (jlevel > max_json_level) {
      out += "null";
      return;
    }
    switch (j.type()) {
      case json::value::value_t::array: {
        if (j.empty()) {
          out += "[]";
          return;
        }
        out += '[';
        bool first = true;
        for (const auto& e : j) {
          if (!first) out += item_sep;
          first = false;
          if (has_indent) newline(level + 1);
          write_json(e, level + 1, jlevel + 1);
        }
        if (has_indent) newline(level);
        out += ']';
        return;
      }
      case json::value::value_t::object: {
        if (j.empty()) {
          out += "{}";
          return;
        }
        out += '{';
        bool first = true;
        for (auto it = j.begin(); it != j.end(); ++it) {
          if (!first) out += item_sep;
          first = false;
          if (has_indent) newline(level + 1);
          str(it.key());
          out += key_sep;
          write_json(it.value(), level + 1, jlevel + 1);
        }
        if (has_indent) newline(level);
        out += '}';
        return;
      }
      default:
        write(from_json(j, jlevel), level);
    }
  }

  void write(const value& v, std::size_t level) {
    if (level > 512) in.fail("maximum recursion depth exceeded while encoding a JSON object");
    in.check_output_size(out.size());
    if (!sort_keys && (v.is_list() || v.is_dict()) && v.view_kind() == value::view::none) {
      const auto& backing =
          v.is_list() ? static_cast<const json_backed&>(static_cast<const list_obj&>(*v.ptr()))
                      : static_cast<const json_backed&>(static_cast<const dict_obj&>(*v.ptr()));
      if (backing.src) {
        write_json(*backing.src, level, backing.level);
        return;
      }
    }
    switch (v.kind()) {
      case vkind::none:
        out += "null";
        return;
      case vkind::boolean:
        out += v.as_bool() ? "true" : "false";
        return;
      case vkind::integer:
      case vkind::floating:
        number(v);
        return;
      case vkind::string:
        str(v.str());
        return;
      case vkind::list:
      case vkind::tuple: {
        if (v.view_kind() != value::view::none)
          in.fail("Object of type " + type_name(v) + " is not JSON serializable");
        const auto& items = v.items();
        if (items.empty()) {
          out += "[]";
          return;
        }
        out += '[';
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep;
          if (has_indent) newline(level + 1);
          write(items[i], level + 1);
        }
        if (has_indent) newline(level);
        out += ']';
        return;
      }
      case vkind::dict: {
        const auto& d = v.dict();
        if (d.size() == 0) {
          out += "{}";
          return;
        }
        std::vector<const std::pair<value, value>*> entries;
        for (const auto& e : d.entries) entries.push_back(&e);
        if (sort_keys)
          std::stable_sort(entries.begin(), entries.end(), [&](auto* a, auto* b) {
            return order(in, a->first, b->first, "<") < 0;
          });
        out += '{';
        bool first = true;
        for (auto* e : entries) {
          if (!first) out += item_sep;
          first = false;
          if (has_indent) newline(level + 1);
          str(key_string(e->first));
          out += key_sep;
          write(e->second, level + 1);
        }
        if (has_indent) newline(level);
        out += '}';
        return;
      }
      case vkind::generator:
        if (in.options.compat) {  // consumed into a list, as the compat environment does
          write(value::list(v.take_all()), level);
          return;
        }
        [[fallthrough]];
      default:
        in.fail("Object of type " + type_name(v) + " is not JSON serializable");
    }
  }
};

}  // namespace

std::string tojson(interp& in, const value& v, const value& indent, const value& separators,
                   bool sort_keys, bool ensure_ascii) {
  json_writer w{in, "", false, ", ", ": ", sort_keys, ensure_ascii, {}};
  if (!indent.is_none() && !indent.is_undefined()) {
    w.has_indent = true;
    w.item_sep = ",";
    if (indent.is_string()) {
      w.indent = indent.str();
    } else {
      auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(0, indent.as_int()));
      in.check_output_size(n);
      w.indent = std::string(n, ' ');
    }
  }
  if (!separators.is_none() && !separators.is_undefined()) {
    auto seps = iterate(in, separators);
    if (seps.size() != 2) in.fail("separators must be a (item_separator, key_separator) pair");
    w.item_sep = to_str(seps[0]);
    w.key_sep = to_str(seps[1]);
  }
  w.write(v, 0);
  return std::move(w.out);
}

const std::shared_ptr<scope>& builtin_globals() {
  static const std::shared_ptr<scope> globals = [] {
    auto s = std::make_shared<scope>(nullptr);
    add(*s, "range", fn_range);
    add(*s, "dict", fn_dict);
    add(*s, "namespace", fn_namespace);
    add(*s, "raise_exception", fn_raise);
    add(*s, "strftime_now", fn_strftime);
    add(*s, "joiner", fn_joiner);
    add(*s, "cycler", fn_cycler);
    return s;
  }();
  return globals;
}

}  // namespace chatpeg::jinja::detail

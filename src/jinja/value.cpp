// Values with Python semantics: construction, truthiness, equality, str() and repr()
// (including Python's shortest round-trip float repr and its string quoting rules), and the
// conversion from JSON contexts (objects keep key order, as Python dicts do).
#include "jinja/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "chatpeg/base/utf8.h"

namespace chatpeg::jinja::detail {

namespace {
thread_local render_meter* tl_meter = nullptr;

std::string limit_text(const char* what, std::uint64_t n, const char* unit) {
  return std::string(what) + " (" + std::to_string(n) + unit + ") exceeded";
}

}  // namespace

object::~object() {
  // Only the render that charged the object (still running on this thread) is credited;
  // objects never outlive their render, this is a guard.
  if (meter_ != nullptr && meter_ == tl_meter) meter_->release(charged_);
}

void object::charge(std::uint64_t bytes) {
  if (tl_meter == nullptr) return;
  if (meter_ == nullptr) meter_ = tl_meter;
  if (meter_ != tl_meter) return;
  charged_ += bytes;
  meter_->charge(bytes);
}

void render_meter::charge(std::uint64_t bytes) {
  allocated += bytes;
  live += bytes;
  if (live > peak) peak = live;
  if (live > max_total)
    throw render_failure{base::errc::limit_exceeded,
                         limit_text("memory limit", max_total, " bytes"),
                         offset ? *offset : base::npos};
}

void render_meter::check_value(std::uint64_t bytes) const {
  if (bytes > max_value)
    throw render_failure{base::errc::limit_exceeded,
                         limit_text("output size limit", max_value, " bytes"),
                         offset ? *offset : base::npos};
}

render_meter* current_meter() {
  return tl_meter;
}

meter_scope::meter_scope(render_meter* m) : saved_(tl_meter) {
  tl_meter = m;
}

meter_scope::~meter_scope() {
  tl_meter = saved_;
}

value value::string(std::string s) {
  value v(vkind::string);
  const std::uint64_t n = string_charge + s.size();
  v.ptr_ = std::make_shared<string_obj>(std::move(s));
  v.ptr_->charge(n);
  return v;
}
value value::markup(std::string s) {
  value v = string(std::move(s));
  v.markup_ = true;
  return v;
}
value value::generator(std::vector<value> items) {
  value v(vkind::generator);
  const std::uint64_t n = string_charge + items.size() * slot_charge;
  v.ptr_ = std::make_shared<list_obj>(std::move(items));
  v.ptr_->charge(n);
  return v;
}
value value::list(std::vector<value> items) {
  value v(vkind::list);
  const std::uint64_t n = string_charge + items.size() * slot_charge;
  v.ptr_ = std::make_shared<list_obj>(std::move(items));
  v.ptr_->charge(n);
  return v;
}
value value::list(std::shared_ptr<list_obj> l) {
  value v(vkind::list);
  v.ptr_ = std::move(l);
  return v;
}
value value::range(std::vector<value> items, range_args r) {
  const std::uint64_t n = string_charge + items.size() * slot_charge;
  auto l = std::make_shared<list_obj>(std::move(items));
  l->charge(n);
  l->range_start = r.start;
  l->range_stop = r.stop;
  l->range_step = r.step;
  value v = list(std::move(l));
  v.view_ = view::range;
  return v;
}
value::range_args value::range_of() const {
  const auto& l = static_cast<const list_obj&>(*ptr_);
  return {l.range_start, l.range_stop, l.range_step};
}
value value::tuple(std::vector<value> items) {
  value v(vkind::tuple);
  const std::uint64_t n = string_charge + items.size() * slot_charge;
  v.ptr_ = std::make_shared<list_obj>(std::move(items));
  v.ptr_->charge(n);
  return v;
}
value value::dict(std::shared_ptr<dict_obj> d) {
  value v(vkind::dict);
  v.ptr_ = std::move(d);
  return v;
}
value value::ns(std::shared_ptr<dict_obj> d) {
  value v(vkind::ns);
  v.ptr_ = std::move(d);
  return v;
}
value value::callable(std::shared_ptr<callable_obj> c) {
  value v(vkind::callable);
  v.ptr_ = std::move(c);
  return v;
}
value value::loop(std::shared_ptr<loop_obj> l) {
  value v(vkind::loop);
  v.ptr_ = std::move(l);
  return v;
}
value value::undefined(std::string hint, bool unsafe) {
  value v(vkind::undefined);
  auto u = std::make_shared<undefined_obj>();
  u->hint = std::move(hint);
  u->unsafe = unsafe;
  v.ptr_ = std::move(u);
  return v;
}

static const std::string empty_string;
static const std::vector<value> empty_items;

value value::missing_attr(const value& owner, std::string_view attr) {
  value v(vkind::undefined);
  auto u = std::make_shared<undefined_obj>();
  u->missed = undefined_obj::miss::attribute;
  u->owner = owner.type_only();
  u->attr = attr;
  v.ptr_ = std::move(u);
  return v;
}
value value::missing_item(const value& owner, const value& key) {
  value v(vkind::undefined);
  auto u = std::make_shared<undefined_obj>();
  u->owner = owner.type_only();
  if (key.is_string() || key.is_number() || key.is_none()) {
    u->missed = undefined_obj::miss::item;
    u->key = key;
  } else {
    u->hint = (owner.is_none() ? std::string("None") : type_name(owner) + " object") +
              " has no element " + to_repr(key);
  }
  v.ptr_ = std::move(u);
  return v;
}

const std::string& value::str() const {
  if (kind_ != vkind::string) return empty_string;
  if (!ptr_) return ext_ ? *ext_ : empty_string;
  return static_cast<const string_obj&>(*ptr_).s;
}
const std::vector<value>& value::items() const {
  if ((kind_ != vkind::list && kind_ != vkind::tuple && kind_ != vkind::generator) || !ptr_)
    return empty_items;
  return static_cast<const list_obj&>(*ptr_).items();
}
std::vector<value> value::take_all() const {
  const auto& l = static_cast<const list_obj&>(*ptr_);
  const auto& items = l.items();
  std::vector<value> out(items.begin() + static_cast<std::ptrdiff_t>(l.consumed), items.end());
  l.consumed = items.size();
  return out;
}

bool value::take_one(value& out) const {
  const auto& l = static_cast<const list_obj&>(*ptr_);
  const auto& items = l.items();
  if (l.consumed >= items.size()) return false;
  out = items[l.consumed++];
  return true;
}

const dict_obj& value::dict() const {
  const auto& d = static_cast<const dict_obj&>(*ptr_);
  if (!d.ready) d.materialize();
  return d;
}
list_obj& value::mutable_list() const {
  return static_cast<list_obj&>(*ptr_);
}
dict_obj& value::mutable_ns() const {
  return static_cast<dict_obj&>(*ptr_);
}
const callable_obj& value::fn() const {
  return static_cast<const callable_obj&>(*ptr_);
}
loop_obj& value::loop_state() const {
  return static_cast<loop_obj&>(*ptr_);
}
const undefined_obj* value::undef() const {
  if (kind_ != vkind::undefined || !ptr_) return nullptr;
  return static_cast<const undefined_obj*>(ptr_.get());
}

value callable_obj::attr(interp&, std::string_view name) const {
  return value::undefined("'function object' has no attribute '" + std::string(name) + "'");
}

bool value::truthy() const {
  switch (kind_) {
    case vkind::undefined:
    case vkind::none:
      return false;
    case vkind::boolean:
    case vkind::integer:
      return i_ != 0;
    case vkind::floating:
      return f_ != 0.0;
    case vkind::string:
      return !str().empty();
    case vkind::list:
    case vkind::tuple:
      return !items().empty();
    case vkind::dict:
      return dict().size() != 0;
    default:
      return true;
  }
}

// ---- lazy JSON containers ----

// Nesting depth of the value a JSON node at `level` converts to (nodes past max_json_level
// are None).
static std::uint32_t json_depth(const json::value& j, std::uint32_t level) {
  if (level > max_json_level || !j.is_structured()) return 0;
  std::uint32_t d = 1;
  if (j.is_array()) {
    for (const auto& e : j) d = std::max(d, json_depth(e, level + 1) + 1);
  } else {
    for (auto it = j.begin(); it != j.end(); ++it)
      d = std::max(d, json_depth(it.value(), level + 1) + 1);
  }
  return d;
}

list_obj::list_obj(const json::value& j, std::uint32_t lvl) {
  src = &j;
  level = lvl;
  ready = false;
  depth_known = false;
}

void list_obj::materialize() const {
  items_.reserve(src->size());
  for (const auto& e : *src) items_.push_back(from_json(e, level + 1));
  ready = true;
}

std::uint32_t list_obj::depth() const {
  if (!depth_known) {
    depth_ = json_depth(*src, level);
    depth_known = true;
  }
  return depth_;
}

dict_obj::dict_obj(const json::value& j, std::uint32_t lvl) {
  src = &j;
  level = lvl;
  ready = false;
  depth_known = false;
}

void dict_obj::materialize() const {
  entries.reserve(src->size());
  for (auto it = src->begin(); it != src->end(); ++it)
    entries.emplace_back(value::string_ref(it.key()), from_json(it.value(), level + 1));
  ready = true;
}

std::uint32_t dict_obj::depth() const {
  if (!depth_known) {
    depth_ = json_depth(*src, level);
    depth_known = true;
  }
  return depth_;
}

const value* dict_obj::find(const value& key) const {
  if (!ready) materialize();
  if (key.is_string()) return find(std::string_view(key.str()));
  for (const auto& e : entries)
    if (equals(e.first, key)) return &e.second;
  return nullptr;
}

const value* dict_obj::find(std::string_view key) const {
  if (!ready) materialize();
  for (const auto& e : entries)
    if (e.first.is_string() && e.first.str() == key) return &e.second;
  return nullptr;
}

std::uint32_t value_depth(const value& v) {
  switch (v.kind()) {
    case vkind::list:
    case vkind::tuple:
    case vkind::generator:
      return static_cast<const list_obj&>(*v.ptr()).depth();
    case vkind::dict:
    case vkind::ns:
      return static_cast<const dict_obj&>(*v.ptr()).depth();
    default:
      return 0;
  }
}

void dict_obj::set(value key, value v) {
  if (!ready) materialize();  // (lazy dicts are never assigned to; kept safe anyway)
  depth_ = std::max(depth(), value_depth(v) + 1);
  for (auto& e : entries) {
    if (equals(e.first, key)) {
      e.second = std::move(v);
      return;
    }
  }
  charge(2 * slot_charge);
  entries.emplace_back(std::move(key), std::move(v));
}

bool equals(const value& a, const value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case vkind::undefined:
    case vkind::none:
      return true;
    case vkind::string:
      return a.str() == b.str();
    case vkind::list:
    case vkind::tuple: {
      if (a.view_kind() != b.view_kind()) return false;
      const auto& x = a.items();
      const auto& y = b.items();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!equals(x[i], y[i])) return false;
      return true;
    }
    case vkind::dict: {
      const auto& x = a.dict();
      const auto& y = b.dict();
      if (x.size() != y.size()) return false;
      for (const auto& e : x.entries) {
        const value* o = y.find(e.first);
        if (!o || !equals(e.second, *o)) return false;
      }
      return true;
    }
    default:
      return a.ptr() == b.ptr();
  }
}

void append_float_repr(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  bool neg = false;
  if (!sci.empty() && sci[0] == '-') {
    neg = true;
    sci.remove_prefix(1);
  }
  auto epos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, epos))
    if (c != '.') digits += c;
  int exp = std::atoi(std::string(sci.substr(epos + 1)).c_str());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int decpt = exp + 1;
  if (neg) out += '-';
  int nd = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (nd > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += 'e';
    out += exp < 0 ? '-' : '+';
    int ae = exp < 0 ? -exp : exp;
    if (ae < 10) out += '0';
    out += std::to_string(ae);
  } else if (decpt <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-decpt), '0');
    out += digits;
  } else if (decpt >= nd) {
    out += digits;
    out.append(static_cast<std::size_t>(decpt - nd), '0');
    out += ".0";
  } else {
    out.append(digits, 0, static_cast<std::size_t>(decpt));
    out += '.';
    out.append(digits, static_cast<std::size_t>(decpt));
  }
}

static bool printable(char32_t cp) {
  if (cp < 0x20 || cp == 0x7f) return false;
  if (cp >= 0x80 && cp <= 0xa0) return false;
  if (cp == 0xad) return false;
  if (cp >= 0x2000 && cp <= 0x200f) return false;
  if (cp >= 0x2028 && cp <= 0x202f) return false;
  if (cp >= 0x205f && cp <= 0x206f) return false;
  if (cp == 0x3000 || cp == 0xfeff) return false;
  if (cp >= 0xd800 && cp <= 0xdfff) return false;
  if (cp >= 0xe000 && cp <= 0xf8ff) return false;
  if (cp >= 0xfff0 && cp <= 0xfffb) return false;
  if (cp >= 0xf0000) return false;
  return true;
}

static void append_string_repr(std::string& out, std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  out += q;
  std::size_t i = 0;
  while (i < s.size()) {
    auto d = base::decode_utf8(s, i);
    std::size_t len = d.length ? d.length : 1;
    char32_t cp = d.status == base::utf8_status::ok ? d.code_point : 0xfffd;
    if (cp == static_cast<char32_t>(q) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (!printable(cp)) {
      char buf[16];
      if (cp < 0x100)
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      else if (cp < 0x10000)
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      else
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  out += q;
}

// "k1: v1, k2: v2" with Python reprs, shared by dict and namespace printing.
static void append_dict_entries(std::string& out, const value& v) {
  bool first = true;
  for (const auto& e : v.dict().entries) {
    if (!first) out += ", ";
    first = false;
    append_repr(out, e.first);
    out += ": ";
    append_repr(out, e.second);
    if (tl_meter) tl_meter->check_value(out.size());
  }
}

void append_repr(std::string& out, const value& v) {
  switch (v.kind()) {
    case vkind::string:
      if (tl_meter) tl_meter->check_value(out.size() + v.str().size());
      if (v.is_markup()) {
        out += "Markup(";
        append_string_repr(out, v.str());
        out += ')';
        return;
      }
      append_string_repr(out, v.str());
      return;
    case vkind::list:
    case vkind::tuple: {
      if (v.view_kind() == value::view::range) {
        auto r = v.range_of();
        out += "range(" + std::to_string(r.start) + ", " + std::to_string(r.stop);
        if (r.step != 1) out += ", " + std::to_string(r.step);
        out += ')';
        return;
      }
      if (v.view_kind() != value::view::none) {
        static const char* const names[] = {"", "dict_items(", "dict_keys(", "dict_values("};
        out += names[static_cast<int>(v.view_kind())];
        append_repr(out, value::list(v.items()));
        out += ')';
        return;
      }
      bool tuple = v.is_tuple();
      out += tuple ? '(' : '[';
      const auto& items = v.items();
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        append_repr(out, items[i]);
        if (tl_meter) tl_meter->check_value(out.size());
      }
      if (tuple && items.size() == 1) out += ',';
      out += tuple ? ')' : ']';
      return;
    }
    case vkind::dict:
      out += '{';
      append_dict_entries(out, v);
      out += '}';
      return;
    case vkind::undefined:
      return;
    default:
      append_str(out, v);
  }
}

void append_str(std::string& out, const value& v) {
  switch (v.kind()) {
    case vkind::undefined:
      return;
    case vkind::none:
      out += "None";
      return;
    case vkind::boolean:
      out += v.as_bool() ? "True" : "False";
      return;
    case vkind::integer: {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, v.as_int());
      out.append(buf, r.ptr);
      return;
    }
    case vkind::floating:
      append_float_repr(out, v.as_float());
      return;
    case vkind::string:
      out += v.str();
      return;
    case vkind::list:
    case vkind::tuple:
    case vkind::dict:
      append_repr(out, v);
      return;
    case vkind::ns:
      out += "<Namespace {";
      append_dict_entries(out, v);
      out += "}>";
      return;
    case vkind::callable:
      out += v.fn().repr();
      return;
    case vkind::generator:
      out += "<generator object>";
      return;
    case vkind::loop: {
      const auto& l = v.loop_state();
      out += "<LoopContext " + std::to_string(l.index0 + 1) + "/" + std::to_string(l.length) + ">";
      return;
    }
  }
}

std::string to_str(const value& v) {
  if (v.is_string()) return v.str();
  std::string out;
  append_str(out, v);
  return out;
}

std::string to_repr(const value& v) {
  std::string out;
  append_repr(out, v);
  return out;
}

std::string type_name(const value& v) {
  switch (v.kind()) {
    case vkind::undefined:
      return "Undefined";
    case vkind::none:
      return "NoneType";
    case vkind::boolean:
      return "bool";
    case vkind::integer:
      return "int";
    case vkind::floating:
      return "float";
    case vkind::string:
      return "str";
    case vkind::list:
      switch (v.view_kind()) {
        case value::view::items:
          return "dict_items";
        case value::view::keys:
          return "dict_keys";
        case value::view::values:
          return "dict_values";
        case value::view::range:
          return "range";
        default:
          return "list";
      }
    case vkind::tuple:
      return "tuple";
    case vkind::dict:
      return "dict";
    case vkind::ns:
      return "Namespace";
    case vkind::callable:
      return "function";
    case vkind::loop:
      return "LoopContext";
    case vkind::generator:
      return "generator";
  }
  return "object";
}

value from_json(const json::value& j, std::uint32_t level) {
  if (level > max_json_level) return value::none();
  switch (j.type()) {
    case json::value::value_t::null:
      return value::none();
    case json::value::value_t::boolean:
      return value::boolean(j.get<bool>());
    case json::value::value_t::number_integer:
      return value::integer(j.get<std::int64_t>());
    case json::value::value_t::number_unsigned: {
      auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return value::floating(static_cast<double>(u));
      return value::integer(static_cast<std::int64_t>(u));
    }
    case json::value::value_t::number_float:
      return value::floating(j.get<double>());
    case json::value::value_t::string:
      return value::string_ref(j.get_ref<const std::string&>());
    case json::value::value_t::array: {
      return value::list(std::make_shared<list_obj>(j, level));
    }
    case json::value::value_t::object:
      return value::dict(std::make_shared<dict_obj>(j, level));
    default:
      return value::none();
  }
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::size_t utf8_prefix_bytes(std::string_view s, std::size_t n) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (seen++ == n) return i;
  }
  return s.size();
}

std::vector<std::string_view> utf8_chars(std::string_view s) {
  std::vector<std::string_view> out;
  out.reserve(utf8_length(s));  // not s.size(): 16 bytes per byte of a large string
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i + 1;
    while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace chatpeg::jinja::detail

// Runtime values of the Jinja engine: a small tagged type with Python semantics (None,
// bool, int, float, str, list, tuple, ordered dict, namespace, callables, loop objects and
// Jinja's lenient Undefined). Heap parts are shared and immutable once built, except
// namespaces (assignable attributes), so copying a value is cheap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chatpeg/base/error.h"
#include "chatpeg/json/json.h"

namespace chatpeg::jinja::detail {

// Thrown to stop a render; turned into base::error at the API edge (render()).
struct render_failure {
  base::errc code;
  std::string message;
  std::size_t offset;  // npos when unknown
};

// Memory accounting of one render, reachable from value construction through a thread-local
// pointer while the render runs (renders are single-threaded; concurrent renders on other
// threads have their own). Every string, list/tuple slot and dict entry the template creates
// is charged to the heap object holding it when it is wrapped as a value, and released when
// that object dies; the live sum is bounded by render_limits::max_total_bytes, so a render's
// heap never exceeds that bound plus the value being built (itself checked against
// max_output_bytes before it is allocated).
struct render_meter {
  std::uint64_t live = 0;               // bytes held by live objects of this render
  std::uint64_t peak = 0;               // highest `live`
  std::uint64_t allocated = 0;          // cumulative
  std::uint64_t max_total = 0;          // render_limits::max_total_bytes
  std::uint64_t max_value = 0;          // render_limits::max_output_bytes: any one value
  const std::size_t* offset = nullptr;  // node being evaluated (for the error location)
  void charge(std::uint64_t bytes);     // throws render_failure when live passes max_total
  void release(std::uint64_t bytes) { live -= bytes < live ? bytes : live; }
  void check_value(std::uint64_t bytes) const;  // throws render_failure past max_value
};
render_meter* current_meter();  // null outside a render
class meter_scope {             // installs a meter for the current thread
 public:
  explicit meter_scope(render_meter* m);
  ~meter_scope();
  meter_scope(const meter_scope&) = delete;
  meter_scope& operator=(const meter_scope&) = delete;

 private:
  render_meter* saved_;
};
// Bytes charged for a container slot / a string object (its header and allocator overhead).
constexpr std::uint64_t slot_charge = 32;
constexpr std::uint64_t string_charge = 48;

enum class vkind : std::uint8_t {
  undefined,
  none,
  boolean,
  integer,
  floating,
  string,
  list,
  tuple,
  dict,
  ns,
  callable,
  loop,
  generator,  // a one-shot iterator (what select/map/... return in Jinja2)
};

// Heap part of a value. Objects created while a render runs remember what they were charged
// (render_meter) and give it back when destroyed.
struct object {
  object() = default;
  object(const object&) : object() {}  // a copy is charged on its own
  object& operator=(const object&) { return *this; }
  virtual ~object();
  // Charges `bytes` to the running render's meter (if any) on behalf of this object; throws
  // render_failure past the memory limit (the object still releases them when it dies).
  void charge(std::uint64_t bytes);

 private:
  render_meter* meter_ = nullptr;
  std::uint64_t charged_ = 0;
};

class value;
struct string_obj;
struct list_obj;
struct dict_obj;
struct callable_obj;
struct loop_obj;
struct undefined_obj;

class value {
 public:
  value() = default;
  static value none() { return value(vkind::none); }
  static value boolean(bool b) {
    value v(vkind::boolean);
    v.i_ = b ? 1 : 0;
    return v;
  }
  static value integer(std::int64_t i) {
    value v(vkind::integer);
    v.i_ = i;
    return v;
  }
  static value floating(double d) {
    value v(vkind::floating);
    v.f_ = d;
    return v;
  }
  static value string(std::string s);
  // A str borrowing `s` (a string of the render's JSON context, which outlives every value
  // of the render): no copy, no allocation.
  static value string_ref(const std::string& s) {
    value v(vkind::string);
    v.ext_ = &s;
    return v;
  }
  static value markup(std::string s);  // Jinja's Markup: a str that escapes what is added
  static value generator(std::vector<value> items);
  static value list(std::vector<value> items);
  static value list(std::shared_ptr<list_obj> l);
  static value tuple(std::vector<value> items);
  static value dict(std::shared_ptr<dict_obj> d);
  static value ns(std::shared_ptr<dict_obj> d);
  static value callable(std::shared_ptr<callable_obj> c);
  static value loop(std::shared_ptr<loop_obj> l);
  // An Undefined remembering what was looked up (for error messages); `unsafe` makes any use
  // other than printing a security error.
  static value undefined(std::string hint, bool unsafe = false);
  static value missing_attr(const value& owner, std::string_view attr);
  static value missing_item(const value& owner, const value& key);
  // The Undefined of a variable lookup: keeps a view of the name (from the program), so a
  // miss allocates nothing; the message "'name' is undefined" is built only on error.
  static value undefined_name(const std::string& name) {
    value v(vkind::undefined);
    v.ext_ = &name;
    return v;
  }
  const std::string* undefined_name() const {
    return kind_ == vkind::undefined && !ptr_ ? ext_ : nullptr;
  }

  vkind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == vkind::undefined; }
  bool is_none() const { return kind_ == vkind::none; }
  bool is_bool() const { return kind_ == vkind::boolean; }
  bool is_int() const { return kind_ == vkind::integer; }
  bool is_float() const { return kind_ == vkind::floating; }
  bool is_number() const {
    return kind_ == vkind::integer || kind_ == vkind::floating || kind_ == vkind::boolean;
  }
  bool is_string() const { return kind_ == vkind::string; }
  bool is_markup() const { return kind_ == vkind::string && markup_; }
  // dict.items()/keys()/values() results: lists that print as dict_items([...]) etc., are
  // not JSON serializable and not subscriptable, as Python's dict views.
  // range(...) results are lists too (view::range): they print as range(a, b[, step]), are
  // subscriptable, slice into ranges and are not JSON serializable.
  enum class view : std::uint8_t { none, items, keys, values, range };
  struct range_args {
    std::int64_t start, stop, step;
  };
  static value range(std::vector<value> items, range_args r);
  range_args range_of() const;  // view::range only
  static value dict_view(std::vector<value> items, view kind) {
    value v = list(std::move(items));
    v.view_ = kind;
    return v;
  }
  view view_kind() const { return kind_ == vkind::list ? view_ : view::none; }
  bool is_generator() const { return kind_ == vkind::generator; }
  bool is_list() const { return kind_ == vkind::list; }
  bool is_tuple() const { return kind_ == vkind::tuple; }
  bool is_sequence() const { return kind_ == vkind::list || kind_ == vkind::tuple; }
  bool is_dict() const { return kind_ == vkind::dict; }
  bool is_ns() const { return kind_ == vkind::ns; }
  bool is_callable() const { return kind_ == vkind::callable; }

  bool as_bool() const { return i_ != 0; }
  std::int64_t as_int() const { return i_; }  // also bool (0/1)
  double as_float() const { return kind_ == vkind::floating ? f_ : static_cast<double>(i_); }
  const std::string& str() const;
  const std::vector<value>& items() const;  // list or tuple (generators: see take_all)
  // Generators: the items not consumed yet, marking them consumed (Python's one-shot
  // iteration); take_one() consumes a single item.
  std::vector<value> take_all() const;
  bool take_one(value& out) const;
  const dict_obj& dict() const;    // dict or namespace
  dict_obj& mutable_ns() const;    // namespace only
  list_obj& mutable_list() const;  // list only (compat mode's mutable sandbox)
  const callable_obj& fn() const;
  loop_obj& loop_state() const;
  const undefined_obj* undef() const;  // may be null
  const std::shared_ptr<object>& ptr() const { return ptr_; }
  // A value of the same type holding nothing (for type_name in deferred messages).
  value type_only() const {
    value v(kind_);
    v.view_ = view_;
    v.markup_ = markup_;
    return v;
  }
  // Object identity for Python's `is` (sameas): the heap object or the borrowed string.
  const void* identity() const {
    if (ptr_) return ptr_.get();
    return kind_ == vkind::string ? static_cast<const void*>(ext_) : nullptr;
  }

  bool truthy() const;

 private:
  explicit value(vkind k) : kind_(k) {}
  vkind kind_ = vkind::undefined;
  bool markup_ = false;
  view view_ = view::none;
  union {
    std::int64_t i_ = 0;
    double f_;
    const std::string* ext_;  // borrowed str (kind string with a null ptr_)
  };
  std::shared_ptr<object> ptr_;
};

struct string_obj final : object {
  explicit string_obj(std::string v) : s(std::move(v)) {}
  std::string s;
};

std::uint32_t value_depth(const value& v);  // container nesting depth (0 for scalars)

// Containers are either built by the template (eager) or wrap a node of the JSON context
// (lazy: `src` set, children converted on first access, strings borrowed). Lazy containers
// are immutable, like everything passed into the sandbox.
struct json_backed {
  const json::value* src = nullptr;
  std::uint32_t level = 0;           // nesting level of src in the context
  mutable bool ready = true;         // children converted
  mutable bool depth_known = true;   // depth_ valid (lazy: computed on demand)
  mutable std::uint32_t depth_ = 1;  // container nesting depth
};

struct list_obj final : object, json_backed {
  explicit list_obj(std::vector<value> v) : items_(std::move(v)) {
    for (const auto& x : items_) depth_ = std::max(depth_, value_depth(x) + 1);
  }
  list_obj(const json::value& j, std::uint32_t lvl);
  const std::vector<value>& items() const {
    if (!ready) materialize();
    return items_;
  }
  std::uint32_t depth() const;
  // Compat mode (mutable sandbox) only: the items for in-place mutation (the list stops
  // viewing the JSON context); call touched() afterwards.
  std::vector<value>& mutable_items() {
    if (!ready) materialize();
    src = nullptr;
    return items_;
  }
  void touched() {
    depth_ = 1;
    for (const auto& x : items_) depth_ = std::max(depth_, value_depth(x) + 1);
    depth_known = true;
  }
  // After items were added at the end of mutable_items(), from index `from` on: the depth
  // grows by what they add (the items before are unchanged).
  void appended(std::size_t from) {
    const std::uint32_t known = depth();
    depth_ = known;
    for (std::size_t i = from; i < items_.size(); ++i)
      depth_ = std::max(depth_, value_depth(items_[i]) + 1);
  }
  mutable std::size_t consumed = 0;  // generators are one-shot: items before this are gone
  std::int64_t range_start = 0, range_stop = 0, range_step = 1;  // view::range only

 private:
  void materialize() const;
  mutable std::vector<value> items_;
};

struct undefined_obj final : object {
  std::string hint;  // "'x' is undefined" style message
  bool unsafe = false;
  // A failed lookup owner.attr / owner[key]: the message is built only if the Undefined
  // ends up in an error (see undefined_message in ops.cpp); misses are common and cheap.
  enum class miss : std::uint8_t { none, attribute, item } missed = miss::none;
  value owner;  // only its type (no reference kept: no cycles through namespaces)
  value key;    // scalars only (other keys get their message built right away)
  std::string attr;
};

// Insertion-ordered mapping with Python key equality. Use it through value::dict(), which
// converts a lazy JSON object's entries first.
struct dict_obj final : object, json_backed {
  dict_obj() = default;
  dict_obj(const json::value& j, std::uint32_t lvl);
  dict_obj(const dict_obj& o) : object(), json_backed(), entries(o.entries) {
    depth_ = o.depth();
    charge(entries.size() * 2 * slot_charge);
  }
  mutable std::vector<std::pair<value, value>> entries;
  const value* find(const value& key) const;
  const value* find(std::string_view key) const;
  void set(value key, value v);
  std::size_t size() const {
    if (!ready) materialize();
    return entries.size();
  }
  std::uint32_t depth() const;
  void materialize() const;
};

class interp;

struct call_args {
  std::vector<value> positional;
  std::vector<std::pair<std::string, value>> keyword;
};

// Anything callable from a template: macros, built-in functions, bound methods.
struct callable_obj : object {
  virtual value call(interp& in, call_args& args) const = 0;
  virtual std::string repr() const { return "<function>"; }
  // Attributes of callable objects (cycler.next, cycler.current); undefined by default.
  virtual value attr(interp& in, std::string_view name) const;
};

// State of the innermost for loop, exposed as `loop`.
struct loop_obj final : object {
  std::int64_t index0 = 0;
  std::int64_t length = 0;
  std::int64_t depth0 = 0;
  const std::vector<value>* items = nullptr;  // the (filtered) items being iterated
  value last_changed;                         // loop.changed() memory
  bool has_changed = false;
  value recurse;  // loop(...) for recursive loops, undefined otherwise
};

// ---- Python semantics helpers (value.cpp) ----

bool equals(const value& a, const value& b);
// Python str(): what {{ v }} prints (Undefined prints empty).
std::string to_str(const value& v);
void append_str(std::string& out, const value& v);
// Python repr().
std::string to_repr(const value& v);
void append_repr(std::string& out, const value& v);
void append_float_repr(std::string& out, double d);
std::string type_name(const value& v);
// The value of a JSON context node: scalars directly, strings borrowed, arrays and objects as
// lazy containers converted level by level on first access. `j` must outlive the value.
// Nodes nested deeper than max_json_level are None.
constexpr std::uint32_t max_json_level = 512;
value from_json(const json::value& j, std::uint32_t level = 0);

// UTF-8 code point helpers for Python-like str indexing.
std::size_t utf8_length(std::string_view s);
std::vector<std::string_view> utf8_chars(std::string_view s);
// Bytes of the first n code points of s (s.size() when it has fewer).
std::size_t utf8_prefix_bytes(std::string_view s, std::size_t n);

}  // namespace chatpeg::jinja::detail

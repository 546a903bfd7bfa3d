// Interpreter state for one render: parent-linked scopes (entering a scope or a loop
// iteration never copies variables), the output buffer, resource accounting against the
// render limits, and helpers shared by expression evaluation, statements and built-ins.
// Errors unwind as detail::render_failure and are turned into base::error at the API edge.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatpeg/jinja/jinja.h"
#include "jinja/ast.h"
#include "jinja/value.h"

namespace chatpeg::jinja::detail {

// Variable names are views: every name comes from the program's syntax tree, the JSON
// context or a string literal, all of which outlive the render.
struct scope {
  explicit scope(std::shared_ptr<scope> p) : parent(std::move(p)) {}
  std::shared_ptr<scope> parent;
  std::vector<std::pair<std::string_view, value>> vars;

  const value* find_local(std::string_view name) const {
    for (const auto& v : vars)
      if (v.first == name) return &v.second;
    return nullptr;
  }
  void set(std::string_view name, value v) {
    for (auto& e : vars)
      if (e.first == name) {
        e.second = std::move(v);
        return;
      }
    vars.emplace_back(name, std::move(v));
  }
};
using scope_ptr = std::shared_ptr<scope>;

class interp {
 public:
  interp(const program& prog, const render_options& options);

  const program& prog;
  const render_options& options;
  std::string* out = nullptr;
  scope_ptr current;
  std::size_t depth = 0;
  std::uint64_t iterations = 0;
  std::size_t current_offset = 0;  // offset of the node being evaluated (errors)
  std::chrono::steady_clock::time_point deadline;
  std::vector<scope_ptr> macro_scopes;  // cleared after rendering to break closure cycles
  std::uint32_t time_check_counter = 0;
  std::size_t peak_depth = 0;
  std::uint64_t work_done = 0, next_time_check = 0;
  render_meter meter;

  value lookup(std::string_view name) const;
  // The variable `name` or null (no Undefined built).
  const value* find(std::string_view name) const {
    for (const scope* s = current.get(); s; s = s->parent.get())
      if (const value* v = s->find_local(name)) return v;
    return nullptr;
  }

  [[noreturn]] void fail(std::string message, base::errc code = base::errc::template_error) const;
  [[noreturn]] void fail_at(std::size_t offset, std::string message,
                            base::errc code = base::errc::template_error) const;
  // Raises Jinja's UndefinedError for a use of an undefined value.
  [[noreturn]] void fail_undefined(const value& v) const;

  void write(std::string_view s);
  void write_value(const value& v);
  // Size checks run BEFORE the allocation they guard (sizes saturate instead of wrapping).
  void check_output_size(std::uint64_t n) const;
  void check_items(std::uint64_t n) const;  // a list of n slots (slot_charge bytes each)
  void count_iteration();
  void check_time();
  // Work outside loops (sorting, unique, membership scans): checks the clock every 64 Ki
  // units so a single built-in call cannot outlast max_time by much.
  void work(std::uint64_t units) {
    work_done += units;
    if (work_done >= next_time_check) {
      next_time_check = work_done + 65536;
      check_time();
    }
  }

  struct depth_guard {
    interp& in;
    explicit depth_guard(interp& i) : in(i) {
      if (++in.depth > in.peak_depth) in.peak_depth = in.depth;
      if (in.depth > in.options.limits.max_depth) {
        --in.depth;
        in.fail(
            "recursion depth limit (" + std::to_string(in.options.limits.max_depth) + ") exceeded",
            base::errc::limit_exceeded);
      }
    }
    ~depth_guard() { --in.depth; }
  };

  // Runs statements with `out` redirected into a fresh string.
  // `f` receives how the body ended (break/continue inside a captured block leave the
  // enclosing loop, as in Jinja's generated code).
  std::string capture(const body& b, scope_ptr s, flow* f = nullptr);
  flow exec_body(const body& b);
};

// ---- operations (ops.cpp) ----
std::string undefined_message(const undefined_obj& u);
value getattr_value(interp& in, const value& obj, std::string_view name);
value getitem_value(interp& in, const value& obj, const value& key);
std::string html_escape(std::string_view s);
value binary(interp& in, binary_op op, const value& a, const value& b);
bool compare(interp& in, compare_op op, const value& a, const value& b);
bool contains(interp& in, const value& container, const value& item);
int order(interp& in, const value& a, const value& b, const char* op);  // <0, 0, >0
std::vector<value> iterate(interp& in, const value& v);                 // Python iter() as a list
value call_value(interp& in, const value& callee, call_args& args);
// str % args; a Markup format (`markup`) escapes the %s/%r arguments and yields Markup.
value percent_format(interp& in, const std::string& fmt, const value& args, bool markup);
value slice_value(interp& in, const value& obj, const value& start, const value& stop,
                  const value& step);
std::int64_t length_of(interp& in, const value& v);

// ---- built-ins ----
value apply_filter(interp& in, std::string_view name, const value& operand, call_args& args);
bool apply_test(interp& in, std::string_view name, const value& operand, call_args& args);
// Jinja2's built-in filter / test names (an unknown one is a compile-time error).
bool has_filter(std::string_view name);
bool has_test(std::string_view name);
value method_of(interp& in, const value& obj, std::string_view name);  // undefined when none
// A filter; `name` is the name it is called by (aliases share a function).
using filter_fn = value (*)(interp& in, std::string_view name, const value& operand,
                            call_args& args);
value filter_wordwrap(interp&, std::string_view, const value& operand, call_args&);  // textwrap.cpp
// markup_filters.cpp
value filter_filesizeformat(interp&, std::string_view, const value& operand, call_args&);
value filter_urlencode(interp&, std::string_view, const value& operand, call_args&);
value filter_xmlattr(interp&, std::string_view, const value& operand, call_args&);
// The built-in globals (range, dict, namespace, ...): one immutable scope shared by every
// render (the functions are stateless).
const std::shared_ptr<scope>& builtin_globals();
std::string tojson(interp& in, const value& v, const value& indent, const value& separators,
                   bool sort_keys, bool ensure_ascii);

// A method bound to `self`; `name` is the name it is called by (aliases share a function).
using method_fn = value (*)(interp& in, const value& self, std::string_view name, call_args& args);

// The row named `name` in a table of rows with a `name` member, or null.
template <class Row, std::size_t N>
const Row* find_row(const Row (&rows)[N], std::string_view name) {
  for (const Row& row : rows)
    if (row.name == name) return &row;
  return nullptr;
}

// Argument binding helper for built-ins: positional then keyword by name.
struct arg_reader {
  interp& in;
  call_args& args;
  const char* fn;
  std::size_t next = 0;
  // Returns the argument `name` at position `pos` (or keyword), or `def`.
  value get(std::size_t pos, std::string_view name, value def = value());
  bool has(std::size_t pos, std::string_view name) const;
  void done(std::size_t max_positional);  // errors on unexpected arguments
};

}  // namespace chatpeg::jinja::detail

namespace chatpeg::jinja::detail {
// a * b, saturating (sizes computed from template-controlled counts must not wrap).
inline std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
  return a + b < a ? UINT64_MAX : a + b;
}
}  // namespace chatpeg::jinja::detail

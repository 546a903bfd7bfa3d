// Syntax tree of a parsed template. Nodes are immutable after parsing; evaluation lives in
// eval.cpp (expressions) and exec.cpp (statements), both driven by the interpreter state
// in interp.h, so one program can be rendered by several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace chatpeg::jinja::detail {

class interp;

struct node {
  std::size_t offset = 0;  // byte offset of the node in the normalized source
  virtual ~node() = default;
};

struct expr : node {
  virtual value eval(interp& in) const = 0;
  // Height of this subtree (1 for a leaf), set by the parser, which bounds it: evaluating and
  // destroying an expression recurse once per level.
  std::uint32_t height = 1;
};
using expr_ptr = std::unique_ptr<expr>;

enum class flow : std::uint8_t { normal, brk, cont };

struct stmt : node {
  virtual flow exec(interp& in) const = 0;
};
using stmt_ptr = std::unique_ptr<stmt>;
using body = std::vector<stmt_ptr>;

// ---- expressions ----

struct literal_expr final : expr {
  value v;
  value eval(interp& in) const override;
};

struct name_expr final : expr {
  std::string name;
  value eval(interp& in) const override;
};

struct list_expr final : expr {
  std::vector<expr_ptr> items;
  bool tuple = false;
  value eval(interp& in) const override;
};

struct dict_expr final : expr {
  std::vector<std::pair<expr_ptr, expr_ptr>> items;
  value eval(interp& in) const override;
};

struct getattr_expr final : expr {
  expr_ptr obj;
  std::string name;
  value eval(interp& in) const override;
};

struct getitem_expr final : expr {
  expr_ptr obj;
  expr_ptr index;
  value eval(interp& in) const override;
};

struct slice_expr final : expr {
  expr_ptr obj;
  expr_ptr start, stop, step;  // each may be null
  value eval(interp& in) const override;
};

struct call_arg_exprs {
  std::vector<expr_ptr> positional;
  std::vector<std::pair<std::string, expr_ptr>> keyword;
  expr_ptr star_args;    // *args
  expr_ptr star_kwargs;  // **kwargs
};

struct call_expr final : expr {
  expr_ptr callee;
  call_arg_exprs args;
  value eval(interp& in) const override;
};

struct filter_expr final : expr {
  expr_ptr operand;  // null inside {% filter %} blocks (the body is the operand)
  std::string name;
  call_arg_exprs args;
  value eval(interp& in) const override;
  value apply(interp& in, value operand_value) const;
};

struct test_expr final : expr {
  expr_ptr operand;
  std::string name;
  call_arg_exprs args;
  bool negated = false;
  value eval(interp& in) const override;
};

enum class unary_op : std::uint8_t { neg, pos, not_ };
struct unary_expr final : expr {
  unary_op op;
  expr_ptr operand;
  value eval(interp& in) const override;
};

enum class binary_op : std::uint8_t {
  add,
  sub,
  mul,
  div,
  floordiv,
  mod,
  pow,
  concat,
  and_,
  or_,
};
struct binary_expr final : expr {
  binary_op op;
  expr_ptr left, right;
  value eval(interp& in) const override;
};

enum class compare_op : std::uint8_t { eq, ne, lt, le, gt, ge, in, not_in };
struct compare_expr final : expr {
  expr_ptr first;
  std::vector<std::pair<compare_op, expr_ptr>> rest;
  value eval(interp& in) const override;
};

struct cond_expr final : expr {
  expr_ptr test, then, otherwise;  // otherwise may be null (→ undefined)
  value eval(interp& in) const override;
};

// ---- statements ----

struct text_stmt final : stmt {
  std::string text;
  flow exec(interp& in) const override;
};

struct output_stmt final : stmt {
  expr_ptr e;
  flow exec(interp& in) const override;
};

struct if_stmt final : stmt {
  std::vector<std::pair<expr_ptr, body>> branches;
  body otherwise;
  flow exec(interp& in) const override;
};

// Assignment target: a name, a (nested) tuple of names, or namespace.attr.
struct target {
  std::string name;           // simple name or the namespace variable
  std::string attr;           // non-empty: ns.attr
  std::vector<target> items;  // non-empty: tuple unpacking
  bool is_tuple = false;
  std::size_t offset = 0;
};

struct for_stmt final : stmt {
  target var;
  expr_ptr iter;
  expr_ptr cond;  // may be null
  body loop_body;
  body otherwise;
  bool recursive = false;
  flow exec(interp& in) const override;
};

struct set_stmt final : stmt {
  target var;
  expr_ptr e;
  // When e is `var + a ~ b ...` (var a name or ns.attr, the steps `+` or `~`): the steps,
  // innermost first (steps[0]->left is var itself). Empty otherwise.
  std::vector<const binary_expr*> self_append;
  flow exec(interp& in) const override;
};

struct set_block_stmt final : stmt {
  target var;
  std::vector<std::unique_ptr<filter_expr>> filters;
  body content;
  flow exec(interp& in) const override;
};

struct macro_param {
  std::string name;
  expr_ptr default_value;  // may be null
};

struct macro_def {
  std::string name;
  std::vector<macro_param> params;
  body content;
  bool uses_varargs = false;
  bool uses_kwargs = false;
  bool uses_caller = false;
};

struct macro_stmt final : stmt {
  std::shared_ptr<macro_def> def;
  flow exec(interp& in) const override;
};

struct call_block_stmt final : stmt {
  std::unique_ptr<call_expr> call;
  std::shared_ptr<macro_def> caller;  // the body as a macro named "caller"
  flow exec(interp& in) const override;
};

struct filter_block_stmt final : stmt {
  std::vector<std::unique_ptr<filter_expr>> filters;
  body content;
  flow exec(interp& in) const override;
};

struct with_stmt final : stmt {
  std::vector<std::pair<target, expr_ptr>> assignments;
  body content;
  flow exec(interp& in) const override;
};

struct loop_control_stmt final : stmt {
  bool is_break = false;
  flow exec(interp& in) const override;
};

struct unsupported_stmt final : stmt {  // {% include %} etc.: fails when executed
  std::string message;
  flow exec(interp& in) const override;
};

struct block_stmt final : stmt {  // {% generation %}: renders its body unchanged
  body content;
  flow exec(interp& in) const override;
};

// The largest height among the direct children of `e` (0 for a leaf).
std::uint32_t max_child_height(const expr& e);

}  // namespace chatpeg::jinja::detail

namespace chatpeg::jinja {

class program {
 public:
  std::string source;  // normalized source (for line:column of errors)
  std::string file;
  detail::body root;
};

}  // namespace chatpeg::jinja

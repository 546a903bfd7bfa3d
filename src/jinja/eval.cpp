// Expression evaluation: literals, names (parent-linked scope lookup), containers,
// attribute/item lookup, slices, calls, filters, tests, unary/binary operators with Python
// semantics, chained comparisons and inline if. Operator semantics live in ops.cpp.
#include "jinja/interp.h"

namespace chatpeg::jinja::detail {
namespace {

void eval_args(interp& in, const call_arg_exprs& a, call_args& out) {
  out.positional.reserve(a.positional.size());
  for (const auto& p : a.positional) out.positional.push_back(p->eval(in));
  for (const auto& k : a.keyword) out.keyword.emplace_back(k.first, k.second->eval(in));
  if (a.star_args) {
    value v = a.star_args->eval(in);
    for (auto& x : iterate(in, v)) out.positional.push_back(x);
  }
  if (a.star_kwargs) {
    value v = a.star_kwargs->eval(in);
    if (!v.is_dict()) in.fail("argument after ** must be a mapping");
    for (const auto& e : v.dict().entries) out.keyword.emplace_back(to_str(e.first), e.second);
  }
}

bool hashable(const value& v) {
  return !(v.is_list() || v.is_dict() || v.is_ns());
}

}  // namespace

value literal_expr::eval(interp&) const {
  return v;
}

value name_expr::eval(interp& in) const {
  if (const value* v = in.find(name)) return *v;
  return value::undefined_name(name);
}

value list_expr::eval(interp& in) const {
  std::vector<value> out;
  out.reserve(items.size());
  for (const auto& e : items) out.push_back(e->eval(in));
  return tuple ? value::tuple(std::move(out)) : value::list(std::move(out));
}

value dict_expr::eval(interp& in) const {
  auto d = std::make_shared<dict_obj>();
  d->entries.reserve(items.size());
  for (const auto& kv : items) {
    value k = kv.first->eval(in);
    if (!hashable(k)) in.fail_at(offset, "unhashable type: '" + type_name(k) + "'");
    d->set(std::move(k), kv.second->eval(in));
  }
  return value::dict(std::move(d));
}

value getattr_expr::eval(interp& in) const {
  value o = obj->eval(in);
  in.current_offset = offset;
  return getattr_value(in, o, name);
}

value getitem_expr::eval(interp& in) const {
  value o = obj->eval(in);
  value k = index->eval(in);
  in.current_offset = offset;
  return getitem_value(in, o, k);
}

value slice_expr::eval(interp& in) const {
  value o = obj->eval(in);
  value a = start ? start->eval(in) : value::none();
  value b = stop ? stop->eval(in) : value::none();
  value c = step ? step->eval(in) : value::none();
  in.current_offset = offset;
  return slice_value(in, o, a, b, c);
}

value call_expr::eval(interp& in) const {
  value f = callee->eval(in);
  call_args a;
  eval_args(in, args, a);
  in.current_offset = offset;
  return call_value(in, f, a);
}

value filter_expr::apply(interp& in, value operand_value) const {
  call_args a;
  eval_args(in, args, a);
  in.current_offset = offset;
  return apply_filter(in, name, operand_value, a);
}

value filter_expr::eval(interp& in) const {
  return apply(in, operand->eval(in));
}

value test_expr::eval(interp& in) const {
  value v = operand->eval(in);
  call_args a;
  eval_args(in, args, a);
  in.current_offset = offset;
  bool r = apply_test(in, name, v, a);
  return value::boolean(negated ? !r : r);
}

value unary_expr::eval(interp& in) const {
  value v = operand->eval(in);
  in.current_offset = offset;
  switch (op) {
    case unary_op::not_:
      return value::boolean(!v.truthy());
    case unary_op::neg:
      if (v.is_undefined()) in.fail_undefined(v);
      if (v.is_float()) return value::floating(-v.as_float());
      if (v.is_int() || v.is_bool()) return value::integer(-v.as_int());
      in.fail("bad operand type for unary -: '" + type_name(v) + "'");
    case unary_op::pos:
      if (v.is_undefined()) in.fail_undefined(v);
      if (v.is_bool()) return value::integer(v.as_int());
      if (v.is_number()) return v;
      in.fail("bad operand type for unary +: '" + type_name(v) + "'");
  }
  return v;
}

value binary_expr::eval(interp& in) const {
  if (op == binary_op::and_) {
    value l = left->eval(in);
    if (!l.truthy()) return l;
    return right->eval(in);
  }
  if (op == binary_op::or_) {
    value l = left->eval(in);
    if (l.truthy()) return l;
    return right->eval(in);
  }
  value l = left->eval(in);
  value r = right->eval(in);
  in.current_offset = offset;
  return binary(in, op, l, r);
}

value compare_expr::eval(interp& in) const {
  value l = first->eval(in);
  for (const auto& [op, e] : rest) {
    value r = e->eval(in);
    in.current_offset = offset;
    if (!compare(in, op, l, r)) return value::boolean(false);
    l = std::move(r);
  }
  return value::boolean(true);
}

value cond_expr::eval(interp& in) const {
  if (test->eval(in).truthy()) return then->eval(in);
  if (otherwise) return otherwise->eval(in);
  return value::undefined(
      "the inline if-expression evaluated to false and no else section was defined.");
}

}  // namespace chatpeg::jinja::detail

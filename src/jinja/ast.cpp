// Syntax-tree helpers that are not evaluation: the height of a node from its direct children
// (the parser bounds expression height with it, so evaluating and destroying a tree recurse a
// bounded number of times).
#include <algorithm>

#include "jinja/ast.h"

namespace chatpeg::jinja::detail {
namespace {

std::uint32_t height_of(const expr_ptr& e) {
  return e ? e->height : 0;
}

std::uint32_t height_of(const call_arg_exprs& a) {
  std::uint32_t m = std::max(height_of(a.star_args), height_of(a.star_kwargs));
  for (const auto& x : a.positional) m = std::max(m, height_of(x));
  for (const auto& x : a.keyword) m = std::max(m, height_of(x.second));
  return m;
}

}  // namespace

// Children's heights are final when this runs (trees are built bottom-up), so it never recurses.
std::uint32_t max_child_height(const expr& e) {
  std::uint32_t m = 0;
  if (auto* l = dynamic_cast<const list_expr*>(&e)) {
    for (const auto& x : l->items) m = std::max(m, height_of(x));
  } else if (auto* d = dynamic_cast<const dict_expr*>(&e)) {
    for (const auto& x : d->items) m = std::max({m, height_of(x.first), height_of(x.second)});
  } else if (auto* ga = dynamic_cast<const getattr_expr*>(&e)) {
    m = height_of(ga->obj);
  } else if (auto* gi = dynamic_cast<const getitem_expr*>(&e)) {
    m = std::max(height_of(gi->obj), height_of(gi->index));
  } else if (auto* sl = dynamic_cast<const slice_expr*>(&e)) {
    m = std::max(
        {height_of(sl->obj), height_of(sl->start), height_of(sl->stop), height_of(sl->step)});
  } else if (auto* c = dynamic_cast<const call_expr*>(&e)) {
    m = std::max(height_of(c->callee), height_of(c->args));
  } else if (auto* f = dynamic_cast<const filter_expr*>(&e)) {
    m = std::max(height_of(f->operand), height_of(f->args));
  } else if (auto* t = dynamic_cast<const test_expr*>(&e)) {
    m = std::max(height_of(t->operand), height_of(t->args));
  } else if (auto* u = dynamic_cast<const unary_expr*>(&e)) {
    m = height_of(u->operand);
  } else if (auto* b = dynamic_cast<const binary_expr*>(&e)) {
    m = std::max(height_of(b->left), height_of(b->right));
  } else if (auto* cmp = dynamic_cast<const compare_expr*>(&e)) {
    m = height_of(cmp->first);
    for (const auto& x : cmp->rest) m = std::max(m, height_of(x.second));
  } else if (auto* ce = dynamic_cast<const cond_expr*>(&e)) {
    m = std::max({height_of(ce->test), height_of(ce->then), height_of(ce->otherwise)});
  }
  return m;
}

}  // namespace chatpeg::jinja::detail

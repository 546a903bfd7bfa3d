// Internal: the grammar as a graph (node → the nodes it refers to, ref targets included) and
// its reverse in compact form, for linear-time worklist analyses (nullable, first bytes).
// Fixpoints that sweep the arena in id order are quadratic on chains of forward refs, which
// untrusted schemas can produce; worklists over the reverse graph are not.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "chatpeg/peg/nodes.h"

namespace chatpeg::peg::detail {

// Calls f(id) for every node n refers to: children, and the target of a ref.
template <class F>
void for_each_edge(const node& n, F&& f) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, nodes::sequence> || std::is_same_v<T, nodes::choice>) {
          for (const auto c : v.children) f(c);
        } else if constexpr (std::is_same_v<T, nodes::repetition> ||
                             std::is_same_v<T, nodes::peek> || std::is_same_v<T, nodes::negate> ||
                             std::is_same_v<T, nodes::atomic> || std::is_same_v<T, nodes::tagged> ||
                             std::is_same_v<T, nodes::rule> || std::is_same_v<T, nodes::schema> ||
                             std::is_same_v<T, nodes::gbnf>) {
          f(v.child);
        } else if constexpr (std::is_same_v<T, nodes::ref>) {
          f(v.target);
        }
      },
      n);
}

// parents of c = parents[offsets[c] .. offsets[c + 1]), one entry per edge occurrence.
struct reverse_graph {
  std::vector<std::uint32_t> offsets;
  std::vector<node_id> parents;
};

// edges(p, emit) must call emit(c) for each edge p → c; out-of-range c are ignored.
template <class Edges>
reverse_graph reverse_of(std::size_t count, Edges&& edges) {
  reverse_graph r;
  r.offsets.assign(count + 1, 0);
  for (std::size_t p = 0; p < count; ++p) {
    edges(static_cast<node_id>(p), [&](node_id c) {
      if (c < count) ++r.offsets[c + 1];
    });
  }
  for (std::size_t i = 0; i < count; ++i) r.offsets[i + 1] += r.offsets[i];
  r.parents.resize(r.offsets[count]);
  std::vector<std::uint32_t> fill(r.offsets.begin(), r.offsets.end() - 1);
  for (std::size_t p = 0; p < count; ++p) {
    edges(static_cast<node_id>(p), [&](node_id c) {
      if (c < count) r.parents[fill[c]++] = static_cast<node_id>(p);
    });
  }
  return r;
}

}  // namespace chatpeg::peg::detail

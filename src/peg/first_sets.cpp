// First-byte sets: for each node, a superset of the bytes a non-empty match can start with.
// Computed once per grammar by fixpoint (refs make the node graph cyclic) and stored per
// choice alternative, so matching `{` against json-value tries json-object only. A node that
// can match empty gets "all bytes" in the choice table: it is never skipped. Linear-time
// worklist over the reverse graph (chains of forward refs must not make build quadratic).
#include "peg/first_sets.h"

#include <bitset>
#include <cstdint>
#include <type_traits>

#include "peg/node_graph.h"

namespace chatpeg::peg::detail {

namespace {

using set = std::bitset<256>;

// Which nodes feed their first bytes into node p: a sequence's children up to and including
// the first non-nullable one, every alternative of a choice, the child of a repetition or
// wrapper, a ref's target. peek and negate consume nothing: they contribute no first byte.
template <class Nullable, class Emit>
void contributors(const std::vector<node>& nodes, node_id p, const Nullable& is_nullable,
                  Emit&& emit) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, nodes::sequence>) {
          for (const auto c : v.children) {
            emit(c);
            if (!is_nullable(c)) break;
          }
        } else if constexpr (std::is_same_v<T, nodes::choice>) {
          for (const auto c : v.children) emit(c);
        } else if constexpr (std::is_same_v<T, nodes::repetition>) {
          if (v.max > 0) emit(v.child);
        } else if constexpr (std::is_same_v<T, nodes::atomic> || std::is_same_v<T, nodes::tagged> ||
                             std::is_same_v<T, nodes::rule> || std::is_same_v<T, nodes::schema> ||
                             std::is_same_v<T, nodes::gbnf>) {
          emit(v.child);
        } else if constexpr (std::is_same_v<T, nodes::ref>) {
          emit(v.target);
        }
      },
      nodes[p]);
}

// The bytes a leaf starts with by itself (none for inner nodes).
set own_first(const node& n) {
  set f;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, nodes::literal>) {
          if (!v.text.empty()) f.set(static_cast<unsigned char>(v.text[0]));
        } else if constexpr (std::is_same_v<T, nodes::any> || std::is_same_v<T, nodes::until>) {
          f.set();
        } else if constexpr (std::is_same_v<T, nodes::space>) {
          f.set(' ');
          f.set('\t');
          f.set('\n');
          f.set('\r');
        } else if constexpr (std::is_same_v<T, nodes::char_class>) {
          // The class's ASCII table (two 64-bit words), and every byte from 0x80 up when it
          // can match a non-ASCII code point.
          const std::bitset<128> low_word(~std::uint64_t{0});
          f = set((v.ascii & low_word).to_ullong()) | (set((v.ascii >> 64).to_ullong()) << 64);
          bool non_ascii = v.negated;
          for (const auto& r : v.ranges) non_ascii = non_ascii || r.second >= 0x80;
          if (non_ascii) f |= set().set() << 128;
        }
      },
      n);
  return f;
}

}  // namespace

std::bitset<256> first_bytes_of(const std::vector<node>& nodes, const std::vector<bool>& nullable,
                                node_id id) {
  const std::size_t count = nodes.size();
  auto is_nullable = [&](node_id n) { return n < count && n < nullable.size() && nullable[n]; };
  set out;
  std::vector<bool> seen(count, false);
  std::vector<node_id> stack;
  if (id < count) stack.push_back(id);
  while (!stack.empty()) {
    const node_id n = stack.back();
    stack.pop_back();
    if (n >= count || seen[n]) continue;
    seen[n] = true;
    out |= own_first(nodes[n]);
    contributors(nodes, n, is_nullable, [&](node_id c) { stack.push_back(c); });
  }
  return out;
}

void fill_first_tables(std::vector<node>& nodes, const std::vector<bool>& nullable) {
  const std::size_t count = nodes.size();
  std::vector<set> first(count);
  set all;
  all.set();
  auto is_nullable = [&](node_id id) { return id < count && id < nullable.size() && nullable[id]; };
  std::vector<node_id> queue;
  std::vector<bool> queued(count, false);
  for (std::size_t i = 0; i < count; ++i) {
    first[i] = own_first(nodes[i]);
    if (first[i].any()) {
      queue.push_back(static_cast<node_id>(i));
      queued[i] = true;
    }
  }
  // Sets only grow, each by at most 256 bits: the worklist ends after O(256 * edges) steps.
  const auto rev =
      reverse_of(count, [&](node_id p, auto&& emit) { contributors(nodes, p, is_nullable, emit); });
  while (!queue.empty()) {
    const node_id c = queue.back();
    queue.pop_back();
    queued[c] = false;
    for (std::uint32_t k = rev.offsets[c]; k < rev.offsets[c + 1]; ++k) {
      const node_id p = rev.parents[k];
      const set grown = first[p] | first[c];
      if (grown != first[p]) {
        first[p] = grown;
        if (!queued[p]) {
          queued[p] = true;
          queue.push_back(p);
        }
      }
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    auto* c = std::get_if<nodes::choice>(&nodes[i]);
    if (!c) continue;
    c->first.assign(c->children.size(), all);
    for (std::size_t k = 0; k < c->children.size(); ++k) {
      const node_id alt = c->children[k];
      if (alt < count && !is_nullable(alt)) c->first[k] = first[alt];
    }
  }
}

}  // namespace chatpeg::peg::detail

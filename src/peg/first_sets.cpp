// First-byte sets: for each node, a superset of the bytes a non-empty match can start with.
// Computed once per grammar by fixpoint (refs make the node graph cyclic) and stored per
// choice alternative, so matching `{` against json-value tries json-object only. A node that
// can match empty gets "all bytes" in the choice table: it is never skipped.
#include "peg/first_sets.h"

#include <type_traits>

namespace chatpeg::peg::detail {

void fill_first_tables(std::vector<node>& nodes, const std::vector<bool>& nullable) {
  using set = std::bitset<256>;
  const std::size_t count = nodes.size();
  std::vector<set> first(count);
  set all;
  all.set();
  auto of = [&](node_id id) -> set { return id < count ? first[id] : set(); };
  auto is_nullable = [&](node_id id) { return id < count && id < nullable.size() && nullable[id]; };

  bool settled = false;
  for (int pass = 0; pass < 100 && !settled; ++pass) {
    settled = true;
    for (std::size_t i = 0; i < count; ++i) {
      set f;
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, nodes::literal>) {
              if (!v.text.empty()) f.set(static_cast<unsigned char>(v.text[0]));
            } else if constexpr (std::is_same_v<T, nodes::any> || std::is_same_v<T, nodes::until>) {
              f = all;
            } else if constexpr (std::is_same_v<T, nodes::space>) {
              f.set(' ');
              f.set('\t');
              f.set('\n');
              f.set('\r');
            } else if constexpr (std::is_same_v<T, nodes::char_class>) {
              for (std::size_t b = 0; b < 128; ++b) f[b] = v.ascii[b];
              bool non_ascii = v.negated;
              for (const auto& r : v.ranges) non_ascii = non_ascii || r.second >= 0x80;
              if (non_ascii) {
                for (std::size_t b = 128; b < 256; ++b) f.set(b);
              }
            } else if constexpr (std::is_same_v<T, nodes::sequence>) {
              for (const auto c : v.children) {
                f |= of(c);
                if (!is_nullable(c)) break;
              }
            } else if constexpr (std::is_same_v<T, nodes::choice>) {
              for (const auto c : v.children) f |= of(c);
            } else if constexpr (std::is_same_v<T, nodes::repetition>) {
              if (v.max > 0) f = of(v.child);
            } else if constexpr (std::is_same_v<T, nodes::atomic> ||
                                 std::is_same_v<T, nodes::tagged> ||
                                 std::is_same_v<T, nodes::rule> ||
                                 std::is_same_v<T, nodes::schema> ||
                                 std::is_same_v<T, nodes::gbnf>) {
              f = of(v.child);
            } else if constexpr (std::is_same_v<T, nodes::ref>) {
              f = of(v.target);
            }
            // epsilon, start, end, peek, negate consume nothing: empty set.
          },
          nodes[i]);
      if (f != first[i]) {
        first[i] = f;
        settled = false;
      }
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    auto* c = std::get_if<nodes::choice>(&nodes[i]);
    if (!c) continue;
    c->first.assign(c->children.size(), all);
    if (!settled) continue;
    for (std::size_t k = 0; k < c->children.size(); ++k) {
      const node_id alt = c->children[k];
      if (!is_nullable(alt)) c->first[k] = of(alt);
    }
  }
}

}  // namespace chatpeg::peg::detail

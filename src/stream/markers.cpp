// marker_prefixes (markers.h): the literals a reasoning/content span can hold, found by one
// iterative walk of the grammar from the text tags; the session holds back their prefixes at
// the end of its folded text (base::text_set::held).
#include "stream/markers.h"

#include <algorithm>
#include <type_traits>

namespace chatpeg::stream::detail {

marker_prefixes::marker_prefixes(const peg::grammar& g) {
  std::vector<std::uint8_t> seen(g.size(), 0);
  std::vector<peg::node_id> todo;
  for (peg::node_id id = 0; id < g.size(); ++id) {
    const auto* t = std::get_if<peg::nodes::tagged>(&g.at(id));
    if (t && (t->tag == peg::tag::content || t->tag == peg::tag::reasoning)) todo.push_back(id);
  }
  while (!todo.empty()) {  // iterative walk: grammars may be deep and cyclic
    const peg::node_id id = todo.back();
    todo.pop_back();
    if (id >= g.size() || seen[id]) continue;
    seen[id] = 1;
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, peg::nodes::literal>) {
            if (n.text.size() >= 2) literals_.add(n.text);
          } else if constexpr (std::is_same_v<T, peg::nodes::sequence> ||
                               std::is_same_v<T, peg::nodes::choice>) {
            todo.insert(todo.end(), n.children.begin(), n.children.end());
          } else if constexpr (std::is_same_v<T, peg::nodes::ref>) {
            todo.push_back(n.target);
          } else if constexpr (std::is_same_v<T, peg::nodes::repetition> ||
                               std::is_same_v<T, peg::nodes::atomic> ||
                               std::is_same_v<T, peg::nodes::tagged> ||
                               std::is_same_v<T, peg::nodes::rule> ||
                               std::is_same_v<T, peg::nodes::schema> ||
                               std::is_same_v<T, peg::nodes::gbnf>) {
            todo.push_back(n.child);
          }
          // peek / negate consume nothing: a partial literal below them ends no span.
        },
        g.at(id));
  }
}

}  // namespace chatpeg::stream::detail

// Static checks of a built grammar: unresolved refs, dangling child ids,
// empty literals/delimiters, unbounded repetitions of something nullable (a loop that
// consumes nothing) and left recursion (a rule reachable from itself without consuming
// input). Everything is iterative: grammars come from untrusted schemas and can be deep.
#include "chatpeg/peg/validate.h"

#include <type_traits>

#include "peg/node_graph.h"

namespace chatpeg::peg {
namespace {

// The single child of a wrapper node (rule, tag, ref target, ...), or no_node.
node_id wrapped_child(const node& n) {
  node_id out = no_node;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, nodes::repetition> || std::is_same_v<T, nodes::atomic> ||
                      std::is_same_v<T, nodes::tagged> || std::is_same_v<T, nodes::rule> ||
                      std::is_same_v<T, nodes::schema> || std::is_same_v<T, nodes::gbnf> ||
                      std::is_same_v<T, nodes::peek> || std::is_same_v<T, nodes::negate>) {
          out = v.child;
        } else if constexpr (std::is_same_v<T, nodes::ref>) {
          out = v.target;
        }
      },
      n);
  return out;
}

// For each node, the name of the first rule (in definition order) that contains it.
std::vector<std::string_view> owner_rules(const grammar& g) {
  std::vector<std::string_view> owner(g.size());
  std::vector<bool> seen(g.size(), false);
  std::vector<node_id> stack;
  for (const node_id r : g.rules()) {
    if (r >= g.size() || seen[r]) continue;
    const auto* rule = std::get_if<nodes::rule>(&g.at(r));
    if (!rule) continue;
    stack.push_back(r);
    seen[r] = true;
    while (!stack.empty()) {
      const node_id id = stack.back();
      stack.pop_back();
      owner[id] = rule->name;
      const node& n = g.at(id);
      if (std::holds_alternative<nodes::ref>(n)) continue;
      detail::for_each_edge(n, [&](node_id c) {
        if (c < g.size() && !seen[c] && !std::holds_alternative<nodes::rule>(g.at(c))) {
          seen[c] = true;
          stack.push_back(c);
        }
      });
    }
  }
  return owner;
}

}  // namespace

std::vector<bool> nullable_nodes(const grammar& g) {
  // Worklist over the reverse graph: a node becomes nullable when enough of what it refers to
  // is (all children of a sequence, any alternative of a choice, the child of a wrapper).
  const std::size_t count = g.size();
  std::vector<bool> nullable(count, false);
  std::vector<std::uint32_t> pending(count, 0);  // sequences: child occurrences not yet nullable
  std::vector<node_id> queue;
  auto mark = [&](node_id id) {
    if (!nullable[id]) {
      nullable[id] = true;
      queue.push_back(id);
    }
  };
  for (node_id i = 0; i < count; ++i) {
    const node& n = g.at(i);
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, nodes::epsilon> || std::is_same_v<T, nodes::start> ||
                        std::is_same_v<T, nodes::end> || std::is_same_v<T, nodes::peek> ||
                        std::is_same_v<T, nodes::negate> || std::is_same_v<T, nodes::space> ||
                        std::is_same_v<T, nodes::until>) {
            mark(i);
          } else if constexpr (std::is_same_v<T, nodes::literal>) {
            if (x.text.empty()) mark(i);
          } else if constexpr (std::is_same_v<T, nodes::sequence>) {
            pending[i] = static_cast<std::uint32_t>(x.children.size());
            if (x.children.empty()) mark(i);
          } else if constexpr (std::is_same_v<T, nodes::repetition>) {
            if (x.min == 0) mark(i);
          } else if constexpr (std::is_same_v<T, nodes::char_class>) {
            if (x.min == 0) mark(i);
          }
        },
        n);
  }
  const auto rev = detail::reverse_of(
      count, [&](node_id p, auto&& emit) { detail::for_each_edge(g.at(p), emit); });
  while (!queue.empty()) {
    const node_id c = queue.back();
    queue.pop_back();
    for (std::uint32_t k = rev.offsets[c]; k < rev.offsets[c + 1]; ++k) {
      const node_id p = rev.parents[k];
      if (nullable[p]) continue;
      const node& n = g.at(p);
      if (std::holds_alternative<nodes::sequence>(n)) {
        if (--pending[p] == 0) mark(p);
      } else if (!std::holds_alternative<nodes::any>(n)) {
        mark(p);  // choice, repetition, wrappers, ref: one nullable child is enough
      }
    }
  }
  return nullable;
}

namespace {

// Reports issues with the name of the first rule that contains the node, when there is one.
class reporter {
 public:
  reporter(const grammar& g, std::vector<validation_issue>& issues) : g_(g), issues_(issues) {}
  void operator()(node_id id, std::string message) {
    validation_issue issue;
    issue.node = id;
    if (owner_.empty()) owner_ = owner_rules(g_);  // computed for the first report
    if (id < g_.size()) issue.rule = std::string(owner_[id]);
    if (!issue.rule.empty()) message += " (in rule '" + issue.rule + "')";
    issue.error = base::make_error(base::errc::syntax_error, std::move(message));
    issues_.push_back(std::move(issue));
  }

 private:
  const grammar& g_;
  std::vector<validation_issue>& issues_;
  std::vector<std::string_view> owner_;
};

}  // namespace

std::vector<validation_issue> validate(const grammar& g) {
  std::vector<validation_issue> issues;
  const std::size_t count = g.size();
  reporter report(g, issues);

  if (g.root() >= count) report(no_node, "grammar has no root");
  for (node_id i = 0; i < count; ++i) {
    const node& n = g.at(i);
    bool dangling = false;
    if (const auto* r = std::get_if<nodes::ref>(&n)) {
      if (r->target >= count || !std::holds_alternative<nodes::rule>(g.at(r->target))) {
        report(i, "unresolved reference to rule '" + r->name + "'");
      }
      continue;
    }
    detail::for_each_edge(n, [&](node_id c) { dangling = dangling || c >= count; });
    if (dangling) {
      report(i, "node #" + std::to_string(i) + " (" + std::string(node_kind_name(n)) +
                    ") has a missing child");
    }
    if (const auto* l = std::get_if<nodes::literal>(&n); l && l->text.empty()) {
      report(i, "empty literal (node #" + std::to_string(i) + ")");
    }
    if (const auto* u = std::get_if<nodes::until>(&n)) {
      for (const auto& d : u->delimiters) {
        if (d.empty()) {
          report(i, "empty delimiter in until (node #" + std::to_string(i) + ")");
          break;
        }
      }
    }
  }
  if (!issues.empty()) return issues;  // the analyses below assume a well-formed arena
  return detail::validate_analyses(g, nullable_nodes(g));
}

namespace detail {

std::vector<validation_issue> validate_analyses(const grammar& g,
                                                const std::vector<bool>& nullable) {
  std::vector<validation_issue> issues;
  const std::size_t count = g.size();
  reporter report(g, issues);

  for (node_id i = 0; i < count; ++i) {
    const auto* rep = std::get_if<nodes::repetition>(&g.at(i));
    if (rep && rep->max == unbounded && nullable[rep->child]) {
      report(i, "unbounded repetition of something that can match empty (node #" +
                    std::to_string(i) + ") would loop without consuming input");
    }
  }

  // Left recursion: cycles in the "may be tried at the same position" graph. A node's edges
  // there are a sequence's children up to and including the first that is not nullable,
  // every alternative of a choice, the child of a wrapper; first_edge(id, k) is the k-th.
  auto first_edge = [&](node_id id, std::size_t k) -> node_id {
    const node& n = g.at(id);
    if (const auto* s = std::get_if<nodes::sequence>(&n)) {
      if (k >= s->children.size() || (k > 0 && !nullable[s->children[k - 1]])) return no_node;
      return s->children[k];
    }
    if (const auto* c = std::get_if<nodes::choice>(&n)) {
      return k < c->children.size() ? c->children[k] : no_node;
    }
    return k == 0 ? wrapped_child(n) : no_node;
  };
  constexpr std::size_t max_cycle_reports = 32;
  enum : std::uint8_t { white, gray, black };
  std::vector<std::uint8_t> color(count, white);
  std::vector<bool> reported(count, false);
  struct frame {
    node_id id;
    std::size_t next;
  };
  std::vector<frame> stack;
  for (node_id s = 0; s < count; ++s) {
    if (color[s] != white) continue;
    stack.push_back({s, 0});
    color[s] = gray;
    while (!stack.empty()) {
      frame& f = stack.back();
      if (const node_id c = first_edge(f.id, f.next); c != no_node) {
        ++f.next;
        if (color[c] == white) {
          color[c] = gray;
          stack.push_back({c, 0});
        } else if (color[c] == gray && issues.size() < max_cycle_reports) {
          // A cycle: c ... top. Name the rule(s) on it (a bounded number of times: walking
          // the stack for every back edge of a hostile grammar would be quadratic).
          std::size_t k = stack.size();
          while (k > 0 && stack[k - 1].id != c) --k;
          for (std::size_t j = (k > 0 ? k - 1 : 0); j < stack.size(); ++j) {
            const node_id id = stack[j].id;
            if (const auto* r = std::get_if<nodes::rule>(&g.at(id)); r && !reported[id]) {
              reported[id] = true;
              validation_issue issue;
              issue.node = id;
              issue.rule = r->name;
              issue.error = base::make_error(base::errc::syntax_error,
                                             "left recursion: rule '" + r->name +
                                                 "' can reach itself without consuming input");
              issues.push_back(std::move(issue));
            }
          }
        }
      } else {
        color[f.id] = black;
        stack.pop_back();
      }
    }
  }
  return issues;
}

}  // namespace detail

}  // namespace chatpeg::peg

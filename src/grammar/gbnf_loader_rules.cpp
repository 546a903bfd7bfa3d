// The rules of llama.cpp's grammar loader that are not syntax: bounded repetition counts and
// their product along a sequence, and left recursion as its loader finds it. The reader
// applies them while it reads (gbnf_parse_options::llama_loader), so a grammar it calls valid
// is one llama-server loads, and every grammar chatpeg emits is checked against them by the
// tests. Besides, the cycles the loader lets through that make llama.cpp's sampler expand its
// stack forever (find_sampler_loop), which the reader reports as warnings.
#include <algorithm>

#include "grammar/gbnf_internal.h"

namespace chatpeg::grammar::detail {

std::uint64_t llama_repetition_rules(std::uint32_t min, std::uint32_t max,
                                     std::uint32_t unbounded) {
  if (max == unbounded) return 1;
  return static_cast<std::uint64_t>(max) - min;
}

std::string llama_sequence::repetition(std::uint32_t min, std::uint32_t max,
                                       std::uint32_t unbounded) {
  const auto range = [&] {
    return "{" + std::to_string(min) + "," + (max == unbounded ? "" : std::to_string(max)) + "}";
  };
  if (min > llama_repetition_limit || (max != unbounded && max > llama_repetition_limit)) {
    return "repetition " + range() + " has a count above " +
           std::to_string(llama_repetition_limit) + ", which llama.cpp refuses";
  }
  std::uint64_t count = 1;
  if (max != unbounded && max > 0) {
    count = max;
  } else if (min > 0) {
    count = min;
  }
  const std::uint64_t product = repeated_ * count;
  if (product >= llama_repetition_limit) {
    std::string what = repeated_ == 1
                           ? "repetition " + range()
                           : "repetition " + range() + " of an element that stands for " +
                                 std::to_string(repeated_) + " rules";
    return what + " makes " + std::to_string(product) +
           " repeated rules, at or above llama.cpp's " + std::to_string(llama_repetition_limit) +
           " (\"number of rules that are going to be "
           "repeated multiplied by the new repetition exceeds sane defaults\")";
  }
  repeated_ = product;
  return {};
}

rule_set llama_layout(const rule_set& rules, const std::vector<std::uint8_t>& reversed_star,
                      const std::vector<std::uint8_t>& inlined) {
  const std::size_t n = rules.size();
  const auto flagged = [](const std::vector<std::uint8_t>& v, std::size_t a) {
    return a < v.size() && v[a] != 0;
  };
  rule_set out(n);
  // One alternative in the loader's order, inline nonterminals spliced in, up to and
  // including its first terminal. An explicit stack of (symbols, next index): splices nest
  // as deep as stacked repetitions do.
  struct frame {
    const std::vector<symbol>* rhs;
    std::size_t next;
  };
  std::vector<frame> stack;
  for (std::size_t a = 0; a < n; ++a) {
    if (flagged(inlined, a)) continue;  // written in place where it is used
    for (const auto& rhs : rules[a]) {
      // The reader's R ::= R x is the loader's R ::= x R.
      std::vector<symbol> ordered;
      const bool reversed =
          flagged(reversed_star, a) && !rhs.empty() && rhs.front() == static_cast<symbol>(a);
      if (reversed) {
        ordered.assign(rhs.begin() + 1, rhs.end());
        ordered.push_back(rhs.front());
      }
      std::vector<symbol> alt;
      stack.assign(1, {reversed ? &ordered : &rhs, 0});
      bool terminal_seen = false;
      while (!stack.empty() && !terminal_seen) {
        frame& f = stack.back();
        if (f.next == f.rhs->size()) {
          stack.pop_back();
          continue;
        }
        const symbol s = (*f.rhs)[f.next++];
        if (!is_terminal(s) && flagged(inlined, static_cast<std::size_t>(s))) {
          const auto& body = rules[static_cast<std::size_t>(s)];
          if (!body.empty()) stack.push_back({&body.front(), 0});
          continue;
        }
        alt.push_back(s);
        terminal_seen = is_terminal(s);
      }
      out[a].push_back(std::move(alt));
    }
  }
  return out;
}

namespace {

// An edge of the leftmost-reference graph: rule `to` can start where `from` starts; `grows`
// when the reference is followed by more of its alternative (llama.cpp's sampler then keeps
// that rest on its stack while it expands `to`).
struct edge {
  std::uint32_t to;
  bool grows;
};

// The references each alternative can begin with: the first symbol, and each next one while
// the ones before it can be passed over (`passable`).
std::vector<std::vector<edge>> leftmost_edges(const rule_set& layout,
                                              const std::vector<std::uint8_t>& passable) {
  std::vector<std::vector<edge>> next(layout.size());
  for (std::size_t a = 0; a < layout.size(); ++a) {
    for (const auto& rhs : layout[a]) {
      for (std::size_t i = 0; i < rhs.size(); ++i) {
        if (is_terminal(rhs[i])) break;
        const auto to = static_cast<std::uint32_t>(rhs[i]);
        next[a].push_back({to, i + 1 < rhs.size()});
        if (to >= passable.size() || passable[to] == 0) break;
      }
    }
  }
  return next;
}

// The first cycle of a graph, by a colored depth-first search with an explicit stack.
std::vector<std::uint32_t> first_cycle(const std::vector<std::vector<edge>>& next) {
  const std::size_t n = next.size();
  enum : std::uint8_t { unseen, on_path, finished };
  std::vector<std::uint8_t> color(n, unseen);
  std::vector<std::pair<std::uint32_t, std::size_t>> path;  // node, next successor to try
  for (std::uint32_t start = 0; start < n; ++start) {
    if (color[start] != unseen) continue;
    color[start] = on_path;
    path.emplace_back(start, 0);
    while (!path.empty()) {
      auto& [node, i] = path.back();
      if (i == next[node].size()) {
        color[node] = finished;
        path.pop_back();
        continue;
      }
      const std::uint32_t to = next[node][i++].to;
      if (color[to] == on_path) {
        std::vector<std::uint32_t> cycle;
        auto it =
            std::find_if(path.begin(), path.end(), [&](const auto& p) { return p.first == to; });
        for (; it != path.end(); ++it) cycle.push_back(it->first);
        return cycle;
      }
      if (color[to] == unseen) {
        color[to] = on_path;
        path.emplace_back(to, 0);
      }
    }
  }
  return {};
}

// Strongly connected components (Tarjan's algorithm with an explicit stack): the component
// index of each node.
std::vector<std::uint32_t> components(const std::vector<std::vector<edge>>& next) {
  const std::size_t n = next.size();
  constexpr std::uint32_t none = 0xFFFFFFFFu;
  std::vector<std::uint32_t> index(n, none), low(n, 0), comp(n, none);
  std::vector<std::uint32_t> stack;
  std::vector<std::uint8_t> on_stack(n, 0);
  std::vector<std::pair<std::uint32_t, std::size_t>> call;
  std::uint32_t counter = 0, comps = 0;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (index[root] != none) continue;
    call.emplace_back(root, 0);
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = 1;
    while (!call.empty()) {
      auto& [v, i] = call.back();
      if (i < next[v].size()) {
        const std::uint32_t w = next[v][i++].to;
        if (index[w] == none) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = 1;
          call.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        std::uint32_t w = none;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          comp[w] = comps;
        } while (w != v);
        ++comps;
      }
      const std::uint32_t done = v;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
    }
  }
  return comp;
}

}  // namespace

std::vector<std::uint32_t> find_loader_left_recursion(const rule_set& layout) {
  std::vector<std::uint8_t> empty_alternative(layout.size(), 0);
  for (std::size_t a = 0; a < layout.size(); ++a) {
    for (const auto& rhs : layout[a]) empty_alternative[a] |= rhs.empty() ? 1 : 0;
  }
  return first_cycle(leftmost_edges(layout, empty_alternative));
}

std::vector<std::uint32_t> find_sampler_loop(const rule_set& layout,
                                             const std::vector<std::uint8_t>& nullable) {
  const auto next = leftmost_edges(layout, nullable);
  const auto comp = components(next);
  for (std::uint32_t u = 0; u < next.size(); ++u) {
    for (const edge& e : next[u]) {
      if (!e.grows || comp[e.to] != comp[u]) continue;
      // u -> e.to, then back to u inside the component (breadth-first, the shortest way).
      std::vector<std::uint32_t> parent(next.size(), 0xFFFFFFFFu);
      std::vector<std::uint32_t> queue{e.to};
      parent[e.to] = e.to;
      for (std::size_t q = 0; q < queue.size() && parent[u] == 0xFFFFFFFFu; ++q) {
        for (const edge& f : next[queue[q]]) {
          if (comp[f.to] != comp[u] || parent[f.to] != 0xFFFFFFFFu) continue;
          parent[f.to] = queue[q];
          queue.push_back(f.to);
        }
      }
      std::vector<std::uint32_t> back;  // u's predecessors back to e.to
      for (std::uint32_t x = u; x != e.to; x = parent[x]) back.push_back(x);
      std::vector<std::uint32_t> cycle{e.to};
      cycle.insert(cycle.end(), back.rbegin(), back.rend());
      std::rotate(cycle.begin(), std::find(cycle.begin(), cycle.end(), u), cycle.end());
      return cycle;
    }
  }
  return {};
}

}  // namespace chatpeg::grammar::detail

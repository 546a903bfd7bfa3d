// The rules of llama.cpp's grammar loader that are not syntax: bounded repetition counts and
// their product along a sequence, and left recursion. The reader applies them while it reads
// (gbnf_parse_options::llama_loader), so a grammar it calls valid is one llama-server loads,
// and every grammar chatpeg emits is checked against them by the tests.
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

namespace {

// The nonterminals an alternative can begin with: each symbol in order while the ones before
// it can match the empty string.
template <typename F>
void leftmost(const std::vector<symbol>& rhs, bool reversed,
              const std::vector<std::uint8_t>& nullable, F&& f) {
  const auto visit = [&](symbol s) {
    if (is_terminal(s)) return false;
    f(static_cast<std::uint32_t>(s));
    return nullable[static_cast<std::size_t>(s)] != 0;
  };
  if (reversed) {
    for (auto it = rhs.rbegin(); it != rhs.rend(); ++it) {
      if (!visit(*it)) return;
    }
  } else {
    for (const symbol s : rhs) {
      if (!visit(s)) return;
    }
  }
}

}  // namespace

std::vector<std::uint32_t> find_left_recursion(
    const std::vector<std::vector<std::vector<symbol>>>& rules,
    const std::vector<std::uint8_t>& nullable, const std::vector<std::uint8_t>& reversed_star) {
  const std::size_t n = rules.size();
  // Successor lists, then a colored depth-first search with an explicit stack.
  std::vector<std::vector<std::uint32_t>> next(n);
  for (std::size_t a = 0; a < n; ++a) {
    const bool star = a < reversed_star.size() && reversed_star[a] != 0;
    for (const auto& rhs : rules[a]) {
      // Only the alternative that mentions the rule itself is written left-recursively.
      const bool reversed = star && !rhs.empty() && rhs.front() == static_cast<symbol>(a);
      leftmost(rhs, reversed, nullable, [&](std::uint32_t b) { next[a].push_back(b); });
    }
  }
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
      const std::uint32_t to = next[node][i++];
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

}  // namespace chatpeg::grammar::detail

// special_markers (special_markers.h): which marker occurrences a token-aware session reads
// as markers, decided as the token ids arrive, and the neutral byte that hides look-alikes
// from the matcher.
#include "stream/special_markers.h"

#include <algorithm>

namespace chatpeg::stream::detail {

void special_markers::set(const peg::grammar& g,
                          const std::vector<std::pair<std::string, std::int32_t>>& tokens) {
  for (const auto& [text, id] : tokens) {
    if (text.empty() || id < 0) continue;
    specials_.emplace_back(text, id);
    first_[static_cast<unsigned char>(text[0])] = true;
  }
  std::stable_sort(specials_.begin(), specials_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  // The neutral byte starts no literal and no `until` delimiter of the grammar.
  std::array<bool, 256> used{};
  for (const auto& n : g.nodes()) {
    if (const auto* l = std::get_if<peg::nodes::literal>(&n)) {
      used[static_cast<unsigned char>(l->text[0])] = true;
    } else if (const auto* u = std::get_if<peg::nodes::until>(&n)) {
      for (std::size_t b = 0; b < 256; ++b) used[b] = used[b] || u->first_bytes[b];
    }
  }
  for (const char c : std::string_view("~^`|_#%&*+=?@;!$")) {
    if (!used[static_cast<unsigned char>(c)]) {
      neutral_ = c;
      break;
    }
  }
}

std::size_t special_markers::decide(std::string_view out, std::span<const std::int32_t> tokens,
                                    std::string& shadow, std::size_t base, std::size_t from,
                                    bool at_end, std::int32_t no_ids) const {
  std::size_t p = from;
  for (; p < out.size(); ++p) {
    if (!first_[static_cast<unsigned char>(out[p])]) continue;
    // The markers whose text starts here, longest first: the one its token made exactly is
    // the marker (and nothing inside it is looked at again); if none is, the first byte is a
    // look-alike's.
    bool wait = false, look_alike = false;
    std::size_t kept = 0;
    for (const auto& [text, id] : specials_) {
      const std::size_t rem = out.size() - p;
      if (out.compare(p, std::min(rem, text.size()), text, 0, std::min(rem, text.size())) != 0) {
        continue;
      }
      if (rem < text.size() || (rem == text.size() && !at_end)) {
        if (!at_end) wait = true;  // cut by the end, or its token may continue
        continue;
      }
      bool known = true, exact = tokens[p] == id;
      for (std::size_t k = p; k < p + text.size(); ++k) known &= tokens[k] != no_ids;
      for (std::size_t k = p + 1; k < p + text.size() && exact; ++k) exact = tokens[k] == -1;
      if (exact && p + text.size() < out.size()) exact = tokens[p + text.size()] != -1;
      if (exact) {
        kept = text.size();
        break;
      }
      look_alike = look_alike || known;
    }
    if (wait) break;
    if (kept != 0) {
      p += kept - 1;
    } else if (look_alike) {
      shadow[base + p] = neutral_;
    }
  }
  return p;
}

}  // namespace chatpeg::stream::detail

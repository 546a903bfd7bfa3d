// A small set of texts (delimiters, markers, stops) and the hold rule for them: when the
// input ends with a proper prefix of one of them, the text it may become is not decided yet,
// so those bytes are held. The rule is one function, held_prefix; the matcher's `until`, the
// stream session's open spans, marker prefixes and its lean scans all ask it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace chatpeg::base {

// The length of the longest suffix of text[from, size) that is a proper prefix of one of
// `texts` (0: none). `first`: the first bytes of the texts; `longest`: the longest text's
// size. Only the last longest - 1 bytes can start such a suffix, so the cost is bounded by
// the texts, not by the text. (`first` is any table indexed by a byte: an array or a bitset.)
template <class Texts, class First>
std::size_t held_prefix(std::string_view text, std::size_t from, const Texts& texts,
                        const First& first, std::size_t longest) {
  if (longest < 2 || from >= text.size()) return 0;
  const std::size_t size = text.size();
  std::size_t i = size - from > longest - 1 ? size - (longest - 1) : from;
  for (; i < size; ++i) {  // the earliest start is the longest suffix
    if (!first[static_cast<unsigned char>(text[i])]) continue;
    const std::size_t rest = size - i;
    for (const auto& t : texts) {
      const std::string_view s(t);
      if (s.size() > rest && std::memcmp(text.data() + i, s.data(), rest) == 0) return rest;
    }
  }
  return 0;
}

// Texts with their first bytes and the longest size, for held_prefix and for finding a whole
// occurrence.
class text_set {
 public:
  text_set() = default;
  template <class Texts>
  explicit text_set(const Texts& texts) {
    for (const auto& t : texts) add(t);
  }

  void add(std::string_view t) {
    if (t.empty() || std::find(texts_.begin(), texts_.end(), t) != texts_.end()) return;
    texts_.emplace_back(t);
    first_[static_cast<unsigned char>(t[0])] = true;
    longest_ = std::max(longest_, t.size());
  }
  void clear() {
    texts_.clear();
    first_.fill(false);
    longest_ = 0;
  }

  // The hold rule (held_prefix) over these texts.
  std::size_t held(std::string_view text, std::size_t from = 0) const {
    return held_prefix(text, from, texts_, first_, longest_);
  }
  // Whether one of the texts occurs whole in text starting at or after `from`.
  bool occurs(std::string_view text, std::size_t from = 0) const {
    for (std::size_t i = from; i < text.size(); ++i) {
      if (!first_[static_cast<unsigned char>(text[i])]) continue;
      for (const auto& t : texts_) {
        if (text.compare(i, t.size(), t) == 0) return true;
      }
    }
    return false;
  }

  bool empty() const { return texts_.empty(); }
  const std::vector<std::string>& texts() const { return texts_; }
  const std::array<bool, 256>& first() const { return first_; }
  std::size_t longest() const { return longest_; }

 private:
  std::vector<std::string> texts_;
  std::array<bool, 256> first_{};
  std::size_t longest_ = 0;
};

}  // namespace chatpeg::base

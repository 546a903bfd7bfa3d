// Marker prefixes a streaming session holds back: proper prefixes of the literals
// that can lie inside a reasoning/content node's span. When the input ends inside such a
// literal (a marker the parser has not decided yet) the partial literal is part of the text
// node's span, so text that may be the start of a marker is held back. (Text ended by `until`
// needs nothing: until stops before a partial delimiter.) Internal to the stream module.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "chatpeg/peg/grammar.h"

namespace chatpeg::stream::detail {

// Hashes a std::string and a std::string_view alike, so lookups need no temporary string.
struct text_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class marker_prefixes {
 public:
  explicit marker_prefixes(const peg::grammar& g);

  // Bytes at the end of text to hold back.
  std::size_t held(std::string_view text) const;

  // First bytes of the prefixes.
  const std::array<bool, 256>& first() const { return first_; }
  // The literals themselves (at least two bytes each).
  const std::vector<std::string>& literals() const { return literals_; }

 private:
  std::unordered_set<std::string, text_hash, std::equal_to<>> prefixes_;
  std::vector<std::string> literals_;
  std::size_t longest_ = 0;
  std::array<bool, 256> first_{};
};

}  // namespace chatpeg::stream::detail

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
#include <vector>

#include "chatpeg/base/text_set.h"
#include "chatpeg/peg/grammar.h"

namespace chatpeg::stream::detail {

class marker_prefixes {
 public:
  explicit marker_prefixes(const peg::grammar& g);

  // Bytes at the end of text to hold back: the longest suffix that is a proper prefix of a
  // literal (base::held_prefix).
  std::size_t held(std::string_view text) const { return literals_.held(text); }

  // First bytes of the literals.
  const std::array<bool, 256>& first() const { return literals_.first(); }
  // The literals themselves (at least two bytes each).
  const std::vector<std::string>& literals() const { return literals_.texts(); }

 private:
  base::text_set literals_;
};

}  // namespace chatpeg::stream::detail

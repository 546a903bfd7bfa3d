// Token-aware markers of stream::session (session_options::special_tokens): a marker whose
// special token id is known counts as the marker only when exactly one token of that id made
// exactly its bytes; the same bytes from ordinary tokens are text. The session's matcher reads
// a shadow of the input where the first byte of every such look-alike is replaced by a
// neutral byte (one that starts no literal and no `until` delimiter of the grammar). Internal
// to the stream module.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatpeg/peg/grammar.h"

namespace chatpeg::stream::detail {

class special_markers {
 public:
  // The markers with their token ids (empty texts and negative ids are skipped), and the
  // neutral byte for g.
  void set(const peg::grammar& g, const std::vector<std::pair<std::string, std::int32_t>>& tokens);
  bool empty() const { return specials_.empty(); }

  // Decides the occurrences in `out` (the output; shadow holds it after `base` bytes) from
  // `from` on and returns where the undecided part starts: an occurrence whose tokens are not
  // all known yet (cut by the end, or its token may continue unless at_end) waits there.
  // tokens: per output byte (-1 where a token continues, no_ids for bytes fed without ids).
  std::size_t decide(std::string_view out, std::span<const std::int32_t> tokens,
                     std::string& shadow, std::size_t base, std::size_t from, bool at_end,
                     std::int32_t no_ids) const;

 private:
  std::vector<std::pair<std::string, std::int32_t>> specials_;
  std::array<bool, 256> first_{};
  char neutral_ = '~';
};

}  // namespace chatpeg::stream::detail

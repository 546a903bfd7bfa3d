// Ambiguous open text in stream::session (fuzz finding stream_session): an ordered
// choice whose first alternative reads text with `until(D)` while a later alternative reads the
// same kind of text (content/reasoning) with `until(D ∪ X)` and then goes on differently. chat's
// generator builds one for a reasoning block the model may leave open: closed block first,
// then "reasoning up to a call opener, then calls". While the block is open the first reading
// stays viable leniently, so text from the first occurrence of an opener in X on may still turn
// out to be a call; the session must not send it as text while the later reading is viable.
//
// This finds those pairs in the grammar once (no model knowledge: only the choice, the two
// `until` nodes, their tags and delimiters) and, for the open text node of a lenient match,
// tracks the first occurrence of an X stop, whether the later reading can still go on from it
// (its continuation — the nodes after its `until` up to the end of the grammar — matched
// leniently from there), and how many bytes of the folded text to hold back. Internal to the
// stream module.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/peg/grammar.h"
#include "chatpeg/peg/matcher.h"
#include "stream/channels.h"

namespace chatpeg::stream::detail {

// A later reading of an `until` node's text: where it stops besides the node's delimiters, and
// what it then matches (in order, each from where the previous ended).
struct alt_reading {
  std::vector<std::string> stops;
  std::vector<peg::node_id> continuation;
};

class alt_readings {
 public:
  explicit alt_readings(const peg::grammar& g);

  bool empty() const { return by_until_.empty(); }
  // First bytes of every stop (a chunk without them cannot start an occurrence).
  const std::array<bool, 256>& first_bytes() const { return first_; }
  // first_bytes() as at most four bytes, for base::stop_scanner; null when there are more.
  const base::byte_stops* few_first_bytes() const { return first_few_ ? &first_stops_ : nullptr; }
  // Every stop of every reading (once each).
  const std::vector<std::string>& all_stops() const { return stops_; }

  // The later readings of the text node `owner` (a tagged/rule grammar node whose body is an
  // `until`, possibly after a fixed prefix), or null.
  const std::vector<alt_reading>* for_owner(peg::node_id owner) const;

 private:
  std::unordered_map<peg::node_id, std::vector<alt_reading>> by_until_;
  // Per node: the later readings of its body's `until` (null: none); stable pointers into
  // by_until_, which is not modified after construction.
  std::vector<const std::vector<alt_reading>*> owner_readings_;
  std::array<bool, 256> first_{};
  std::vector<std::string> stops_;
  // first_ as at most four bytes, for a vector scan (first_few_ = false: more of them).
  base::byte_stops first_stops_;
  bool first_few_ = true;
};

// Per-session tracking of the open text node's ambiguity.
class ambiguity {
 public:
  // The hold for the open text node of `t` (a lenient match of `input`): text bytes at the
  // end of the fold's text of that node's channel that must not be sent yet. `text_sizes` are
  // the sizes of the fold's texts now, per channel. Runs the later reading's continuation on
  // its own matcher, amortized: again only after a quarter of the ambiguous bytes more.
  struct hold {
    channel text = channel::content;
    std::size_t bytes = 0;
    // Bytes held of channel c.
    std::size_t of(channel c) const { return c == text ? bytes : 0; }
  };
  hold update(const alt_readings& alts, const peg::grammar& g, const peg::ast& t,
              std::string_view input, const std::array<std::size_t, kChannels>& text_sizes);
  void clear();
  std::size_t checks() const { return checks_; }
  // The matcher work of the continuation checks since clear() (peg::match_result's counters).
  std::uint64_t scanned_bytes() const { return scanned_bytes_; }
  std::uint64_t node_visits() const { return node_visits_; }
  // As of the last update(): a stop cut by the end of the open text node (and of the input)
  // is held back (the node has later readings, none of their stops occurred yet).
  bool holds_stop_prefixes() const {
    return readings_ != nullptr && !resolved_ && at_ == std::string::npos;
  }

 private:
  bool viable(const alt_reading& a, const peg::grammar& g, std::string_view from);

  peg::node_id owner_ = peg::no_node;
  std::uint32_t start_ = 0;
  const std::vector<alt_reading>* readings_ = nullptr;
  std::size_t scanned_ = 0;             // input offset scanned for stops up to
  std::size_t at_ = std::string::npos;  // the first occurrence of a stop
  const alt_reading* reading_ = nullptr;
  bool resolved_ = false;         // the reading stopping at at_ failed: nothing held for it
  std::size_t text_mark_ = 0;     // fold-text offset of at_
  std::size_t checked_size_ = 0;  // input size at the last continuation check
  std::size_t longest_ = 0;       // the longest stop of readings_
  std::size_t checks_ = 0;
  std::uint64_t scanned_bytes_ = 0;
  std::uint64_t node_visits_ = 0;
  std::optional<peg::matcher> matcher_;
};

}  // namespace chatpeg::stream::detail

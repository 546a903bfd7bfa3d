// stream::session's span_extension path: after a lenient match whose input ends
// inside an open text span — an `until` scan (content, reasoning, raw tagged argument values)
// or the plain-character run of a JSON string — most chunks cannot change the parse. This
// finds that state from the match and the grammar and gives the bytes that could change it;
// a chunk without any of them only extends every partial AST node to the new end of input.
// Internal to the stream module.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "chatpeg/peg/grammar.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::stream::detail {

// Bytes that may end or change an open span (a delimiter's first byte, `"`, `\`, control
// bytes, ...): a chunk holding none of them is an extension.
using stop_table = std::array<bool, 256>;

struct open_span {
  std::vector<std::uint32_t> chain;   // the partial AST nodes, outermost first
  const stop_table* stop = nullptr;   // null: the state is not an open span
  peg::node_id owner = peg::no_node;  // grammar node of the deepest partial node
  // Bytes at the end of the input after the span (an `until` scan stopped before a possible
  // delimiter: they are a proper prefix of one); the span ends at input size - held.
  std::size_t held = 0;
  // Escaped text whose input ends inside an escape: its bytes (at the end of the span). The
  // next extension is checked from the escape on.
  std::size_t lookback = 0;
  // The `until` scan the span is (null: the span is escaped text, e.g. a JSON string).
  const peg::nodes::until* scan = nullptr;
};

// Through ref / schema / gbnf / atomic wrappers to the node that matches (no_node when the
// chain is too long).
peg::node_id unwrap_node(const peg::grammar& g, peg::node_id id);

class open_span_finder {
 public:
  explicit open_span_finder(const peg::grammar& g);

  // The open span of a lenient match of `input` (the whole input the matcher saw), if any.
  // Conservative: when unsure it reports none and the caller matches as usual.
  void find(const peg::match_result& r, std::string_view input, open_span& out);

  // Whether appending input only extends the open span: `text` is the input from the span's
  // end on (the held bytes, then the new chunk). No stop byte; or, looking closer, no
  // delimiter for an `until` — which then holds back `held` bytes at the end, the longest
  // suffix that is a proper delimiter prefix, as the matcher does; only whole valid escapes and
  // no closing quote for escaped text (held 0). The span stays open afterwards.
  // For escaped text, `text` starts `lookback` bytes before the span's end (an escape cut by the
  // end of input), and the extension may end inside an escape again (its bytes: lookback).
  bool extends(const open_span& s, std::string_view text, std::size_t& held,
               std::size_t& lookback) const;

 private:
  // How a node's body continues while the input ends inside it (computed once per node).
  struct body_info {
    enum class kind : std::uint8_t {
      unknown,
      none,
      until,
      until_after,
      repeated_until,
      escaped_text
    };
    kind k = kind::unknown;
    std::uint32_t skip = 0;    // until_after, repeated_until: bytes the parts before the scan take
    std::uint8_t escape = 0;   // escaped_text: the escape byte E (E simple | E U hex{n})
    std::uint8_t unicode = 0;  // escaped_text: U (0 when there is none)
    std::uint32_t hex = 0;     // escaped_text: n
    std::uint32_t table = 0;   // index into tables_
    const peg::nodes::until* scan = nullptr;         // until, until_after, repeated_until
    const peg::nodes::char_class* run = nullptr;     // escaped_text: the plain run
    const peg::nodes::char_class* simple = nullptr;  // escaped_text: E simple
    const peg::nodes::char_class* digits = nullptr;  // escaped_text: E U digits{hex}
  };

  const body_info& info(peg::node_id id);
  body_info classify(peg::node_id id);
  peg::node_id unwrap(peg::node_id id) const;  // through ref / schema / gbnf / atomic
  std::uint32_t max_length(peg::node_id id, int depth) const;  // bytes; unbounded if unknown
  // Bytes of the escape the escaped text ends inside (0: none; SIZE_MAX: not a shape known).
  std::size_t escaped_tail(const body_info& b, std::string_view text) const;
  static bool starts_delimiter(const peg::nodes::until& u, std::string_view text, std::size_t from);
  static bool extends_scan(const peg::nodes::until& u, std::string_view text, std::size_t& held);

  const peg::grammar* g_;
  std::vector<body_info> info_;
  std::deque<stop_table> tables_;  // stable addresses: open_span::stop points here
};

}  // namespace chatpeg::stream::detail

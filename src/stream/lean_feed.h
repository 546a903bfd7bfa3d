// The lean feed of stream::session::feed_view: while the output extends an open
// text span — content, reasoning, a JSON-string argument, a raw tagged argument — with bytes
// that cannot end or change it, a feed appends the chunk to the output buffer and returns a
// view of the bytes it adds to the message, nothing else: no matcher, no fold, no copy into
// the sent message. The session catches up (one pass of span_extension over all the
// bytes appended so) when the message is asked for or a feed needs the parser, and checks that
// span_extension sends exactly what the lean feeds returned.
//
// This decides, per chunk, whether it qualifies and which bytes it delivers. One 256-entry
// table per open span (built when the session arms the lean feed) classifies bytes; a chunk of
// plain bytes (the common case) is decided by the table alone. Internal to the stream module.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/text_set.h"
#include "chatpeg/stream/detail/lean_lane.h"
#include "chatpeg/stream/session.h"
#include "stream/open_span.h"

namespace chatpeg::stream::detail {

// What the open span adds to the message, and how its bytes become delta text.
enum class lean_kind : std::uint8_t {
  off,
  content,    // text as is (an `until` scan)
  reasoning,  // text as is (an `until` scan)
  json_args,  // a JSON string inside arguments converted as JSON: plain bytes and simple
              // escapes are copied as is
  raw_args,   // raw text of a string argument: JSON-escaped
};

// The texts a lean feed must not let through (delimiters, markers, stops) as one
// Aho-Corasick automaton over byte classes, built when a span is armed: run from the first
// undelivered byte, it tells in one table step per byte that the bytes hold none of the texts
// and end in no proper prefix of one (clean): then nothing is held and the chunk is plain text,
// the common case for a '<' or '\n' in code. Anything else takes the exact scan.
class marker_dfa {
 public:
  void build(const std::vector<std::string_view>& texts);
  // No text occurs in bytes[0, n) and no suffix of them is a proper prefix of one.
  bool clean(const unsigned char* bytes, std::size_t n) const {
    std::uint32_t s = 0, seen = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t t = next_[s + class_[bytes[i]]];
      seen |= t;
      s = t & ~kAccept;
    }
    return s == 0 && (seen & kAccept) == 0;
  }

 private:
  static constexpr std::uint32_t kAccept = 1u << 31;  // the target state ends some text
  std::array<std::uint8_t, 256> class_{};
  std::uint32_t classes_ = 0;
  // state * classes_ + class → target state * classes_ (so a step is one add and one load),
  // kAccept set when the target ends a text, its own or through its suffix links.
  std::vector<std::uint32_t> next_;
};

class lean_scanner {
 public:
  // Byte classes (bits of table()).
  static constexpr std::uint8_t kCheck = lean_class::check;
  static constexpr std::uint8_t kHigh = lean_class::high;
  static constexpr std::uint8_t kEscape = lean_class::escape;
  static constexpr std::uint8_t kReject = lean_class::reject;

  // Prepares for `span` read as k. `text_stop`: bytes that may start a marker or a later
  // reading's stop; `markers`, `stops`: those texts (text kinds only). Tables are kept for
  // the span last armed, so arming the same span again costs a comparison.
  void arm(lean_kind k, const open_span& span, const std::array<bool, 256>& text_stop,
           const std::vector<std::string>& markers, const std::vector<std::string>& stops);
  void disarm() { kind_ = lean_kind::off; }
  // Whether the session holds back a later reading's stop cut by the end (ambiguity::
  // holds_stop_prefixes); else such a partial stop is plain text.
  void set_stop_prefixes_held(bool held) { stops_held_ = held; }
  lean_kind kind() const { return kind_; }
  const std::array<std::uint8_t, 256>& table() const { return table_; }
  const lean_pairs& pairs() const { return pairs_; }  // for the inline lane
  // The OR of the classes of the chunk's bytes (a short loop: no vector code for 4 bytes).
  std::uint8_t classes(std::string_view chunk) const {
    std::uint8_t any = 0;
    for (const char c : chunk) {
      const std::uint8_t cls = table_[static_cast<unsigned char>(c)];
      if (cls == 0xFF) break;  // never: keeps the compiler from vectorizing the loop
      any |= cls;
    }
    return any;
  }

  // Bytes at the end of input after `from` that are a proper prefix of a delimiter of the
  // span's `until` (what the matcher holds after the span), 0 without one.
  std::size_t until_held(std::string_view input, std::size_t from) const;

  // A chunk with some non-plain byte (`any`: the OR of its classes) or after held bytes:
  // `input` holds all bytes received, the chunk is input[chunk_at, end), delivered bytes end
  // at `sent` (≤ chunk_at: the bytes between are held — an incomplete UTF-8 sequence or the
  // start of a delimiter or marker). Returns where the delivered bytes end now (what may be
  // the start of a delimiter or marker, or an incomplete UTF-8 tail, stays held), or npos when
  // the chunk must take another path. `escaped`: the new bytes need JSON escaping.
  std::size_t scan(std::string_view input, std::size_t sent, std::size_t chunk_at, std::uint8_t any,
                   bool& escaped) const;

 private:
  lean_kind kind_ = lean_kind::off;
  lean_kind built_kind_ = lean_kind::off;
  const stop_table* built_stop_ = nullptr;
  const peg::nodes::until* built_scan_ = nullptr;
  std::array<std::uint8_t, 256> table_{};
  // Texts that must not occur in new bytes: the span's delimiters, the markers and the later
  // readings' stops (text kinds). Cut by the end, a delimiter or marker is held (the hold rule,
  // base::held_prefix); a stop is held when stops_held_.
  base::text_set delimiters_;
  base::text_set markers_;
  base::text_set stops_;
  bool stops_held_ = false;
  marker_dfa dfa_;    // over all three
  lean_pairs pairs_;  // over all three (delimiters and markers held when cut)
};

// Whether `out` (what span_extension sent for the bytes lean feeds took) is exactly one delta
// of the kind's field (call `call` for arguments) equal to `expected`.
bool lean_delta_is(const std::vector<delta>& out, lean_kind kind, std::size_t call,
                   std::string_view expected);

}  // namespace chatpeg::stream::detail

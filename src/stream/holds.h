// The hold rules for the bytes at the end of a streamed output that the session's paths
// check themselves, one type each: an incomplete UTF-8 sequence (utf8_hold) and an
// escape cut by the end of input (escape_hold). A delimiter or marker cut by the end is
// base::held_prefix (base/text_set.h), a name that may still grow detail::undecided (fold.h).
// Every path — the open-span extension, the fold, the later-reading hold — asks these; none
// restates them. Internal to the stream module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chatpeg/base/utf8.h"

namespace chatpeg::stream::detail {

// UTF-8 at the end of a growing text: valid up to an incomplete sequence at the end, which is
// held until its last byte comes.
struct utf8_hold {
  bool valid = false;    // valid UTF-8 but for the held tail
  std::size_t held = 0;  // bytes of the incomplete sequence at the end (0..3)

  // Up to this many bytes are checked by one inline loop (a chunk and its held bytes).
  static constexpr std::size_t kShort = 64;

  // The held bytes alone (paths that repair invalid bytes rather than refuse them).
  static std::size_t tail(std::string_view text) { return base::utf8_incomplete_tail(text); }

  static utf8_hold of(std::string_view text) {
    utf8_hold h;
    if (text.size() <= kShort) {
      h.valid = base::short_utf8(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
                                 h.held);
      return h;
    }
    h.held = tail(text);
    h.valid = base::is_valid_utf8(text.substr(0, text.size() - h.held));
    return h;
  }
  // Whole valid UTF-8: nothing held.
  static bool whole(std::string_view text) {
    const utf8_hold h = of(text);
    return h.valid && h.held == 0;
  }
};

// Escaped text (a JSON string's body, or any text the grammar writes as a plain run and
// escapes E simple | E U digit{hex}) growing at the end: its bytes are the text's as long as
// every escape is one the syntax knows; an escape cut by the end of input is held from its
// escape byte on, until the rest of it comes. `Syntax` gives: plain(b), a byte of the plain
// run; `escape`, the escape byte; simple(b), a byte that may follow it; `unicode`, the byte
// that starts a hex escape (0: none), digit(b) and `hex`, its digits and their count.
struct escape_hold {
  bool plain = false;    // the bytes are such text (no byte that ends it, no unknown escape)
  std::size_t held = 0;  // bytes of an escape cut by the end

  template <class Syntax>
  static escape_hold of(const unsigned char* bytes, std::size_t from, std::size_t end,
                        const Syntax& syntax) {
    for (std::size_t i = from; i < end;) {
      const unsigned char c = bytes[i];
      if (syntax.plain(c)) {
        ++i;
        continue;
      }
      if (c != syntax.escape) return {};  // a byte that ends the text
      if (i + 1 >= end) return {true, end - i};
      const unsigned char e = bytes[i + 1];
      if (syntax.unicode != 0 && e == syntax.unicode) {
        const std::size_t last = i + 2 + syntax.hex;
        for (std::size_t k = i + 2; k < end && k < last; ++k) {
          if (!syntax.digit(bytes[k])) return {};
        }
        if (end < last) return {true, end - i};  // hex digits cut by the end
        i = last;
      } else if (syntax.simple(e)) {
        i += 2;
      } else {
        return {};
      }
    }
    return {true, 0};
  }
};

}  // namespace chatpeg::stream::detail

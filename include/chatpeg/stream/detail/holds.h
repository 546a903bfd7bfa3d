// The hold rules for the bytes at the end of a streamed output that the session's paths
// check themselves, one type each: an incomplete UTF-8 sequence (utf8_hold) and a JSON
// escape cut by the end of input (json_escape_hold). A delimiter or marker cut by the end is
// base::held_prefix (base/text_set.h), a name that may still grow is the fold's. Every path —
// the inline lane, the lean scan, the open-span extension, the fold — asks these; none
// restates them. Inline because the lane (lean_lane.h) is. Internal to the stream module.
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

// The JSON escapes the lean paths copy as is (the value converter keeps them unchanged).
inline bool simple_json_escape(unsigned char c) {
  return c == '"' || c == '\\' || c == 'n' || c == 't' || c == 'r';
}

// The bytes of a JSON string's body as the lean paths take them: every escape byte is followed
// by a simple escape (copied as is), one cut by the end of input is held (1 byte); another
// escape, or a byte that ends the string (a quote, a control byte), is not theirs to take.
struct json_escape_hold {
  bool plain = false;    // the lean paths may take the bytes
  std::size_t held = 0;  // 1: the last byte is an escape byte cut by the end

  // bytes[from, end); is_escape(b) / ends(b): the escape byte, a byte that ends the string.
  template <class IsEscape, class Ends>
  static json_escape_hold of(const unsigned char* bytes, std::size_t from, std::size_t end,
                             IsEscape is_escape, Ends ends) {
    json_escape_hold h;
    for (std::size_t i = from; i < end; ++i) {
      const unsigned char b = bytes[i];
      if (ends(b)) return h;
      if (!is_escape(b)) continue;
      if (i + 1 == end) {
        h.held = 1;
        break;
      }
      if (!simple_json_escape(bytes[i + 1])) return h;
      ++i;
    }
    h.plain = true;
    return h;
  }
};

}  // namespace chatpeg::stream::detail

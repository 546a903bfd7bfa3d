// UTF-8 helpers: strict decoding (no overlongs, surrogates or > U+10FFFF), detection of an
// incomplete trailing sequence (held back while streaming), and sanitizing (each maximal
// invalid subpart becomes U+FFFD, as Python's errors="replace" does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace chatpeg::base {

enum class utf8_status : std::uint8_t { ok, incomplete, invalid };

struct utf8_decoded {
  char32_t code_point = 0;    // U+FFFD unless status == ok
  std::uint8_t length = 0;    // bytes consumed (ok), bytes present (incomplete), or the
                              // maximal invalid subpart (invalid, at least 1)
  utf8_status status = utf8_status::invalid;
};

// Decodes the code point at text[pos]. pos must be < text.size().
utf8_decoded decode_utf8(std::string_view text, std::size_t pos);

// Number of bytes (0..3) at the end of text that start a valid but unfinished sequence.
std::size_t utf8_incomplete_tail(std::string_view text);

bool is_valid_utf8(std::string_view text);

// Appends the UTF-8 encoding of cp (U+FFFD for surrogates or values > U+10FFFF).
void append_utf8(std::string& out, char32_t cp);

struct sanitize_options {
  bool hold_back_incomplete_tail = false;  // drop an unfinished trailing sequence
};

// Valid UTF-8 copy of text: invalid subparts → U+FFFD; an incomplete tail is held back
// when asked, else replaced.
std::string sanitize_utf8(std::string_view text, sanitize_options options = {});

// Byte length of the UTF-8 sequence that a lead byte announces (1..4), 0 for a byte that
// cannot start a sequence.
constexpr std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

}  // namespace chatpeg::base

// UTF-8 helpers: strict decoding (no overlongs, surrogates or > U+10FFFF), detection of an
// incomplete trailing sequence (held back while streaming), sanitizing (each maximal
// invalid subpart becomes U+FFFD, as Python's errors="replace" does), and a word-at-a-time
// scan for the next byte of a small set (the bulk-run primitive of the hot text loops).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace chatpeg::base {

enum class utf8_status : std::uint8_t { ok, incomplete, invalid };

struct utf8_decoded {
  char32_t code_point = 0;  // U+FFFD unless status == ok
  std::uint8_t length = 0;  // bytes consumed (ok), bytes present (incomplete), or the
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

// For a few bytes (a streamed chunk), inline: whether bytes[0, n) is valid UTF-8 up to an
// incomplete sequence at the end, whose length goes to `tail`. Where it says yes,
// utf8_incomplete_tail gives the same tail and is_valid_utf8 holds for the rest.
inline bool short_utf8(const unsigned char* bytes, std::size_t n, std::size_t& tail) {
  tail = 0;
  for (std::size_t i = 0; i < n;) {
    const unsigned b = bytes[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      if (i + k >= n) {  // cut by the end: an incomplete tail
        tail = n - i;
        return true;
      }
      const unsigned c = bytes[i + k];
      if (k == 1 ? (c < lo || c > hi) : (c & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

// Length of the longest prefix of text that is valid UTF-8 (text.size() when all of it is).
std::size_t valid_utf8_prefix(std::string_view text);

// Bytes that end a run of plain text: every byte below `below` (at most 0x80; 0 for none),
// every byte >= 0x80 when `high`, and the first `count` entries of `bytes`. Small enough to
// test eight bytes at once (SWAR); built once by the caller, outside its loop.
struct byte_stops {
  unsigned char below = 0;
  bool high = false;
  std::uint8_t count = 0;
  std::array<unsigned char, 4> bytes = {};

  // Adds one byte; false when the set is full.
  constexpr bool add(unsigned char b) {
    if (count == bytes.size()) return false;
    bytes[count++] = b;
    return true;
  }
  constexpr bool contains(unsigned char b) const {
    if (b < below || (high && b >= 0x80)) return true;
    for (std::size_t i = 0; i < count; ++i) {
      if (bytes[i] == b) return true;
    }
    return false;
  }
};

namespace detail {

// Per-byte marks (0x80 in the byte's lane) of the stops in the 8 bytes of x, little-endian
// lane order. Only the lowest mark is exact (borrows can mark lanes above a true one), which
// is all find_stop uses.
inline std::uint64_t stop_lanes(std::uint64_t x, const byte_stops& s) {
  constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  const auto equal = [&](unsigned char b) {
    const std::uint64_t y = x ^ (ones * b);
    return (y - ones) & ~y & highs;
  };
  std::uint64_t m = s.high ? x & highs : 0;
  if (s.below != 0) m |= (x - ones * s.below) & ~x & highs;
  // Unrolled: no loop counter per word (count is fixed for the whole scan).
  if (s.count > 0) m |= equal(s.bytes[0]);
  if (s.count > 1) m |= equal(s.bytes[1]);
  if (s.count > 2) m |= equal(s.bytes[2]);
  if (s.count > 3) m |= equal(s.bytes[3]);
  return m;
}

}  // namespace detail

// find_stop for many runs of one text: the set is loaded into registers once (construct it
// outside the loop that alternates runs and stop bytes).
class stop_scanner {
 public:
  explicit stop_scanner(const byte_stops& s)
      : s_(s)
#if defined(__SSE2__)
        ,
        top_(_mm_set1_epi8(static_cast<char>(s.below == 0 ? 0 : s.below - 1))),
        b0_(_mm_set1_epi8(static_cast<char>(s.bytes[0]))),
        b1_(_mm_set1_epi8(static_cast<char>(s.bytes[1]))),
        b2_(_mm_set1_epi8(static_cast<char>(s.bytes[2]))),
        b3_(_mm_set1_epi8(static_cast<char>(s.bytes[3])))
#endif
  {
  }

  // First position >= pos whose byte is a stop, or text.size(). Sixteen (SSE2) or eight bytes
  // per step, the last few one by one.
  std::size_t find(std::string_view text, std::size_t pos) const {
    const char* const data = text.data();
    const std::size_t n = text.size();
    std::size_t p = pos;
#if defined(__SSE2__)
    while (p + 16 <= n) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + p));
      // Lanes with the top bit set are stops: x itself for bytes >= 0x80, all-ones compares.
      __m128i acc = s_.high ? x : _mm_setzero_si128();
      // x <= below - 1 (unsigned) exactly where max(x, below - 1) == below - 1.
      if (s_.below != 0) acc = _mm_or_si128(acc, _mm_cmpeq_epi8(_mm_max_epu8(x, top_), top_));
      if (s_.count > 0) acc = _mm_or_si128(acc, _mm_cmpeq_epi8(x, b0_));
      if (s_.count > 1) acc = _mm_or_si128(acc, _mm_cmpeq_epi8(x, b1_));
      if (s_.count > 2) acc = _mm_or_si128(acc, _mm_cmpeq_epi8(x, b2_));
      if (s_.count > 3) acc = _mm_or_si128(acc, _mm_cmpeq_epi8(x, b3_));
      if (const int m = _mm_movemask_epi8(acc); m != 0) {
        return p + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(m)));
      }
      p += 16;
    }
#endif
    if constexpr (std::endian::native == std::endian::little) {
      while (p + 8 <= n) {
        std::uint64_t x;
        std::memcpy(&x, data + p, 8);
        if (const std::uint64_t m = detail::stop_lanes(x, s_); m != 0) {
          return p + static_cast<std::size_t>(std::countr_zero(m)) / 8;
        }
        p += 8;
      }
    }
    while (p < n && !s_.contains(static_cast<unsigned char>(data[p]))) ++p;
    return p;
  }

 private:
  byte_stops s_;
#if defined(__SSE2__)
  __m128i top_, b0_, b1_, b2_, b3_;
#endif
};

// First position >= pos whose byte is in `stops`, or text.size() (one scan; loops over many
// runs keep a stop_scanner).
inline std::size_t find_stop(std::string_view text, std::size_t pos, const byte_stops& stops) {
  return stop_scanner(stops).find(text, pos);
}

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

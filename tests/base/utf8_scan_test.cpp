// Tests for the fast paths of base/utf8: find_stop (eight bytes at a time) against a byte loop,
// valid_utf8_prefix / is_valid_utf8 / sanitize_utf8 (validate once, copy, repair from the
// first bad byte) against the decode-every-code-point implementation they replaced. Random
// inputs mix ASCII runs of every length (so runs cross the 8-byte boundaries), valid
// multi-byte sequences, every kind of invalid byte and sequences cut anywhere.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "chatpeg/base/utf8.h"

namespace chatpeg::base {
namespace {

// Reference: the first stop byte at or after pos, one byte at a time.
std::size_t reference_find_stop(std::string_view text, std::size_t pos, const byte_stops& s) {
  while (pos < text.size() && !s.contains(static_cast<unsigned char>(text[pos]))) ++pos;
  return pos;
}

// Reference: sanitize by decoding every code point (the implementation before the fast path).
std::string reference_sanitize(std::string_view text, sanitize_options options) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto d = decode_utf8(text, i);
    if (d.status == utf8_status::ok) {
      out.append(text.data() + i, d.length);
    } else if (d.status == utf8_status::incomplete && options.hold_back_incomplete_tail) {
      break;
    } else {
      append_utf8(out, 0xFFFD);
    }
    i += d.length;
  }
  return out;
}

std::size_t reference_valid_prefix(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto d = decode_utf8(text, i);
    if (d.status != utf8_status::ok) break;
    i += d.length;
  }
  return i;
}

// Random text from pieces: ASCII runs of 0..20 bytes, valid sequences, invalid ones and
// sequences cut short.
std::string random_text(std::mt19937& rng) {
  static const std::vector<std::string> pieces = {"\xC3\xA9",
                                                  "\xE2\x82\xAC",
                                                  "\xF0\x9F\x98\x80",
                                                  "\xF4\x8F\xBF\xBF",
                                                  "\xED\x9F\xBF",
                                                  "\xC3",
                                                  "\xE2\x82",
                                                  "\xF0\x9F\x98",
                                                  "\x80",
                                                  "\xBF",
                                                  "\xC0\xAF",
                                                  "\xC1",
                                                  "\xE0\x80\xAF",
                                                  "\xED\xA0\x80",
                                                  "\xF4\x90\x80\x80",
                                                  "\xF5",
                                                  "\xFF",
                                                  "\xFE",
                                                  "\xE0\xA0",
                                                  "\x7F",
                                                  "\x00",
                                                  "\"",
                                                  "\\",
                                                  "\n",
                                                  "<"};
  std::string s;
  const std::size_t n = rng() % 10;
  for (std::size_t k = 0; k < n; ++k) {
    if (rng() % 2) {
      const std::size_t run = rng() % 21;
      for (std::size_t j = 0; j < run; ++j) s += static_cast<char>('a' + rng() % 26);
    } else {
      s += pieces[rng() % pieces.size()];
    }
  }
  if (rng() % 3 == 0 && !s.empty()) s.resize(rng() % s.size());  // cut anywhere
  return s;
}

TEST(Utf8Scan, FindStopMatchesByteLoop) {
  std::mt19937 rng(11);
  const byte_stops sets[] = {
      {.high = true},
      {.below = 0x20, .count = 2, .bytes = {'"', '\\'}},
      {.below = 0x20, .count = 3, .bytes = {'"', '\\', '\''}},
      {.count = 2, .bytes = {'\n', '<'}},
      {.count = 4, .bytes = {'\n', '<', 0x80, 0xFF}},
      {.below = 0x80},
      {.below = 0x01, .high = true, .count = 1, .bytes = {'a'}},
      {},
  };
  for (int i = 0; i < 4000; ++i) {
    const std::string text = random_text(rng);
    for (const auto& s : sets) {
      for (std::size_t pos = 0; pos <= text.size(); ++pos) {
        ASSERT_EQ(find_stop(text, pos, s), reference_find_stop(text, pos, s))
            << "text '" << text << "' pos " << pos << " below " << int(s.below);
      }
    }
  }
}

TEST(Utf8Scan, FindStopEveryLanePosition) {
  // One stop byte at every offset of a 40-byte run, for every kind of stop.
  const byte_stops s{.below = 0x20, .high = true, .count = 2, .bytes = {'"', '\\'}};
  for (const char stop : {'"', '\\', '\n', '\x00', '\x1F', '\x80', '\xFF'}) {
    for (std::size_t at = 0; at < 40; ++at) {
      std::string text(40, 'x');
      text[at] = stop;
      for (std::size_t pos = 0; pos <= at; ++pos) EXPECT_EQ(find_stop(text, pos, s), at);
      EXPECT_EQ(find_stop(text, at + 1, s), 40u);
    }
  }
  // Near misses of each stop byte are not stops.
  const std::string near = " !#[]^`~\x7F";
  EXPECT_EQ(find_stop(near, 0, s), near.size());
}

TEST(Utf8Scan, ValidatorsAndSanitizeMatchReference) {
  std::mt19937 rng(12);
  for (int i = 0; i < 20000; ++i) {
    const std::string text = random_text(rng);
    const std::size_t valid = reference_valid_prefix(text);
    ASSERT_EQ(valid_utf8_prefix(text), valid) << text;
    ASSERT_EQ(is_valid_utf8(text), valid == text.size()) << text;
    for (const bool hold : {false, true}) {
      const sanitize_options o{.hold_back_incomplete_tail = hold};
      ASSERT_EQ(sanitize_utf8(text, o), reference_sanitize(text, o)) << text << " hold " << hold;
    }
  }
}

TEST(Utf8Scan, SanitizeEveryCutOfMixedText) {
  const std::string text =
      "ascii run of more than eight \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 bytes \xFF\xC0 end";
  for (std::size_t n = 0; n <= text.size(); ++n) {
    const std::string_view prefix(text.data(), n);
    for (const bool hold : {false, true}) {
      const sanitize_options o{.hold_back_incomplete_tail = hold};
      EXPECT_EQ(sanitize_utf8(prefix, o), reference_sanitize(prefix, o)) << n;
    }
  }
}

}  // namespace
}  // namespace chatpeg::base

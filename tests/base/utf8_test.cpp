// Tests for base/utf8: strict decoding, incomplete tails, sanitizing.
#include "chatpeg/base/utf8.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace chatpeg::base {
namespace {

struct decode_case {
  const char* name;
  std::string bytes;
  utf8_status status;
  char32_t cp;
  int length;
};

class DecodeTest : public ::testing::TestWithParam<decode_case> {};

TEST_P(DecodeTest, Decodes) {
  const auto& c = GetParam();
  const auto d = decode_utf8(c.bytes, 0);
  EXPECT_EQ(d.status, c.status);
  EXPECT_EQ(d.code_point, c.cp);
  EXPECT_EQ(d.length, c.length);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DecodeTest,
    ::testing::Values(
        decode_case{"ascii", "A", utf8_status::ok, U'A', 1},
        decode_case{"two", "\xC3\xA9", utf8_status::ok, 0xE9, 2},
        decode_case{"three", "\xE2\x82\xAC", utf8_status::ok, 0x20AC, 3},
        decode_case{"four", "\xF0\x9F\x98\x80", utf8_status::ok, 0x1F600, 4},
        decode_case{"cut_four_1", "\xF0", utf8_status::incomplete, 0xFFFD, 1},
        decode_case{"cut_four_2", "\xF0\x9F", utf8_status::incomplete, 0xFFFD, 2},
        decode_case{"cut_four_3", "\xF0\x9F\x98", utf8_status::incomplete, 0xFFFD, 3},
        decode_case{"lone_continuation", "\x80", utf8_status::invalid, 0xFFFD, 1},
        decode_case{"overlong_c0", "\xC0\xAF", utf8_status::invalid, 0xFFFD, 1},
        decode_case{"overlong_e0", "\xE0\x80\xAF", utf8_status::invalid, 0xFFFD, 1},
        decode_case{"surrogate", "\xED\xA0\x80", utf8_status::invalid, 0xFFFD, 1},
        decode_case{"too_big", "\xF4\x90\x80\x80", utf8_status::invalid, 0xFFFD, 1},
        decode_case{"f5", "\xF5\x80\x80\x80", utf8_status::invalid, 0xFFFD, 1},
        decode_case{"bad_third", "\xE2\x82\x41", utf8_status::invalid, 0xFFFD, 2}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Utf8, IncompleteTailAtEveryCut) {
  const std::string emoji = "ab\xF0\x9F\x98\x80";
  for (std::size_t cut = 0; cut <= emoji.size(); ++cut) {
    const std::string_view prefix(emoji.data(), cut);
    const std::size_t expected = (cut > 2 && cut < emoji.size()) ? cut - 2 : 0;
    EXPECT_EQ(utf8_incomplete_tail(prefix), expected) << "cut " << cut;
  }
  EXPECT_EQ(utf8_incomplete_tail("\x80\x80\x80"), 0u);
  EXPECT_EQ(utf8_incomplete_tail("\xC3\x28"), 0u);  // invalid, not incomplete
}

TEST(Utf8, SanitizeReplacesMaximalSubparts) {
  EXPECT_EQ(sanitize_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(sanitize_utf8("\xE2\x82" "A"), "\xEF\xBF\xBD" "A");  // one U+FFFD for the subpart
  EXPECT_EQ(sanitize_utf8("ok\xF0\x9F\x98"), "ok\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_utf8("ok\xF0\x9F\x98", {.hold_back_incomplete_tail = true}), "ok");
  EXPECT_EQ(sanitize_utf8("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");
}

TEST(Utf8, SanitizedIsAlwaysValid) {
  // Property: every 1..3 byte string over a mix of interesting bytes sanitizes to valid UTF-8.
  const unsigned char alphabet[] = {0x41, 0x80, 0xBF, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xFF, 0x9F};
  for (unsigned char a : alphabet)
    for (unsigned char b : alphabet)
      for (unsigned char c : alphabet) {
        const std::string s{static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)};
        EXPECT_TRUE(is_valid_utf8(sanitize_utf8(s)));
        EXPECT_TRUE(is_valid_utf8(sanitize_utf8(s, {.hold_back_incomplete_tail = true})));
      }
}

TEST(Utf8, AppendRoundTrips) {
  for (char32_t cp : {U'\0', U'A', char32_t{0x7FF}, char32_t{0x800}, char32_t{0xFFFF},
                      char32_t{0x10000}, char32_t{0x10FFFF}}) {
    std::string s;
    append_utf8(s, cp);
    const auto d = decode_utf8(s, 0);
    EXPECT_EQ(d.status, utf8_status::ok);
    EXPECT_EQ(d.code_point, cp);
    EXPECT_EQ(d.length, s.size());
  }
  std::string s;
  append_utf8(s, 0xD800);
  EXPECT_EQ(s, "\xEF\xBF\xBD");
}

// short_utf8 (the inline check of a few streamed bytes) against utf8_incomplete_tail +
// is_valid_utf8 on random bytes around every boundary of the tables.
TEST(ShortUtf8, AgreesWithTheOutOfLineFunctions) {
  std::mt19937 rng(7);
  // Bytes around every boundary of the UTF-8 tables.
  const std::vector<unsigned char> pool = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
                                           0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE,
                                           0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  std::size_t valid = 0, cut = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string bytes(1 + rng() % 8, '\0');
    for (auto& c : bytes) c = static_cast<char>(pool[rng() % pool.size()]);
    std::size_t tail = 0;
    const bool got =
        short_utf8(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), tail);
    const std::size_t want_tail = utf8_incomplete_tail(bytes);
    const bool want = is_valid_utf8(std::string_view(bytes).substr(0, bytes.size() - want_tail));
    // short_utf8 may refuse more (the caller then takes the exact path), never accept more.
    if (got) {
      ASSERT_TRUE(want) << ::testing::PrintToString(bytes);
      ASSERT_EQ(tail, want_tail) << ::testing::PrintToString(bytes);
      ++valid;
      cut += tail != 0;
    } else {
      // It refuses only what is invalid somewhere.
      ASSERT_FALSE(is_valid_utf8(bytes) || (want && want_tail != 0))
          << ::testing::PrintToString(bytes);
    }
  }
  EXPECT_GT(valid, 1000u);
  EXPECT_GT(cut, 100u);
}

}  // namespace
}  // namespace chatpeg::base

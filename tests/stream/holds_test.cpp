// Tests for stream/detail/holds.h: the UTF-8 and escape hold rules every streaming path asks,
// table-driven, with the UTF-8 rule checked against base's decoder on random bytes for both of its
// sizes (the inline loop and the library scan).
#include "stream/holds.h"

#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <random>
#include <string>
#include <string_view>

namespace chatpeg::stream::detail {
namespace {

struct utf8_case {
  const char* name;
  std::string bytes;
  bool valid;
  std::size_t held;
};

class Utf8HoldTest : public ::testing::TestWithParam<utf8_case> {};

TEST_P(Utf8HoldTest, HoldsAnIncompleteTail) {
  const auto& c = GetParam();
  for (const std::string& text : {c.bytes, std::string(100, 'a') + c.bytes}) {  // both sizes
    const utf8_hold h = utf8_hold::of(text);
    EXPECT_EQ(h.valid, c.valid) << text.size();
    if (c.valid) {
      EXPECT_EQ(h.held, c.held) << text.size();
    }
    EXPECT_EQ(utf8_hold::whole(text), c.valid && c.held == 0);
  }
  EXPECT_EQ(utf8_hold::tail(c.bytes), base::utf8_incomplete_tail(c.bytes));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Utf8HoldTest,
    ::testing::Values(utf8_case{"ascii", "plain", true, 0},
                      utf8_case{"whole_two_bytes", "caf\xC3\xA9", true, 0},
                      utf8_case{"cut_two_bytes", "caf\xC3", true, 1},
                      utf8_case{"cut_three_bytes_after_one", "\xE2", true, 1},
                      utf8_case{"cut_three_bytes_after_two", "x\xE2\x82", true, 2},
                      utf8_case{"cut_four_bytes_after_three", "\xF0\x9F\x98", true, 3},
                      utf8_case{"whole_four_bytes", "\xF0\x9F\x98\x80", true, 0},
                      utf8_case{"stray_continuation", "a\x80", false, 0},
                      utf8_case{"overlong", "\xC0\xAF", false, 0},
                      utf8_case{"surrogate", "\xED\xA0\x80", false, 0},
                      utf8_case{"cut_surrogate_is_invalid", "\xED\xA0", false, 0},
                      utf8_case{"above_max", "\xF4\x90\x80\x80", false, 0},
                      utf8_case{"invalid_before_a_cut_tail", "\xFF\xC3", false, 0},
                      utf8_case{"empty", "", true, 0}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Utf8HoldTest, AgreesWithTheDecoderOnRandomBytesAtBothSizes) {
  std::mt19937 rng(11);
  const unsigned char pool[] = {'a',  0x80, 0x9F, 0xA0, 0xBF, 0xC2, 0xC3, 0xDF, 0xE0,
                                0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0x82, 0x98};
  for (int round = 0; round < 20000; ++round) {
    std::string text(rng() % 8, ' ');
    for (auto& ch : text) ch = static_cast<char>(pool[rng() % sizeof pool]);
    if (round % 2) text.insert(0, 80, 'b');  // the library path
    const std::size_t tail = base::utf8_incomplete_tail(text);
    const bool valid = base::is_valid_utf8(text.substr(0, text.size() - tail));
    const utf8_hold h = utf8_hold::of(text);
    ASSERT_EQ(h.valid, valid) << round;
    if (valid) {
      ASSERT_EQ(h.held, tail) << round;
    }
  }
}

// A JSON string's escape syntax, as a grammar writes it: \\ then one of "\\/bfnrt, or \\u and
// four hex digits; a quote or a control byte ends the text.
struct json_syntax {
  unsigned char escape = '\\';
  unsigned char unicode = 'u';
  std::size_t hex = 4;
  static bool plain(unsigned char b) { return b != '"' && b != '\\' && b >= 0x20; }
  static bool simple(unsigned char b) {
    return std::string_view("\"\\/bfnrt").find(b) != std::string_view::npos;
  }
  static bool digit(unsigned char b) { return std::isxdigit(b) != 0; }
};

struct escape_case {
  const char* name;
  std::string body;  // bytes of a JSON string after its opening quote
  bool plain;        // the full JSON syntax
  std::size_t held;
};

class EscapeHoldTest : public ::testing::TestWithParam<escape_case> {};

TEST_P(EscapeHoldTest, TakesKnownEscapesAndHoldsACutOne) {
  const auto& c = GetParam();
  const auto* bytes = reinterpret_cast<const unsigned char*>(c.body.data());
  const escape_hold h = escape_hold::of(bytes, 0, c.body.size(), json_syntax{});
  EXPECT_EQ(h.plain, c.plain);
  if (c.plain) {
    EXPECT_EQ(h.held, c.held);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, EscapeHoldTest,
    ::testing::Values(
        escape_case{"plain", "abc", true, 0}, escape_case{"newline_escape", "a\\nb", true, 0},
        escape_case{"quote_escape", "say \\\"hi\\\"", true, 0},
        escape_case{"backslash_escape", "C:\\\\dir", true, 0},
        escape_case{"cut_escape", "abc\\", true, 1},
        escape_case{"escaped_backslash_then_cut", "\\\\\\", true, 1},
        escape_case{"escaped_backslash_at_end", "a\\\\", true, 0},
        escape_case{"unicode_escape", "\\u00e9", true, 0},
        escape_case{"unicode_cut_in_its_digits", "x\\u00", true, 4},
        escape_case{"unicode_cut_after_u", "x\\u", true, 2},
        escape_case{"unicode_bad_digit", "\\u00g0", false, 0},
        escape_case{"slash_escape", "\\/", true, 0}, escape_case{"unknown_escape", "\\q", false, 0},
        escape_case{"closing_quote", "abc\"", false, 0},
        escape_case{"control_byte", "a\nb", false, 0},
        escape_case{"utf8_is_plain", "caf\xC3\xA9", true, 0}, escape_case{"empty", "", true, 0}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(EscapeHoldTest, StartsAtFrom) {
  const std::string body = "\\q\\n";
  const auto* bytes = reinterpret_cast<const unsigned char*>(body.data());
  EXPECT_FALSE(escape_hold::of(bytes, 0, body.size(), json_syntax{}).plain);
  EXPECT_TRUE(escape_hold::of(bytes, 2, body.size(), json_syntax{}).plain);
}

}  // namespace
}  // namespace chatpeg::stream::detail

// The lean feed's building blocks (src/stream/lean_feed.h), each against a plain reference on
// seeded random inputs: marker_dfa::clean (no text occurs, no suffix is a proper prefix of
// one) against a scan of every position and every text; short_utf8 against
// base::utf8_incomplete_tail + base::is_valid_utf8; the inline lane (lean_lane.h) takes only
// plain chunks below its limit. The lean path as a whole is checked against the usual path in
// session_lean_feed_test.cpp and every stream conformance run.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "chatpeg/base/utf8.h"
#include "chatpeg/stream/session.h"
#include "stream/lean_feed.h"

namespace chatpeg::stream::detail {
namespace {

bool clean_reference(const std::vector<std::string>& texts, std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const std::string_view rest = bytes.substr(i);
    for (const auto& t : texts) {
      if (t.empty()) continue;
      if (rest.size() >= t.size() ? rest.substr(0, t.size()) == t
                                  : std::string_view(t).substr(0, rest.size()) == rest) {
        return false;  // occurs, or a suffix is a proper prefix of it
      }
    }
  }
  return true;
}

std::string random_text(std::mt19937& rng, std::string_view alphabet, std::size_t max_len) {
  std::string out(rng() % (max_len + 1), ' ');
  for (auto& c : out) c = alphabet[rng() % alphabet.size()];
  return out;
}

TEST(MarkerDfa, CleanAgreesWithAScanOfEveryPosition) {
  std::mt19937 rng(20261201);
  const std::string alphabet = "<>/tolc_|a\n";
  std::size_t clean = 0, dirty = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<std::string> texts;
    const std::size_t count = 1 + rng() % 4;
    for (std::size_t k = 0; k < count; ++k) texts.push_back(random_text(rng, alphabet, 6));
    std::vector<std::string_view> views(texts.begin(), texts.end());
    marker_dfa dfa;
    dfa.build(views);
    for (int i = 0; i < 100; ++i) {
      const std::string bytes = random_text(rng, alphabet + "xyz ", 10);
      const bool want = clean_reference(texts, bytes);
      const bool got =
          dfa.clean(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
      ASSERT_EQ(got, want) << "bytes '" << bytes << "', first text '" << texts[0] << "'";
      (want ? clean : dirty)++;
    }
  }
  EXPECT_GT(clean, 1000u);  // both answers are exercised
  EXPECT_GT(dirty, 1000u);
}

TEST(MarkerDfa, TableDriven) {
  struct row {
    std::vector<std::string> texts;
    std::string bytes;
    bool clean;
  };
  const std::vector<row> rows = {
      {{"<tool_call>"}, "a < b", true},
      {{"<tool_call>"}, "a <", false},            // cut by the end
      {{"<tool_call>"}, "x<tool_call>y", false},  // occurs
      {{"<tool_call>"}, "<tool_cal", false},
      {{"<tool_call>"}, "<tool_calx", true},
      {{"</think>", "<tool_call>"}, "</div>", true},
      {{"</think>", "<tool_call>"}, "<</think", false},  // found through a suffix link
      {{"\n</parameter>"}, "a\nb\n", false},
      {{"\n</parameter>"}, "a\nb\nc", true},
      {{"ab", "b"}, "xa", false},
      {{"ab", "b"}, "xb", false},  // the one-byte text
      {{}, "anything", true},
  };
  for (const auto& r : rows) {
    std::vector<std::string_view> views(r.texts.begin(), r.texts.end());
    marker_dfa dfa;
    dfa.build(views);
    EXPECT_EQ(dfa.clean(reinterpret_cast<const unsigned char*>(r.bytes.data()), r.bytes.size()),
              r.clean)
        << r.bytes;
  }
}

TEST(ShortUtf8, AgreesWithTheBaseFunctions) {
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
    const std::size_t want_tail = base::utf8_incomplete_tail(bytes);
    const bool want =
        base::is_valid_utf8(std::string_view(bytes).substr(0, bytes.size() - want_tail));
    // short_utf8 may refuse more (the caller then takes the exact path), never accept more.
    if (got) {
      ASSERT_TRUE(want) << testing::PrintToString(bytes);
      ASSERT_EQ(tail, want_tail) << testing::PrintToString(bytes);
      ++valid;
      cut += tail != 0;
    } else {
      // It refuses only what is invalid somewhere.
      ASSERT_FALSE(base::is_valid_utf8(bytes) || (want && want_tail != 0))
          << testing::PrintToString(bytes);
    }
  }
  EXPECT_GT(valid, 1000u);
  EXPECT_GT(cut, 100u);
}

TEST(LeanLane, TakesOnlyPlainChunksBelowItsLimit) {
  std::array<std::uint8_t, 256> classes{};
  classes['<'] = lean_scanner::kCheck;
  classes[0xC3] = lean_scanner::kHigh;
  byte_buffer input;
  input.assign("prefix");
  std::string_view field;
  lean_lane lane;
  lane.input = &input;
  lane.field = &field;
  EXPECT_FALSE(lane.take("abcd"));  // not armed
  lane.classes = classes.data();
  lane.limit = input.size() + 9;
  EXPECT_TRUE(lane.take("abcd"));
  EXPECT_EQ(field, "abcd");
  EXPECT_FALSE(lane.take("a<cd"));
  EXPECT_FALSE(lane.take("\xC3\xA9"));
  EXPECT_FALSE(lane.take(""));
  EXPECT_FALSE(lane.take("efghi"));  // would reach the limit
  EXPECT_TRUE(lane.take("efgh"));
  EXPECT_EQ(input.view(), "prefixabcdefgh");
  EXPECT_EQ(lane.feeds, 2u);
}

}  // namespace
}  // namespace chatpeg::stream::detail

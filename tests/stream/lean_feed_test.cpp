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
  classes['<'] = lean_class::check;
  classes['"'] = lean_class::escape;
  classes['}'] = lean_class::reject;
  for (std::size_t b = 0x80; b < 0x100; ++b) classes[b] = lean_class::high;
  const std::vector<std::string_view> texts = {"<tool_call>"};
  lean_pairs pairs;
  pairs.build(texts);
  byte_buffer input;
  input.assign("prefix");
  std::string_view field;
  lean_lane lane;
  lane.input = &input;
  lane.field = &field;
  lane.pairs = &pairs;
  EXPECT_FALSE(lane.take("abcd"));  // not armed
  lane.classes = classes.data();
  lane.limit = input.size() + 20;
  struct row {
    std::string_view chunk;
    bool taken;
  };
  const std::vector<row> rows = {
      {"abcd", true},      {"a<cd", true},         // '<' then 'c' starts no text
      {"a<td", false},                             // "<t" may start "<tool_call>"
      {"abc<", false},                             // cut by the end: held, the session's path
      {"\xC3\xA9", true},                          // whole UTF-8
      {"a\xC3", false},                            // an incomplete sequence
      {"\xC3(", false},                            // invalid
      {"a\"b", false},                             // an escape
      {"a}", false},                               // ends the span
      {"", false},         {"0123456789", false},  // would reach the limit
      {"012345678", true},
  };
  std::string want = "prefix";
  std::size_t taken = 0;
  for (const auto& r : rows) {
    EXPECT_EQ(lane.take(r.chunk), r.taken) << testing::PrintToString(std::string(r.chunk));
    if (!r.taken) continue;
    EXPECT_EQ(field, r.chunk);
    want += r.chunk;
    ++taken;
  }
  EXPECT_EQ(input.view(), want);
  EXPECT_EQ(lane.feeds, taken);
  EXPECT_EQ(lane.saw, lean_class::check | lean_class::high);
}

// A JSON-string span copies whole simple escapes; a raw string argument escapes its bytes
// into the lane's buffer (the view is the escaped text); an escape cut by the end, or an
// escape the converter rewrites, is left to the session.
TEST(LeanLane, EscapesInStringArguments) {
  std::array<std::uint8_t, 256> json_classes{};
  json_classes['\\'] = lean_class::escape;
  json_classes['"'] = lean_class::reject;
  std::array<std::uint8_t, 256> raw_classes{};
  raw_classes['"'] = raw_classes['\\'] = raw_classes['\t'] = lean_class::escape;
  raw_classes['\n'] = lean_class::escape | lean_class::check;
  const std::vector<std::string_view> texts = {"\n</parameter>"};
  lean_pairs pairs;
  pairs.build(texts);
  struct row {
    bool json;
    std::string_view chunk;
    bool taken;
    std::string_view view;
  };
  const std::vector<row> rows = {
      {true, "a\\nb", true, "a\\nb"},
      {true, "\\\"x", true, "\\\"x"},  // an escaped quote does not end the string
      {true, "ab\"", false, ""},       // the closing quote
      {true, "ab\\", false, ""},       // an escape cut by the end
      {true, "\\u00e9", false, ""},    // rewritten by the converter
      {false, "say \"hi\"", true, "say \\\"hi\\\""},
      {false, "a\tb", true, "a\\tb"},
      {false, "x\ny", true, "x\\ny"},  // a line break that starts no delimiter
      {false, "x\n<", false, ""},      // it may start "\n</parameter>"
      {false, "plain", true, "plain"},
  };
  for (const auto& r : rows) {
    byte_buffer input;
    std::string_view field;
    lean_lane lane;
    lane.input = &input;
    lane.field = &field;
    lane.pairs = &pairs;
    lane.classes = r.json ? json_classes.data() : raw_classes.data();
    lane.json_escapes = r.json;
    lane.raw_escapes = !r.json;
    byte_buffer escaped;
    escaped.assign("before|");
    std::string scratch;
    lane.escaped = &escaped;
    lane.scratch = &scratch;
    lane.limit = 100;
    EXPECT_EQ(lane.take(r.chunk), r.taken) << testing::PrintToString(std::string(r.chunk));
    if (!r.taken) continue;
    EXPECT_EQ(field, r.view);
    EXPECT_EQ(input.view(), r.chunk);
    if (!r.json) {
      EXPECT_EQ(escaped.view(), "before|" + std::string(r.view));  // appended
    }
  }
}

}  // namespace
}  // namespace chatpeg::stream::detail

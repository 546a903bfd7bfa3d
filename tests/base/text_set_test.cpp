// Tests for base/text_set: the hold rule for texts cut by the end of input (held_prefix) and
// whole occurrences, table-driven, plus the rule against a brute-force definition.
#include "chatpeg/base/text_set.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace chatpeg::base {
namespace {

struct held_case {
  const char* name;
  std::vector<std::string> texts;
  std::string text;
  std::size_t from;
  std::size_t held;
};

class HeldPrefixTest : public ::testing::TestWithParam<held_case> {};

TEST_P(HeldPrefixTest, HoldsTheLongestProperPrefixAtTheEnd) {
  const auto& c = GetParam();
  const text_set set(c.texts);
  EXPECT_EQ(set.held(c.text, c.from), c.held);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, HeldPrefixTest,
    ::testing::Values(held_case{"nothing_cut", {"</think>"}, "plain text", 0, 0},
                      held_case{"first_byte", {"</think>"}, "text <", 0, 1},
                      held_case{"most_of_it", {"</think>"}, "text </think", 0, 7},
                      held_case{"whole_text_is_not_held", {"</think>"}, "text </think>", 0, 0},
                      held_case{"one_byte_text_never_held", {"<"}, "text <", 0, 0},
                      held_case{"longest_of_two", {"\n</p>", "</p>"}, "x\n</p", 0, 4},
                      held_case{"shorter_one_only", {"<tool_call>", "<|im_end|>"}, "a <|im", 0, 4},
                      held_case{
                          "other_marker_names", {"[TOOL_CALLS]", "<<SYS>>"}, "ok [TOOL_C", 0, 7},
                      held_case{"quote_delimiter", {"\",\"", "\"}"}, "value\"", 0, 1},
                      held_case{"not_before_from", {"</think>"}, "</thi", 2, 0},
                      held_case{"from_inside_the_prefix", {"</think>"}, "ab</thi", 2, 5},
                      held_case{"empty_text", {"</think>"}, "", 0, 0},
                      held_case{"a_prefix_not_at_the_end", {"<tool>"}, "<to x", 0, 0},
                      held_case{"repeated_first_byte", {"<<>>"}, "<<<", 0, 2},
                      held_case{"utf8_marker",
                                {"\xE2\x96\x81"
                                 "call"},
                                "text \xE2\x96",
                                0,
                                2}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(TextSetTest, OccursFindsWholeTextsFromAnOffset) {
  const text_set set(std::vector<std::string>{"<tool_call>", "</think>"});
  EXPECT_TRUE(set.occurs("a</think>b"));
  EXPECT_FALSE(set.occurs("a</think"));
  EXPECT_FALSE(set.occurs("</think> a", 1));
  EXPECT_TRUE(set.occurs("x<tool_call>", 1));
  EXPECT_FALSE(text_set().occurs("anything"));
}

TEST(TextSetTest, KeepsEachTextOnceWithItsFirstByteAndLength) {
  text_set set;
  set.add("<a>");
  set.add("<a>");
  set.add("");
  set.add("[B]");
  EXPECT_EQ(set.texts().size(), 2u);
  EXPECT_TRUE(set.first()['<']);
  EXPECT_TRUE(set.first()['[']);
  EXPECT_FALSE(set.first()['a']);
  EXPECT_EQ(set.longest(), 3u);
}

// The definition, by brute force: the longest suffix of text[from, end) that is a proper
// prefix of some text.
std::size_t brute_held(const std::vector<std::string>& texts, std::string_view text,
                       std::size_t from) {
  for (std::size_t i = from; i < text.size(); ++i) {
    const std::string_view suffix = text.substr(i);
    for (const auto& t : texts) {
      if (suffix.size() < t.size() && t.compare(0, suffix.size(), suffix) == 0) {
        return suffix.size();
      }
    }
  }
  return 0;
}

TEST(TextSetTest, HeldAgreesWithTheDefinitionOnRandomInputs) {
  std::mt19937 rng(7);
  const std::string alphabet = "<>/|ab";
  auto random_text = [&](std::size_t max) {
    std::string s(rng() % (max + 1), ' ');
    for (auto& ch : s) ch = alphabet[rng() % alphabet.size()];
    return s;
  };
  for (int round = 0; round < 4000; ++round) {
    std::vector<std::string> texts;
    for (std::size_t k = 1 + rng() % 3; k > 0; --k) {
      std::string t = random_text(5);
      if (!t.empty()) texts.push_back(t);
    }
    const std::string text = random_text(10);
    const std::size_t from = text.empty() ? 0 : rng() % (text.size() + 1);
    const text_set set(texts);
    ASSERT_EQ(set.held(text, from), brute_held(texts, text, from))
        << "text '" << text << "' from " << from;
  }
}

}  // namespace
}  // namespace chatpeg::base

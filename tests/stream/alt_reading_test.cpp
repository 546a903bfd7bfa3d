// detail::alt_readings and detail::ambiguity on their own: which `until` nodes of a grammar
// have a later reading (an ordered choice whose later alternative reads the same kind of text
// up to more stops and goes on differently), with what stops and continuation; and, for the
// open text node of a lenient match, how much text is held back: nothing before the first
// stop of the later reading, the text from there while that reading can still go on, nothing
// once it cannot (the text after the stop is no call) or the block closed.
#include "stream/alt_reading.h"

#include <gtest/gtest.h>

#include <string>

#include "chatpeg/peg/matcher.h"
#include "test_grammars.h"

namespace chatpeg::stream::detail {
namespace {

using namespace chatpeg::stream::testing;

// A reasoning block the model opens and may leave open, then calls (chat's reasoning_block).
parser open_block(builder& b) {
  auto call = b.literal("<tool_call>") << json_call(b) << b.literal("</tool_call>");
  auto calls = b.rule("tool-calls", call + b.zero_or_more(b.space() + call));
  auto open = b.literal("<think>");
  auto closed = open + b.reasoning(b.until("</think>")) + b.literal("</think>");
  auto up_to_call = open + b.reasoning(b.until_one_of({"</think>", "<tool_call>"})) + b.peek(calls);
  auto to_end = open + b.reasoning(b.until("</think>")) + b.end();
  return b.optional(b.choice({closed, up_to_call, to_end})) + b.content(b.until("<tool_call>")) +
         b.optional(calls) + b.end();
}

TEST(alt_readings, found_in_the_grammar) {
  auto g = build(open_block);
  ASSERT_TRUE(g);
  alt_readings alts(*g);
  ASSERT_FALSE(alts.empty());
  ASSERT_EQ(alts.all_stops().size(), 1u);
  EXPECT_EQ(alts.all_stops()[0], "<tool_call>");
  EXPECT_TRUE(alts.first_bytes()['<']);
  EXPECT_FALSE(alts.first_bytes()['a']);
  ASSERT_NE(alts.few_first_bytes(), nullptr);
  // Exactly one text node (the closed block's reasoning) has the later reading.
  int owners = 0;
  for (peg::node_id id = 0; id < g->size(); ++id) {
    if (const auto* r = alts.for_owner(id)) {
      ++owners;
      ASSERT_EQ(r->size(), 1u);
      EXPECT_EQ((*r)[0].stops, std::vector<std::string>{"<tool_call>"});
      EXPECT_FALSE((*r)[0].continuation.empty());
    }
  }
  EXPECT_EQ(owners, 1);
}

TEST(alt_readings, none_without_an_ordered_choice_of_readings) {
  for (const auto& make : {json_native, tag_with_tagged, reasoning_calls, gemma_style}) {
    auto g = build(make);
    ASSERT_TRUE(g);
    EXPECT_TRUE(alt_readings(*g).empty());
  }
}

struct hold_case {
  const char* name;
  std::string input;
  std::size_t held;  // reasoning bytes held back
};
void PrintTo(const hold_case& c, std::ostream* os) {
  *os << c.name;
}

class ambiguity_hold : public ::testing::TestWithParam<hold_case> {};

TEST_P(ambiguity_hold, holds_what_a_later_reading_may_take) {
  const auto& c = GetParam();
  auto g = build(open_block);
  ASSERT_TRUE(g);
  alt_readings alts(*g);
  const auto r = peg::match(*g, c.input, peg::match_flags::lenient);
  ASSERT_NE(r.status, peg::match_status::fail) << r.error.to_string();
  // The reasoning text folded so far: from after <think> to the end (what the stream has).
  const std::size_t text = c.input.size() - std::string("<think>").size();
  ambiguity a;
  const auto hold = a.update(alts, *g, r.ast, c.input, {text, 0});
  EXPECT_EQ(hold.text, channel::reasoning);
  EXPECT_EQ(hold.bytes, c.held);
}

INSTANTIATE_TEST_SUITE_P(
    table, ambiguity_hold,
    ::testing::Values(hold_case{"no_stop", "<think>plan a < b", 0},
                      hold_case{"call_may_follow", "<think>plan <tool_call>{\"name\": \"get", 24},
                      hold_case{"opener_alone", "<think>plan <tool_call>", 11},
                      hold_case{"not_a_call", "<think>plan <tool_call>oops, prose", 0},
                      hold_case{"wrong_name", "<think>plan <tool_call>{\"name\": \"nope\"", 0}),
    [](const auto& tc) { return std::string(tc.param.name); });

// Checks are amortized: while the text grows by less than a quarter of the ambiguous bytes the
// continuation is not matched again.
TEST(ambiguity, checks_are_amortized) {
  auto g = build(open_block);
  ASSERT_TRUE(g);
  alt_readings alts(*g);
  ambiguity a;
  std::string input = "<think>x <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"c\": \"";
  for (int i = 0; i < 2000; ++i) {
    input += "y";
    const auto r = peg::match(*g, input, peg::match_flags::lenient);
    (void)a.update(alts, *g, r.ast, input, {input.size() - 7, 0});
  }
  EXPECT_LT(a.checks(), 60u);
  EXPECT_GT(a.checks(), 0u);
  EXPECT_GT(a.scanned_bytes(), 0u);
  a.clear();
  EXPECT_EQ(a.scanned_bytes(), 0u);
}

}  // namespace
}  // namespace chatpeg::stream::detail

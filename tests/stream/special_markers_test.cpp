// detail::special_markers on its own: which occurrences of special-token markers count as the
// marker (exactly one token of that id made exactly its bytes) and which are look-alikes whose
// first byte the matcher's shadow hides; markers inside another marker's token are not looked
// at again (">" inside "</tool_call>"), and of markers starting at one byte the longest that
// its token made wins ("```json" over "```"); an occurrence whose tokens are not all known yet
// waits.
#include "stream/special_markers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chatpeg/peg/builder.h"

namespace chatpeg::stream::detail {
namespace {

constexpr std::int32_t kNoIds = -2;
constexpr std::int32_t kText = 7;  // an ordinary token

struct piece {
  std::string text;
  std::int32_t id;  // the token that made it (kText: one ordinary token per byte)
};

struct marker_case {
  const char* name;
  std::vector<piece> output;
  std::string shadow;  // the output as the matcher reads it ('~' hides a look-alike)
  bool at_end = true;
  std::size_t undecided;  // where decide() stops (the output size when all is decided)
};
void PrintTo(const marker_case& c, std::ostream* os) {
  *os << c.name;
}

class special_markers_table : public ::testing::TestWithParam<marker_case> {};

TEST_P(special_markers_table, decides_markers_from_token_ids) {
  const auto& c = GetParam();
  peg::builder b;
  auto g = b.build(b.literal("<tool_call>") + b.literal("```json") + b.literal(">"));
  ASSERT_TRUE(g.has_value());
  special_markers m;
  m.set(*g, {{">", 10}, {"</tool_call>", 11}, {"<tool_call>", 12}, {"```", 13}, {"```json", 14}});
  std::string out;
  std::vector<std::int32_t> tokens;
  for (const auto& p : c.output) {
    out += p.text;
    for (std::size_t i = 0; i < p.text.size(); ++i) {
      tokens.push_back(p.id == kText ? kText : (i == 0 ? p.id : -1));
    }
  }
  std::string shadow = out;
  const std::size_t at = m.decide(out, tokens, shadow, 0, 0, c.at_end, kNoIds);
  EXPECT_EQ(at, c.undecided);
  EXPECT_EQ(shadow, c.shadow);
}

INSTANTIATE_TEST_SUITE_P(
    table, special_markers_table,
    ::testing::Values(
        marker_case{
            "marker", {{"a", kText}, {"<tool_call>", 12}, {"b", kText}}, "a<tool_call>b", true, 13},
        // Typed as ordinary tokens, both "<tool_call>" and its ">" are look-alikes.
        marker_case{"look_alike", {{"a", kText}, {"<tool_call>", kText}}, "a~tool_call~", true, 12},
        marker_case{"inner_marker_not_looked_at",
                    {{"x", kText}, {"</tool_call>", 11}, {" 2", kText}, {">", 10}},
                    "x</tool_call> 2>",
                    true,
                    16},
        marker_case{
            "inner_text_token_is_a_look_alike", {{"a", kText}, {">", kText}}, "a~", true, 2},
        marker_case{
            "longest_made_by_its_token", {{"```json", 14}, {"\n", kText}}, "```json\n", true, 8},
        marker_case{"shorter_token_then_text",
                    {{"```", 13}, {"j", kText}, {"s", kText}, {"o", kText}, {"n", kText}},
                    "```json",
                    true,
                    7},
        marker_case{"cut_by_the_end_waits", {{"a", kText}, {"<tool_", 12}}, "a<tool_", false, 1}),
    [](const auto& tc) { return std::string(tc.param.name); });

}  // namespace
}  // namespace chatpeg::stream::detail

// The fix-up table: one fixture template per row, each applying its row (listed in
// analysis.fixups) and setting the fields the row is for. A row without a fixture here fails.
#include <gtest/gtest.h>

#include <algorithm>

#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

const char* const loop =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

struct fixup_fixture {
  const char* name;
  const char* marker;  // put in front of the chat loop
  void (*check)(const analysis& a);
};

const std::vector<fixup_fixture>& fixtures() {
  static const std::vector<fixup_fixture> rows = {
      {"think-split-reasoning", "{% set c = 'x'.split('</think>')[-1] %}",
       [](const analysis& a) {
         EXPECT_EQ(a.reasoning.mode, reasoning_mode::tag_based);
         EXPECT_EQ(a.reasoning.start, "<think>");
         EXPECT_EQ(a.reasoning.end, "</think>");
       }},
      {"granite-3.3",
       "{# Write your thoughts between <think></think> and your response between "
       "<response></response> #}",
       [](const analysis& a) {
         EXPECT_EQ(a.reasoning.end, "</think>");
         EXPECT_EQ(a.content.start, "<response>");
         EXPECT_EQ(a.content.end, "</response>");
         EXPECT_EQ(a.tools.section_start, "<|tool_call|>");
       }},
      {"command-r-plus", "{# <|CHATBOT_TOKEN|> Action: #}",
       [](const analysis& a) {
         EXPECT_EQ(a.content.start, "<|CHATBOT_TOKEN|>");
         EXPECT_EQ(a.tools.format, tool_format::json_native);
         EXPECT_EQ(a.tools.section_start, "Action:\n```json\n");
         EXPECT_EQ(a.tools.name_key, "tool_name");
         EXPECT_EQ(a.tools.arguments_key, "parameters");
         EXPECT_TRUE(a.tools.array_wrapped);
       }},
      {"deepseek-r1-tool-tokens", "{# <｜tool▁call▁begin｜>function<｜tool▁sep｜>x\n```json\n #}",
       [](const analysis& a) {
         EXPECT_EQ(a.tools.format, tool_format::tag_with_json);
         EXPECT_EQ(a.tools.section_start, "<｜tool▁calls▁begin｜>");
         EXPECT_EQ(a.tools.name_prefix, "function<｜tool▁sep｜>");
         EXPECT_EQ(a.tools.args_end, "```");
         EXPECT_NE(std::find(a.preserved_tokens.begin(), a.preserved_tokens.end(), "```json"),
                   a.preserved_tokens.end());
       }},
  };
  return rows;
}

TEST(Fixups, EveryRowHasAFixture) {
  auto names = fixup_names();
  EXPECT_EQ(names.size(), fixtures().size());
  for (const auto& n : names)
    EXPECT_TRUE(std::any_of(fixtures().begin(), fixtures().end(),
                            [&](const fixup_fixture& f) { return n == f.name; }))
        << "no fixture for fix-up " << n;
}

class FixupRows : public ::testing::TestWithParam<fixup_fixture> {};

TEST_P(FixupRows, FixtureAppliesRow) {
  const fixup_fixture& f = GetParam();
  auto t = chat_template::create(std::string(f.marker) + loop);
  ASSERT_TRUE(t) << t.error().to_string();
  const analysis& a = (*t)->analysis();
  EXPECT_EQ(a.fixups, std::vector<std::string>{f.name});
  EXPECT_EQ(a.tool_error, "");
  f.check(a);
}

INSTANTIATE_TEST_SUITE_P(Table, FixupRows, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<fixup_fixture>& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(Fixups, PlainTemplateGetsNone) {
  auto t = chat_template::create(loop);
  ASSERT_TRUE(t);
  EXPECT_TRUE((*t)->analysis().fixups.empty());
}

// The tag is the one the template strips (double quotes too); a split on something that is not
// a closing tag is not reasoning.
TEST(Fixups, ThinkSplitTakesTheStrippedTag) {
  const struct {
    const char* source;
    const char* start;  // "" = no reasoning
    const char* end;
  } rows[] = {
      {"{% set c = 'x'.split(\"</reason>\")[-1] %}", "<reason>", "</reason>"},
      {"{% set c = 'x'.split('</think>')[-1] %}", "<think>", "</think>"},
      {"{% set c = 'x'.split('</ b>')[-1] %}", "", ""},
      {"{% set c = 'x'.split(',')[-1] %}", "", ""},
  };
  for (const auto& r : rows) {
    auto t = chat_template::create(std::string(r.source) + loop);
    ASSERT_TRUE(t) << r.source;
    const analysis& a = (*t)->analysis();
    EXPECT_EQ(a.reasoning.start, r.start) << r.source;
    EXPECT_EQ(a.reasoning.end, r.end) << r.source;
  }
}

TEST(Fixups, ThinkSplitNeedsNoReasoningContent) {
  // A template that reads reasoning_content is analysed, not patched.
  auto t = chat_template::create(
      std::string("{% set c = 'x'.split('</think>') %}{# reasoning_content #}") + loop);
  ASSERT_TRUE(t);
  EXPECT_TRUE((*t)->analysis().fixups.empty());
}

}  // namespace
}  // namespace chatpeg::chat

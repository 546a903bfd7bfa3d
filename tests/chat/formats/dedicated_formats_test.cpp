// The dedicated-format table: one fixture template per row (a few lines carrying the row's
// signature), each selecting its row and producing the row's key markers. A table row without
// a fixture here fails the coverage test.
#include <gtest/gtest.h>

#include <algorithm>

#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

struct row_fixture {
  const char* handler;
  const char* source;
  tool_format format;
  const char* key_marker;  // a marker the analysis must contain somewhere in its tool syntax
  const char* token;       // a preserved token
};

const char* const chatml_loop =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

std::string with_loop(const char* extra) {
  return std::string(extra) + chatml_loop;
}

const std::vector<row_fixture>& fixtures() {
  static const std::vector<row_fixture> rows = {
      {"gpt-oss",
       "{% for m in messages %}<|start|>{{ m.role }}<|channel|>final<|message|>{{ m.content "
       "}}<|end|>{% endfor %}",
       tool_format::tag_with_json, " to=functions.", "<|channel|>"},
      {"functionary-v3.2",
       "{# >>>${recipient} #}{% for m in messages %}>>>all\n{{ m.content }}{% endfor %}",
       tool_format::tag_with_json, ">>>", ">>>all"},
      {"ministral-3",
       "{# [TOOL_CALLS]name[ARGS]{} [THINK] #}{% for m in messages %}{{ m.content }}{% endfor %}",
       tool_format::tag_with_json, "[TOOL_CALLS]", "[ARGS]"},
      {"kimi-k2",
       "{# <|tool_calls_section_begin|> #}{% for m in messages %}{{ m.content }}{% endfor %}",
       tool_format::tag_with_json, "functions.", "<|tool_call_argument_begin|>"},
      {"deepseek-v3.2-dsml",
       "{% set dsml_token = '｜DSML｜' %}{% for m in messages %}{{ m.content }}{% endfor %}",
       tool_format::tag_with_tagged, "<｜DSML｜invoke name=\"", "｜DSML｜"},
      {"cohere",
       "{# <|START_ACTION|> <|START_RESPONSE|> #}{% for m in messages %}{{ m.content }}{% endfor "
       "%}",
       tool_format::json_native, "<|START_ACTION|>", "<|END_ACTION|>"},
      {"lfm2", "{# <|tool_call_start|> #}{% for m in messages %}{{ m.content }}{% endfor %}",
       tool_format::tag_with_tagged, "<|tool_call_start|>", "<|tool_call_end|>"},
      {"gigachat-3",
       "{% set s = '<|role_sep|>\n' %}{# <|function_call|> #}{% for m in messages %}{{ m.content "
       "}}{% endfor %}",
       tool_format::json_native, "<|function_call|>", "<|function_call|>"},
      {"gemma-4", "{# <|tool_call>call: #}{% for m in messages %}{{ m.content }}{% endfor %}",
       tool_format::tag_with_tagged, "call:", "<|tool_call>"},
      {"firefunction-v2", "{# functools[ #}{% for m in messages %}{{ m.content }}{% endfor %}",
       tool_format::json_native, " functools", "functools"},
  };
  return rows;
}

bool has_marker(const tool_syntax& t, std::string_view m) {
  for (const std::string* s :
       {&t.section_start, &t.section_end, &t.call_start, &t.call_end, &t.name_prefix,
        &t.name_suffix, &t.id_prefix, &t.args_start, &t.arg_name_prefix})
    if (*s == m) return true;
  return false;
}

TEST(DedicatedFormats, EveryRowHasAFixture) {
  auto names = dedicated_format_names();
  EXPECT_EQ(names.size(), fixtures().size());
  for (const auto& n : names)
    EXPECT_TRUE(std::any_of(fixtures().begin(), fixtures().end(),
                            [&](const row_fixture& f) { return n == f.handler; }))
        << "no fixture for dedicated row " << n;
}

TEST(DedicatedFormats, HandlerNamesAreTheContract) {
  auto names = dedicated_format_names();
  for (const char* n : {"gpt-oss", "functionary-v3.2", "ministral-3", "kimi-k2",
                        "deepseek-v3.2-dsml", "cohere", "lfm2", "gigachat-3", "gemma-4"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

class DedicatedRows : public ::testing::TestWithParam<row_fixture> {};

TEST_P(DedicatedRows, FixtureSelectsRow) {
  const row_fixture& f = GetParam();
  auto t = chat_template::create(f.source);
  ASSERT_TRUE(t) << t.error().to_string();
  const analysis& a = (*t)->analysis();
  EXPECT_EQ(a.source, analysis_source::dedicated);
  EXPECT_EQ(a.handler, f.handler);
  EXPECT_EQ(a.tools.format, f.format);
  EXPECT_TRUE(has_marker(a.tools, f.key_marker)) << a.summary();
  EXPECT_NE(std::find(a.preserved_tokens.begin(), a.preserved_tokens.end(), f.token),
            a.preserved_tokens.end())
      << a.summary();
  EXPECT_EQ(a.tool_error, "");
}

INSTANTIATE_TEST_SUITE_P(Table, DedicatedRows, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<row_fixture>& info) {
                           std::string n = info.param.handler;
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(DedicatedFormats, VariantsWithinARow) {
  // Mistral Small 3.2 writes [CALL_ID] after the name.
  auto small = chat_template::create(with_loop("{# [TOOL_CALLS] [CALL_ID] [ARGS] #}"));
  ASSERT_TRUE(small);
  EXPECT_EQ((*small)->analysis().tools.id_pos, id_position::after_name);
  EXPECT_EQ((*small)->analysis().tools.id_prefix, "[CALL_ID]");
  auto devstral = chat_template::create(with_loop("{# [TOOL_CALLS] [ARGS] #}"));
  ASSERT_TRUE(devstral);
  EXPECT_EQ((*devstral)->analysis().tools.id_pos, id_position::none);
  EXPECT_EQ((*devstral)->analysis().reasoning.end, "[/THINK]");
  EXPECT_EQ((*small)->analysis().reasoning.mode, reasoning_mode::none);
  // Cohere command-A uses START_TEXT for content, R7B START_RESPONSE.
  auto command_a = chat_template::create(with_loop("{# <|START_ACTION|> <|START_TEXT|> #}"));
  ASSERT_TRUE(command_a);
  EXPECT_EQ((*command_a)->analysis().content.start, "<|START_TEXT|>");
  EXPECT_EQ((*command_a)->analysis().tools.id_key, "tool_call_id");
  // GigaChat 3 writes "function call" after a message separator.
  auto giga = chat_template::create(with_loop("{# <|role_sep|> function call #}"));
  ASSERT_TRUE(giga);
  EXPECT_EQ((*giga)->analysis().tools.call_start, "<|message_sep|>\n\nfunction call<|role_sep|>\n");
}

TEST(DedicatedFormats, PlainTemplateIsNotDedicated) {
  auto t = chat_template::create(chatml_loop);
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)->analysis().source, analysis_source::differential);
  EXPECT_EQ((*t)->analysis().handler, "");
}

}  // namespace
}  // namespace chatpeg::chat

// Kimi K2 parser (src/chat/formats/dedicated_kimi_k2.cpp): the id "functions.NAME:IDX" around the
// name, optional section and call end markers, reasoning that ends where calls begin,
// several reasoning blocks, lenient parse of a call still being received, GBNF acceptance.
#include "chat/dedicated_test_support.h"

#include "chatpeg/peg/matcher.h"

namespace chatpeg::chat {
namespace {

using testing::check_outputs;
using testing::make_request;

const char* const kimi_template =
    "{% for m in messages %}<|im_{{ m.role }}|>{{ m.role }}<|im_middle|>{{ m.content }}"
    "<|im_end|>{% endfor %}{# <|tool_calls_section_begin|> #}"
    "{% if add_generation_prompt %}<|im_assistant|>assistant<|im_middle|>{% endif %}";

const char* const tools_json = R"("tools":[{"type":"function","function":{"name":"f",
  "parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}},
  {"type":"function","function":{"name":"g"}}])";

analysis kimi() {
  return testing::dedicated_analysis(kimi_template, "kimi-k2");
}

const std::string call_f =
    "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|>";
const std::string f_summary = "|tool_id='functions.f:0' tool_name='f' tool_args='{\"a\": 1}'";

TEST(dedicated_kimi_k2, calls_with_ids_and_optional_markers) {
  auto p = generate(kimi(), make_request(std::string(R"({"messages":[{"role":"user",
    "content":"hi"}],"parallel_tool_calls":true,)") +
                                         tools_json + "}"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  ASSERT_EQ(p->triggers.size(), 1u);
  EXPECT_EQ(p->triggers[0].value, "<|tool_call_begin|>");
  check_outputs(
      *p, {
              {"<|tool_calls_section_begin|>" + call_f + "<|tool_calls_section_end|>", f_summary},
              {"Sure." + call_f, "content='Sure.' " + f_summary},
              {"<think>plan</think>" + call_f +
                   "<|tool_call_begin|>functions.g:1<|tool_call_argument_begin|>{}",
               "reasoning='plan' " + f_summary +
                   " |tool_id='functions.g:1' tool_name='g' "
                   "tool_args='{}'"},
              // Reasoning left open ends where the calls begin.
              {"<think>plan<|tool_calls_section_begin|>" + call_f, "reasoning='plan' " + f_summary},
              // An undeclared function is text.
              {"<|tool_call_begin|>functions.h:0<|tool_call_argument_begin|>{}",
               "content='<|tool_call_begin|>functions.h:0<|tool_call_argument_begin|>{}'", false},
          });
}

TEST(dedicated_kimi_k2, lenient_parse_shows_a_call_being_received) {
  auto p = generate(kimi(), make_request(std::string(R"({"messages":[{"role":"user",
    "content":"hi"}],)") + tools_json + "}"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  const std::string input =
      "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
      "<|tool_call_argument_begin|>{\"a\": ";
  const auto m = peg::match(*p->parser, input, peg::match_flags::lenient);
  EXPECT_EQ(m.status, peg::match_status::need_more_input);
  EXPECT_EQ(testing::summarize(*p->parser, m, input),
            "|tool_id='functions.f:0' tool_name='f' tool_args='{\"a\": '");
}

TEST(dedicated_kimi_k2, several_reasoning_blocks_and_content) {
  auto p = generate(kimi(), make_request(R"({"messages":[{"role":"user","content":"hi"}]})"),
                    {.parse_prefix = "<think></think>"});
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  check_outputs(*p, {{"<think>a</think>Hi", "reasoning='' reasoning='a' content='Hi'"}});
}

TEST(dedicated_kimi_k2, required_call) {
  auto p = generate(kimi(), make_request(std::string(R"({"messages":[{"role":"user",
    "content":"hi"}],"tool_choice":"required",)") +
                                         tools_json + "}"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_FALSE(p->grammar_lazy);
  check_outputs(
      *p, {{"<think>x</think>" + call_f, "reasoning='x' " + f_summary}, {"Hi", "FAIL", false}});
  EXPECT_FALSE(testing::gbnf_accepts(*p, "Hi"));
}

}  // namespace
}  // namespace chatpeg::chat

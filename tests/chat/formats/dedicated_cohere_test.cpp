// Cohere parser (src/chat/formats/dedicated_cohere.cpp): with tools, wrapped answer text is content
// with or without a call after it, thinking is reasoning, the action list gives calls with
// their ids, GBNF from <|START_ACTION|>.
#include "chat/dedicated_test_support.h"

namespace chatpeg::chat {
namespace {

using testing::check_outputs;
using testing::make_request;

std::string cohere_template(bool text_markers) {
  return std::string(
             "{% for m in messages %}<|START_OF_TURN_TOKEN|>{{ m.content }}"
             "<|END_OF_TURN_TOKEN|>{% endfor %}{# <|START_ACTION|> <|START_THINKING|> ") +
         (text_markers ? "<|START_TEXT|>" : "") +
         " #}{% if add_generation_prompt %}<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>{% endif %}";
}

const char* const tools_json = R"("tools":[{"type":"function","function":{"name":"f",
  "parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}])";

TEST(dedicated_cohere, wrapped_text_is_content_beside_tools) {
  for (const bool text : {false, true}) {
    const std::string open = text ? "<|START_TEXT|>" : "<|START_RESPONSE|>";
    const std::string close = text ? "<|END_TEXT|>" : "<|END_RESPONSE|>";
    auto a = testing::dedicated_analysis(cohere_template(text), "cohere");
    auto p = generate(a, make_request(std::string(R"({"messages":[{"role":"user",
      "content":"hi"}],)") + tools_json +
                                      "}"));
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    ASSERT_EQ(p->triggers.size(), 1u);
    EXPECT_EQ(p->triggers[0].value, "<|START_ACTION|>");
    const std::string call =
        "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"f\", "
        "\"parameters\": {\"a\": 1}}\n]<|END_ACTION|>";
    const std::string call_summary = "|tool_id='0' tool_name='f' tool_args='{\"a\": 1}'";
    check_outputs(
        *p, {
                {open + "Hi" + close, "content='Hi'"},
                {"<|START_THINKING|>hmm<|END_THINKING|>" + open + "Hi" + close,
                 "reasoning='hmm' content='Hi'"},
                {"<|START_THINKING|>hmm<|END_THINKING|>" + call, "reasoning='hmm' " + call_summary},
                {open + "Let me see" + close + call, "content='Let me see' " + call_summary},
                {"bare text", "content='bare text'"},
            });
  }
}

TEST(dedicated_cohere, without_tools_the_generic_content_parser_applies) {
  auto a = testing::dedicated_analysis(cohere_template(true), "cohere");
  auto p = generate(a, make_request(R"({"messages":[{"role":"user","content":"hi"}]})"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  check_outputs(*p, {{"<|START_TEXT|>Hi<|END_TEXT|>", "content='Hi'"}});
}

}  // namespace
}  // namespace chatpeg::chat

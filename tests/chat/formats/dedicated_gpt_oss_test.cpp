// gpt-oss harmony parser (src/chat/formats/dedicated_gpt_oss.cpp): channels to reasoning/content,
// both header orders of a function call, content types, built-in recipients dropped, unknown
// functions not parsed as calls, reasoning_format none keeping the analysis message as
// written, and GBNF acceptance (lazy from " to=functions.", and required).
#include "chat/dedicated_test_support.h"

namespace chatpeg::chat {
namespace {

using testing::check_outputs;
using testing::make_request;
using testing::parse_summary;

const char* const harmony_template =
    "{% for m in messages %}<|start|>{{ m.role }}<|channel|>final<|message|>{{ m.content }}"
    "<|end|>{% endfor %}{% if add_generation_prompt %}<|start|>assistant{% endif %}";

const char* const tools_json = R"("tools":[{"type":"function","function":{"name":"get_time",
  "parameters":{"type":"object","properties":{"tz":{"type":"string"}},"required":["tz"]}}}])";

analysis harmony() {
  return testing::dedicated_analysis(harmony_template, "gpt-oss");
}

TEST(dedicated_gpt_oss, channels_to_reasoning_and_content) {
  auto p = generate(harmony(), make_request(R"({"messages":[{"role":"user","content":"hi"}]})"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  check_outputs(
      *p, {
              {"<|channel|>final<|message|>Hi", "content='Hi'"},
              {"<|channel|>commentary<|message|>Hi", "content='Hi'"},
              {"<|channel|>analysis<|message|>hmm<|end|><|start|>assistant<|channel|>final<|"
               "message|>Hi",
               "reasoning='hmm' content='Hi'"},
              // A preamble addressed back to the assistant is skipped.
              {"<|channel|>commentary to=assistant<|channel|>analysis<|message|>hmm<|end|>",
               "reasoning='hmm'"},
              // Unfinished reasoning (the output was cut) is still reasoning.
              {"<|channel|>analysis<|message|>hm", "reasoning='hm'"},
              // Text that is no harmony message at all stays content.
              {"plain", "content='plain'"},
              // A marker that starts no message is text; the messages before it stay
              // as read (a stream has sent them).
              {"<|channel|>final<|message|>Hi<|end|><|start|>", "content='Hi' content='<|start|>'",
               false},
              {"o<|call|>l<|start|>x", "content='o' content='l' content='<|start|>x'", false},
          });
}

TEST(dedicated_gpt_oss, reasoning_format_none_keeps_the_analysis_message) {
  auto p = generate(harmony(), make_request(R"({"messages":[{"role":"user","content":"hi"}],
    "reasoning_format":"none"})"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_EQ(parse_summary(*p,
                          "<|channel|>analysis<|message|>hmm<|end|><|start|>assistant<|channel|>"
                          "final<|message|>Hi"),
            "content='<|channel|>analysis<|message|>hmm<|end|>' content='Hi'");
}

TEST(dedicated_gpt_oss, function_calls_in_both_header_orders) {
  auto p = generate(harmony(), make_request(std::string(R"({"messages":[{"role":"user",
    "content":"hi"}],"parallel_tool_calls":false,)") +
                                            tools_json + "}"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_TRUE(p->grammar_lazy);
  ASSERT_EQ(p->triggers.size(), 1u);
  EXPECT_EQ(p->triggers[0].value, " to=functions.");
  const std::string call = "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'";
  check_outputs(
      *p,
      {
          {" to=functions.get_time<|channel|>commentary json<|message|>{\"tz\": \"UTC\"}", call},
          {"<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{\"tz\": "
           "\"UTC\"}",
           call},
          {" to=functions.get_time<|channel|>analysis <|constrain|>json<|message|>{\"tz\": "
           "\"UTC\"}",
           call},
          {"<|channel|>analysis<|message|>need time<|end|><|start|>assistant to=functions.get_time"
           "<|channel|>commentary json<|message|>{\"tz\": \"UTC\"}<|call|>",
           "reasoning='need time' " + call},
          // A built-in tool the request did not declare: the message is dropped.
          {"<|channel|>analysis<|message|>run<|end|><|start|>assistant to=container.exec"
           "<|channel|>commentary<|message|>ls -l",
           "reasoning='run'", false},
          // An undeclared function is no call.
          {" to=functions.get_date<|channel|>commentary json<|message|>{}",
           "content=' to=functions.get_date<|channel|>commentary json<|message|>{}'", false},
          // A call to an offered function that does not parse is never plain content: two
          // calls where one is allowed, arguments that are no JSON.
          {" to=functions.get_time<|channel|>commentary json<|message|>{\"tz\": \"UTC\"}<|call|>"
           "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}",
           "FAIL", false},
          {" to=functions.get_time<|channel|>commentary json<|message|>{tz: UTC}", "FAIL", false},
          // An undeclared function after a whole message: text, the message stays as read.
          {"<|channel|>final<|message|>Hi<|end|> to=functions.get_date<|message|>{}",
           "content='Hi' content=' to=functions.get_date<|message|>{}'", false},
          // A stray marker before a call is text; the call is still a call.
          {"Hi<|end|><|start|> to=functions.get_time<|message|>{\"tz\": \"UTC\"}",
           "content='Hi' content='<|start|>' " + call, false},
          // A call right after text is a call.
          {"Sure. to=functions.get_time<|message|>{\"tz\": \"UTC\"}", "content='Sure.' " + call},
      });
}

TEST(dedicated_gpt_oss, required_call_grammar_covers_the_whole_output) {
  auto p = generate(harmony(), make_request(std::string(R"({"messages":[{"role":"user",
    "content":"hi"}],"tool_choice":"required",)") +
                                            tools_json + "}"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_FALSE(p->grammar_lazy);
  check_outputs(
      *p, {
              {"<|channel|>analysis<|message|>t<|end|><|start|>assistant<|channel|>commentary "
               "to=functions.get_time json<|message|>{\"tz\": \"UTC\"}",
               "reasoning='t' |tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"},
              {"<|channel|>final<|message|>no call", "FAIL", false},
          });
  EXPECT_FALSE(testing::gbnf_accepts(*p, "<|channel|>final<|message|>no call"));
}

}  // namespace
}  // namespace chatpeg::chat

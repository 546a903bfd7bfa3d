// Gemma 4 parser (src/chat/formats/dedicated_gemma_4.cpp): call:NAME{...} with <|"|> strings as raw
// string values, schema-typed scalars, any argument order, calls interleaved with content,
// reasoning channel and stray channel markers, reasoning_format none, GBNF acceptance.
#include "chat/dedicated_test_support.h"

namespace chatpeg::chat {
namespace {

using testing::check_outputs;
using testing::make_request;
using testing::parse_summary;

const char* const gemma_template =
    "{{ bos_token }}{% for m in messages %}<|turn>{{ m.role }}\n{{ m.content }}<turn|>\n"
    "{% endfor %}{# <|tool_call>call:name{}<tool_call|> #}"
    "{% if add_generation_prompt %}<|turn>model\n{% endif %}";

const char* const tools_json = R"("tools":[{"type":"function","function":{"name":"set",
  "parameters":{"type":"object","properties":{"city":{"type":"string"},"n":{"type":"integer"},
  "on":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}}}}}},
  {"type":"function","function":{"name":"noop"}}])";

analysis gemma() {
  return testing::dedicated_analysis(gemma_template, "gemma-4");
}

TEST(dedicated_gemma_4, calls_with_gemma_values) {
  auto p = generate(gemma(), make_request(std::string(R"({"messages":[{"role":"user",
    "content":"hi"}],)") + tools_json + "}"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_TRUE(p->grammar_lazy);
  check_outputs(
      *p,
      {
          {"<|tool_call>call:set{city:<|\"|>San \"Francisco\"<|\"|>}<tool_call|>",
           "|tool_name='set' tool_arg_name='city' tool_arg_string_value='San \"Francisco\"'"},
          // Any order; scalars typed by the schema; lists as Gemma values.
          {"<|tool_call>call:set{on:false,n:-7,tags:[]}<tool_call|>",
           "|tool_name='set' tool_arg_name='on' tool_arg_value='false' tool_arg_name='n' "
           "tool_arg_value='-7' tool_arg_name='tags' tool_arg_value='[]'"},
          {"<|tool_call>call:noop{}<tool_call|>", "|tool_name='noop'"},
          // Content before and after calls (interleaved), two calls.
          {"Let me see<|tool_call>call:noop{}<tool_call|><|tool_call>call:set{n:1}<tool_call|>done",
           "content='Let me see' |tool_name='noop' |tool_name='set' tool_arg_name='n' "
           "tool_arg_value='1' content='done'"},
          // An integer argument does not take a string; an unknown function is not a call.
          {"<|tool_call>call:set{n:<|\"|>x<|\"|>}<tool_call|>",
           "content='<|tool_call>call:set{n:<|\"|>x<|\"|>}<tool_call|>'", false},
          {"<|tool_call>call:other{}<tool_call|>", "content='<|tool_call>call:other{}<tool_call|>'",
           false},
      });
  EXPECT_FALSE(testing::gbnf_accepts(*p, "<|tool_call>call:set{n:<|\"|>x<|\"|>}<tool_call|>"));
}

TEST(dedicated_gemma_4, reasoning_and_stray_channel_markers) {
  auto p = generate(gemma(), make_request(R"({"messages":[{"role":"user","content":"hi"}]})"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  check_outputs(
      *p,
      {
          {"<|channel>thought\nhmm<channel|>Hi", "reasoning='hmm' content='Hi'"},
          {"<|channel>thought\n<channel|>Hi<channel|>", "reasoning='' content='Hi'"},
          {"<|channel><|channel>thought\n<channel|>Hi", "reasoning='' reasoning='\n' content='Hi'"},
          // A block left open ends at the next channel marker or call.
          {"<|channel>a<|channel>b<channel|>Hi", "reasoning='a' reasoning='b' content='Hi'"},
          // A stray block the output ends in, unclosed, is reasoning (as the stream
          // read it while it was written).
          {"Hi<|channel>more", "content='Hi' reasoning='more'"},
      });
}

TEST(dedicated_gemma_4, reasoning_format_none_keeps_markers_in_content) {
  auto p = generate(gemma(), make_request(std::string(R"({"messages":[{"role":"user",
    "content":"hi"}],"reasoning_format":"none",)") +
                                          tools_json + "}"));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  check_outputs(*p, {
                        {"<|channel>thought\nhmm<channel|>Hi",
                         "content='<|channel>thought\nhmm<channel|>' content='Hi'"},
                        {"<|tool_call>call:noop{}<tool_call|>", "|tool_name='noop'"},
                    });
}

// A forced call: the grammar admits the thought channel only when the request turns thinking
// on; the parser reads it either way.
TEST(dedicated_gemma_4, required_call) {
  const std::string thought = "<|channel>thought\nok<channel|><|tool_call>call:noop{}<tool_call|>";
  for (const bool thinking : {false, true}) {
    SCOPED_TRACE(thinking);
    const std::string kwargs =
        thinking ? R"("chat_template_kwargs":{"enable_thinking":true},)" : "";
    auto p = generate(gemma(), make_request(std::string(R"({"messages":[{"role":"user",
      "content":"hi"}],"tool_choice":"required",)") +
                                            kwargs + tools_json + "}"));
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    EXPECT_FALSE(p->grammar_lazy);
    check_outputs(*p, {
                          {thought, "reasoning='ok' |tool_name='noop'", thinking},
                          {"<|tool_call>call:noop{}<tool_call|>", "|tool_name='noop'"},
                          {"text", "FAIL", false},
                      });
    EXPECT_EQ(testing::gbnf_accepts(*p, thought), thinking);
    EXPECT_FALSE(testing::gbnf_accepts(*p, "text"));
  }
}

}  // namespace
}  // namespace chatpeg::chat

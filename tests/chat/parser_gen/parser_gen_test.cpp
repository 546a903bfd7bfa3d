// Parser generator tests with hand-written analyses, one per tool format and option
// (sections per call, array-wrapped, ids, name as key, arguments as a string, pythonic,
// tagged with raw strings and typed values): each sample output parses to the expected tags
// and is accepted by the exported GBNF; wrong outputs (unknown tool, the other tool under a
// named tool_choice, a missing call under required) are rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "chat/gen_test_support.h"

namespace chatpeg::chat {
namespace {

using testing::gbnf_accepts;
using testing::make_request;
using testing::parse_summary;

const char* two_tools = R"([
  {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
    "properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}},
  {"type":"function","function":{"name":"get_time","parameters":{"type":"object",
    "properties":{"tz":{"type":"string"}},"required":["tz"]}}}])";

std::string body(const std::string& extra) {
  return std::string(R"({"messages":[{"role":"user","content":"hi"}],"tools":)") + two_tools +
         extra + "}";
}

analysis hermes() {
  analysis a;
  a.tools.format = tool_format::json_native;
  a.tools.section_start = "<tool_call>\n";
  a.tools.section_end = "\n</tool_call>";
  a.tools.section_per_call = true;
  a.tools.call_separator = "\n";
  a.preserved_tokens = {"<tool_call>", "</tool_call>"};
  return a;
}

analysis nemo() {
  analysis a;
  a.tools.format = tool_format::json_native;
  a.tools.section_start = "[TOOL_CALLS]";
  a.tools.array_wrapped = true;
  a.tools.id_key = "id";
  return a;
}

analysis name_as_key() {
  analysis a;
  a.tools.format = tool_format::json_native;
  a.tools.section_start = "<|tools_prefix|>";
  a.tools.section_end = "<|tools_suffix|>";
  a.tools.array_wrapped = true;
  a.tools.function_name_as_key = true;
  return a;
}

analysis args_string() {
  analysis a = hermes();
  a.tools.arguments_as_string = true;
  return a;
}

analysis qwen_coder() {
  analysis a;
  a.tools.format = tool_format::tag_with_tagged;
  a.tools.section_start = "<tool_call>\n";
  a.tools.section_end = "</tool_call>";
  a.tools.section_per_call = true;
  a.tools.name_prefix = "<function=";
  a.tools.name_suffix = ">\n";
  a.tools.args_end = "</function>\n";
  a.tools.arg_name_prefix = "<parameter=";
  a.tools.arg_name_suffix = ">\n";
  a.tools.arg_value_end = "\n</parameter>\n";
  a.tools.values = value_syntax::raw;
  return a;
}

analysis glm() {
  analysis a;
  a.tools.format = tool_format::tag_with_tagged;
  a.tools.section_start = "<tool_call>";
  a.tools.section_end = "</tool_call>";
  a.tools.section_per_call = true;
  a.tools.name_suffix = "\n";
  a.tools.arg_name_prefix = "<arg_key>";
  a.tools.arg_name_suffix = "</arg_key>\n<arg_value>";
  a.tools.arg_value_end = "</arg_value>\n";
  a.tools.values = value_syntax::raw;
  return a;
}

analysis mistral_small() {
  analysis a;
  a.tools.format = tool_format::tag_with_json;
  a.tools.name_prefix = "[TOOL_CALLS]";
  a.tools.id_pos = id_position::after_name;
  a.tools.id_prefix = "[CALL_ID]";
  a.tools.args_start = "[ARGS]";
  return a;
}

analysis kimi() {
  analysis a;
  a.tools.format = tool_format::tag_with_json;
  a.tools.section_start = "<|tool_calls_section_begin|>";
  a.tools.section_end = "<|tool_calls_section_end|>";
  a.tools.call_start = "<|tool_call_begin|>";
  a.tools.call_end = "<|tool_call_end|>";
  a.tools.name_prefix = "functions.";
  a.tools.id_pos = id_position::after_name;
  a.tools.id_prefix = ":";
  a.tools.args_start = "<|tool_call_argument_begin|>";
  return a;
}

analysis lfm2() {
  analysis a;
  a.tools.format = tool_format::json_native;
  a.tools.pythonic = true;
  a.tools.values = value_syntax::python;
  a.tools.section_start = "<|tool_call_start|>[";
  a.tools.section_end = "]<|tool_call_end|>";
  a.tools.array_wrapped = true;
  return a;
}

analysis llama32() {
  analysis a;
  a.tools.format = tool_format::json_native;
  a.tools.pythonic = true;
  a.tools.values = value_syntax::python;
  return a;
}

analysis with_think(analysis a) {
  a.reasoning.mode = reasoning_mode::tag_based;
  a.reasoning.start = "<think>";
  a.reasoning.end = "</think>";
  return a;
}

analysis with_content(analysis a, std::string start, std::string end) {
  a.content = {std::move(start), std::move(end)};
  return a;
}

struct sample {
  std::string output;
  std::string expected;  // parse summary, or "FAIL"
  bool gbnf = true;      // the GBNF must accept it (ignored for FAIL rows)
};

struct gen_case {
  std::string name;
  analysis a;
  std::string extra;  // request fields after "tools"
  std::string prefix;
  std::vector<sample> samples;
};

void PrintTo(const gen_case& c, std::ostream* os) {
  *os << c.name;
}

class parser_gen_table : public ::testing::TestWithParam<gen_case> {};

TEST_P(parser_gen_table, parses_and_gbnf_agrees) {
  const auto& c = GetParam();
  auto req = make_request(body(c.extra));
  auto p = generate(c.a, req, {.parse_prefix = c.prefix});
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  for (const auto& s : c.samples) {
    SCOPED_TRACE(s.output);
    EXPECT_EQ(parse_summary(*p, s.output), s.expected);
    if (s.expected != "FAIL" && s.gbnf) {
      std::string why;
      EXPECT_TRUE(gbnf_accepts(*p, s.output, &why)) << why;
    }
  }
}

const char* W1 = "|tool_name='get_weather' tool_args='{\"city\": \"Paris\"}'";

std::vector<gen_case> cases() {
  return {
      {"hermes_auto",
       hermes(),
       R"(,"tool_choice":"auto")",
       "",
       {{"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
         "\"Paris\"}}\n</tool_call>",
         W1},
        {"Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
         "</tool_call>",
         std::string("content='Sure.\n' ") + W1},
        {"{\"arguments\": {\"tz\": \"UTC\"}, \"name\": \"get_time\"}",
         "content='{\"arguments\": {\"tz\": \"UTC\"}, \"name\": \"get_time\"}'"},
        {"<tool_call>\n{\"arguments\": {\"tz\": \"UTC\"}, \"name\": \"get_time\"}</tool_call>",
         "|tool_args='{\"tz\": \"UTC\"}' tool_name='get_time'"},
        // A lazy grammar activates at the trigger, so only the parser can keep this as text.
        {"Just text, a <tool_call> mention and more",
         "content='Just text, a ' content='<tool_call> mention and more'", false},
        // A tool that is not offered: not a call, so content (parser_gen.
        // a_call_to_a_tool_not_offered_is_content); the grammar never writes it.
        {"<tool_call>\n{\"name\": \"get_stock\", \"arguments\": {}}\n</tool_call>",
         "content='<tool_call>\n{\"name\": \"get_stock\", \"arguments\": {}}\n</tool_call>'",
         false},
        // An offered call that does not parse (days is not declared as a number) is an error
        // too, never content.
        {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"days\": 2}}\n</tool_call>",
         "FAIL", false}}},
      {"hermes_required_parallel",
       hermes(),
       R"(,"tool_choice":"required","parallel_tool_calls":true)",
       "",
       {{"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
         "\"Paris\"}}\n</tool_call>\n"
         "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>",
         std::string(W1) + " |tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"},
        {"Hello", "FAIL"},
        // Indentation up to the whitespace bound (16) is free; beyond it the call does not
        // match (a sampler cannot wander).
        {"<tool_call>\n{\n            \"name\": \"get_time\",\n            \"arguments\": "
         "{\"tz\": \"UTC\"}\n}\n</tool_call>",
         "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"},
        {"<tool_call>\n{\n                    \"name\": \"get_time\", \"arguments\": "
         "{\"tz\": \"UTC\"}}\n</tool_call>",
         "FAIL"},
        // Text before the call: the grammar forbids it, the parser reads it into content.
        {"Hi <tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>",
         "content='Hi ' |tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'", false}}},
      {"hermes_named",
       hermes(),
       R"(,"tool_choice":{"type":"function","function":{"name":"get_time"}})",
       "",
       {{"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>",
         "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"},
        {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
         "\"Paris\"}}\n</tool_call>",
         "FAIL"}}},
      {"hermes_single_call_grammar",
       hermes(),
       R"(,"tool_choice":"required","parallel_tool_calls":false)",
       "",
       // The grammar allows one call; the parser reads every call the model writes.
       {{"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>\n"
         "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>",
         "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}' |tool_name='get_time' "
         "tool_args='{\"tz\": \"UTC\"}'",
         false}}},
      {"nemo_array_ids",
       nemo(),
       R"(,"parallel_tool_calls":true)",
       "",
       {{"[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": "
         "\"abc123def\"}, "
         "{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}, \"id\": \"x2\"}]",
         std::string(W1) + " tool_id='abc123def' |tool_name='get_time' tool_args='{\"tz\": "
                           "\"UTC\"}' tool_id='x2'"},
        {"[TOOL_CALLS][{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}]",
         "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"}}},
      {"name_as_key",
       name_as_key(),
       "",
       "",
       {{"<|tools_prefix|>[{\"get_time\": {\"tz\": \"UTC\"}}]<|tools_suffix|>",
         "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"},
        {"<|tools_prefix|>[{\"get_date\": {}}]<|tools_suffix|>",
         "content='<|tools_prefix|>[{\"get_date\": {}}]<|tools_suffix|>'", false}}},
      {"arguments_as_string",
       args_string(),
       "",
       "",
       {{"<tool_call>\n{\"name\": \"get_time\", \"arguments\": \"{\\\"tz\\\": "
         "\\\"UTC\\\"}\"}\n</tool_call>",
         "|tool_name='get_time' tool_args='\"{\\\"tz\\\": \\\"UTC\\\"}\"'"},
        // A string that holds no object is no call's arguments: the parse fails in the call.
        {"<tool_call>\n{\"name\": \"get_time\", \"arguments\": \"UTC\"}\n</tool_call>", "FAIL"}}},
      {"qwen_coder_tagged",
       qwen_coder(),
       R"(,"parallel_tool_calls":true)",
       "",
       {{"<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n"
         "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
         "|tool_name='get_weather' tool_arg_name='city' tool_arg_string_value='New York' "
         "tool_arg_name='days' tool_arg_value='3'"},
        // A non-string argument printed as a Python literal (str() of a dict) is accepted.
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
         "<parameter=days>\n{'n': True, 'm': None}\n</parameter>\n</function>\n</tool_call>",
         "|tool_name='get_weather' tool_arg_name='city' tool_arg_string_value='Paris' "
         "tool_arg_name='days' tool_arg_value='{'n': True, 'm': None}'"},
        // A raw string keeps its own leading whitespace (only the suffix's "\n" is markup).
        {"<tool_call>\n<function=get_time>\n<parameter=tz>\n    UTC\n</parameter>\n</function>\n"
         "</tool_call>",
         "|tool_name='get_time' tool_arg_name='tz' tool_arg_string_value='    UTC'"},
        {"<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</"
         "parameter>\n<parameter=city>\n"
         "a < b\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n"
         "<parameter=tz>\nUTC\n</parameter>\n</function>\n</tool_call>",
         "|tool_name='get_weather' tool_arg_name='days' tool_arg_value='3' tool_arg_name='city' "
         "tool_arg_string_value='a < b' |tool_name='get_time' tool_arg_name='tz' "
         "tool_arg_string_value='UTC'"},
        {"<tool_call>\n<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n</function>\n"
         "</tool_call>",
         "FAIL"}}},
      {"glm_tagged",
       glm(),
       "",
       "",
       {{"<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</"
         "tool_call>",
         "|tool_name='get_weather' tool_arg_name='city' tool_arg_string_value='Paris'"},
        {"<tool_call>get_time<arg_key>tz</arg_key><arg_value>UTC</arg_value></tool_call>",
         "|tool_name='get_time' tool_arg_name='tz' tool_arg_string_value='UTC'"}}},
      {"mistral_small_ids",
       mistral_small(),
       "",
       "",
       {{"[TOOL_CALLS]get_time[CALL_ID]123456789[ARGS]{\"tz\": \"UTC\"}",
         "|tool_name='get_time' tool_id='123456789' tool_args='{\"tz\": \"UTC\"}'"},
        {"Hi[TOOL_CALLS]get_time[ARGS]{\"tz\": \"UTC\"}",
         "content='Hi' |tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"}}},
      {"kimi_sections_ids",
       kimi(),
       R"(,"parallel_tool_calls":true)",
       "",
       {{"<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0"
         "<|tool_call_argument_begin|>{\"tz\": \"UTC\"}<|tool_call_end|><|tool_call_begin|>"
         "functions.get_weather:1<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>"
         "<|tool_calls_section_end|>",
         "|tool_name='get_time' tool_id='0' tool_args='{\"tz\": \"UTC\"}' |tool_name='get_weather' "
         "tool_id='1' tool_args='{\"city\": \"Paris\"}'"}}},
      {"lfm2_pythonic",
       lfm2(),
       R"(,"parallel_tool_calls":true)",
       "",
       {{"<|tool_call_start|>[get_weather(city='Paris', days=3), "
         "get_time(tz=\"UTC\")]<|tool_call_end|>",
         "|tool_name='get_weather' tool_arg_name='city' tool_arg_value=''Paris'' "
         "tool_arg_name='days' tool_arg_value='3' |tool_name='get_time' tool_arg_name='tz' "
         "tool_arg_value='\"UTC\"'"},
        // A call section with a tool that is not offered: content.
        {"<|tool_call_start|>[get_date()]<|tool_call_end|>",
         "content='<|tool_call_start|>[get_date()]<|tool_call_end|>'", false}}},
      {"llama32_bare_pythonic",
       llama32(),
       "",
       "",
       {{"[get_time(tz='UTC')]", "|tool_name='get_time' tool_arg_name='tz' tool_arg_value=''UTC''"},
        {"Hello there", "content='Hello there'", false}}},
      {"reasoning_open_prefix",
       with_think(qwen_coder()),
       "",
       "<think>\n",
       {{"I "
         "think\n</think>\n\n<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n"
         "</function>\n</tool_call>",
         "reasoning='I think\n' |tool_name='get_time' tool_arg_name='tz' "
         "tool_arg_string_value='UTC'"},
        {"Hmm\n</think>\n\nNo tool needed.", "reasoning='Hmm\n' content='No tool needed.'"},
        // Straight to the call: the block the prompt opened is empty and its opener dropped.
        {"<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n</function>\n"
         "</tool_call>",
         "|tool_name='get_time' tool_arg_name='tz' tool_arg_string_value='UTC'"},
        // Never closed and no call: all of it is reasoning.
        {"Still thinking", "reasoning='Still thinking'"},
        // Never closed, then a call: reasoning up to the call, which is read as a call (the
        // grammar closes the block first).
        {"Checking.<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n"
         "</function>\n</tool_call>",
         "reasoning='Checking.' |tool_name='get_time' tool_arg_name='tz' "
         "tool_arg_string_value='UTC'",
         false},
        // A call mentioned inside the reasoning fires the lazy trigger there; the grammar lets
        // the reasoning finish before the real call.
        {"About <tool_call>\n<function=get_time>\n<parameter=tz>\nX\n</parameter>\n</function>\n"
         "</tool_call> hmm\n</think>\n<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n"
         "</parameter>\n</function>\n</tool_call>",
         "reasoning='About <tool_call>\n<function=get_time>\n<parameter=tz>\nX\n</parameter>\n"
         "</function>\n</tool_call> hmm\n' |tool_name='get_time' tool_arg_name='tz' "
         "tool_arg_string_value='UTC'"}}},
      {"reasoning_none_keeps_text",
       with_think(qwen_coder()),
       R"(,"reasoning_format":"none")",
       "<think>\n",
       {{"Hmm\n</think>\n\nNo tool needed.",
         "content='<think>\nHmm\n</think>\n\n' content='No tool needed.'"},
        {"<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n</function>\n"
         "</tool_call>",
         "|tool_name='get_time' tool_arg_name='tz' tool_arg_string_value='UTC'"}}},
      // Under a forced call the grammar admits the block the model opens only when the request
      // turns thinking on (reasoning_optional_block_thinking); the parser reads it either way.
      {"reasoning_optional_block",
       with_think(hermes()),
       R"(,"tool_choice":"required")",
       "",
       {{"<think>plan</think>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": "
         "\"UTC\"}}\n</tool_call>",
         "reasoning='plan' |tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'", false},
        {"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>",
         "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"}}},
      {"reasoning_optional_block_thinking",
       with_think(hermes()),
       R"(,"tool_choice":"required","chat_template_kwargs":{"enable_thinking":true})",
       "",
       {{"<think>plan</think>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": "
         "\"UTC\"}}\n</tool_call>",
         "reasoning='plan' |tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"},
        {"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>",
         "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"}}},
      // A block the model opened and never closed is reasoning, as the stream shows it while
      // it grows: to the end of the output, or up to a call that follows directly. A call
      // opener mentioned inside a closed block stays reasoning. (The grammar keeps requiring
      // the end marker, so only the parser reads the unclosed forms.)
      {"reasoning_unclosed_block",
       with_think(hermes()),
       R"(,"tool_choice":"auto")",
       "",
       {{"<think>plan", "reasoning='plan'", false},
        {"<think>plan</think>ok", "reasoning='plan' content='ok'"},
        {"<think>plan<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": "
         "\"UTC\"}}\n</tool_call>",
         "reasoning='plan' |tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'", false},
        {"<think>use <tool_call> later</think>Done.",
         "reasoning='use <tool_call> later' content='Done.'"},
        {"<think>use <tool_call> later", "reasoning='use <tool_call> later'", false}}},
      {"reasoning_unclosed_block_no_tools",
       with_think(hermes()),
       R"(,"tool_choice":"none")",
       "",
       {{"<think>plan", "reasoning='plan'", false},
        {"<think>plan</think>ok", "reasoning='plan' content='ok'", false}}},  // no grammar
      // The closing marker is an end-of-generation token (harmony's <|call|>): the output may
      // end without it; without the flag such a call stays text.
      {"close_ends_turn",
       [] {
         analysis a = hermes();
         a.tools.close_ends_turn = true;
         return a;
       }(),
       R"(,"tool_choice":"auto")",
       "",
       {{"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}", W1},
        {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
         "</tool_call>",
         W1}}},
      {"close_does_not_end_turn",
       hermes(),
       R"(,"tool_choice":"auto")",
       "",
       // Not a complete match: the final parse finishes the cut call (unclosed-call, in
       // stream::parse), never content.
       {{"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
         "FAIL"}}},
      // Content wrapped in markers (Cohere's <|START_RESPONSE|>...) with tools offered: the
      // wrapper comes off an answer without calls too, not only before calls.
      {"wrapped_content_with_tools",
       with_content(hermes(), "<|A|>", "<|/A|>"),
       R"(,"tool_choice":"auto")",
       "",
       {{"<|A|>Hi there.<|/A|>", "content='Hi there.'"},
        {"<|A|>Sure.<|/A|><tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
         "\"Paris\"}}\n</tool_call>",
         std::string("content='Sure.' ") + W1},
        {"No wrapper.", "content='No wrapper.'"}}},
  };
}

INSTANTIATE_TEST_SUITE_P(formats, parser_gen_table, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace chatpeg::chat

namespace chatpeg::chat {
namespace {

// parallel_tool_calls: absent means true; false bounds the grammar to one call while the
// parser still reads each call the model writes, in every tool format.
TEST(parser_gen, parallel_tool_calls_false_bounds_the_grammar_not_the_parser) {
  const std::string one = "{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}";
  struct row {
    const char* name;
    analysis a;
    std::string single;  // one call
    std::string two;     // two calls
  };
  const std::vector<row> rows = {
      {"hermes", hermes(), "<tool_call>\n" + one + "\n</tool_call>",
       "<tool_call>\n" + one + "\n</tool_call>\n<tool_call>\n" + one + "\n</tool_call>"},
      {"nemo", nemo(), "[TOOL_CALLS][" + one + "]", "[TOOL_CALLS][" + one + ", " + one + "]"},
      {"kimi", kimi(),
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0"
       "<|tool_call_argument_begin|>{\"tz\": \"UTC\"}<|tool_call_end|>"
       "<|tool_calls_section_end|>",
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0"
       "<|tool_call_argument_begin|>{\"tz\": \"UTC\"}<|tool_call_end|><|tool_call_begin|>"
       "functions.get_time:1<|tool_call_argument_begin|>{\"tz\": \"UTC\"}<|tool_call_end|>"
       "<|tool_calls_section_end|>"},
      {"lfm2", lfm2(), "<|tool_call_start|>[get_time(tz='UTC')]<|tool_call_end|>",
       "<|tool_call_start|>[get_time(tz='UTC'), get_time(tz='UTC')]<|tool_call_end|>"},
      {"qwen_coder", qwen_coder(),
       "<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n</function>\n"
       "</tool_call>",
       "<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n</function>\n"
       "</tool_call>\n<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n"
       "</function>\n</tool_call>"}};
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    for (const char* choice : {"auto", "required"}) {
      SCOPED_TRACE(choice);
      const std::string tc = std::string(R"(,"tool_choice":")") + choice + "\"";
      auto absent = generate(r.a, make_request(body(tc)), {});
      auto single = generate(r.a, make_request(body(tc + R"(,"parallel_tool_calls":false)")), {});
      ASSERT_TRUE(absent.has_value()) << absent.error().to_string();
      ASSERT_TRUE(single.has_value()) << single.error().to_string();
      const std::string two_calls = parse_summary(*absent, r.two);
      EXPECT_EQ(std::count(two_calls.begin(), two_calls.end(), '|'), 2) << two_calls;
      EXPECT_EQ(parse_summary(*single, r.two), two_calls);
      EXPECT_TRUE(gbnf_accepts(*absent, r.two));
      EXPECT_TRUE(gbnf_accepts(*single, r.single));
      EXPECT_FALSE(gbnf_accepts(*single, r.two));
    }
  }
}

// Tool schemas as clients write them: no request is refused, with parallel_tool_calls absent
// or false the parser reads two calls, and the grammar loads (llama.cpp's loader rules, no
// warning) and accepts the first call, typed by the standard meaning of each form.
TEST(parser_gen, lenient_tool_schemas_parse_two_calls_and_load) {
  struct row {
    const char* name;
    const char* params;  // the tool's parameters
    const char* args;    // arguments of a call that fits
    const char* wrong;   // arguments the grammar refuses ("" when every value fits)
  };
  const std::vector<row> rows = {
      {"float", R"({"type":"object","properties":{"x":{"type":"float"}}})", R"({"x": 1.5})",
       R"({"x": "a"})"},
      {"int", R"({"type":"object","properties":{"x":{"type":"int"}}})", R"({"x": 2})",
       R"({"x": 1.5})"},
      {"str", R"({"type":"object","properties":{"x":{"type":"str"}}})", R"({"x": "a"})",
       R"({"x": 1})"},
      {"dict", R"({"type":"dict","properties":{"x":{"type":"dict"}}})", R"({"x": {"k": 1}})",
       R"({"x": [1]})"},
      {"list", R"({"type":"object","properties":{"x":{"type":"list","items":{"type":"int"}}}})",
       R"({"x": [1, 2]})", R"({"x": ["a"]})"},
      {"bool", R"({"type":"object","properties":{"x":{"type":"bool"}}})", R"({"x": true})",
       R"({"x": 1})"},
      {"any", R"({"type":"object","properties":{"x":{"type":"any"}}})", R"({"x": [null]})", ""},
      {"type_array", R"({"type":"object","properties":{"x":{"type":["str","null"]}}})",
       R"({"x": null})", R"({"x": 1})"},
      {"required_undeclared", R"({"type":"object","properties":{"x":{"type":"int"}},
         "required":["x","y"]})",
       R"({"x": 1, "y": "z"})", R"({"x": 1})"},
      {"no_type", R"({"properties":{"x":{"description":"anything"}}})", R"({"x": {"a": 1}})", ""},
      {"no_type_at_all", R"({"description":"free"})", R"({"x": 1})", ""}};
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    const std::string tools = std::string(R"([{"type":"function","function":{"name":"f",)") +
                              R"("parameters":)" + r.params + "}}]";
    const std::string call =
        std::string("<tool_call>\n{\"name\": \"f\", \"arguments\": ") + r.args + "}\n</tool_call>";
    for (const char* extra : {"", R"(,"parallel_tool_calls":false)"}) {
      SCOPED_TRACE(extra);
      const std::string text = std::string(R"({"messages":[{"role":"user","content":"hi"}],)") +
                               R"("tools":)" + tools + R"(,"tool_choice":"required")" + extra + "}";
      auto p = generate(hermes(), make_request(text), {});
      ASSERT_TRUE(p.has_value()) << p.error().to_string();
      const std::string two = parse_summary(*p, call + "\n" + call);
      EXPECT_EQ(std::count(two.begin(), two.end(), '|'), 2) << two;
      auto g = grammar::parse_gbnf(p->gbnf);
      ASSERT_TRUE(g.has_value()) << g.error().to_string() << "\n" << p->gbnf;
      EXPECT_TRUE(grammar::gbnf_warnings(**g).empty());
      std::string why;
      EXPECT_TRUE(gbnf_accepts(*p, call, &why)) << why;
      if (*r.wrong != '\0') {
        EXPECT_FALSE(
            gbnf_accepts(*p, std::string("<tool_call>\n{\"name\": \"f\", \"arguments\": ") +
                                 r.wrong + "}\n</tool_call>"));
      }
    }
  }
}

TEST(parser_gen, tools_with_a_user_grammar_is_rejected) {
  auto req = testing::make_request(body(R"(,"grammar":"root ::= \"x\"")"));
  auto p = generate(hermes(), req);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code, base::errc::invalid_argument);
  EXPECT_EQ(p.error().where.path, "$.grammar");
}

TEST(parser_gen, tools_without_tool_syntax_fail_with_the_analysis_error) {
  analysis a;
  a.tool_error = "tool stage: no call found";
  auto p = generate(a, testing::make_request(body("")));
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code, base::errc::analysis_failed);
  EXPECT_NE(p.error().message.find("no call found"), std::string::npos);
}

// A template that cannot write tool calls at all (no stage failed): under auto the answer is
// text; a request that insists on a call is an error.
TEST(parser_gen, template_without_tool_calls_reads_content_under_auto) {
  auto p = generate(analysis{}, testing::make_request(body("")));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_TRUE(p->gbnf.empty());
  EXPECT_FALSE(p->grammar_lazy);
  EXPECT_EQ(testing::parse_summary(*p, "It is sunny."), "content='It is sunny.'");
  auto r = generate(analysis{}, testing::make_request(body(R"(,"tool_choice":"required")")));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::analysis_failed);
  EXPECT_NE(r.error().message.find("cannot express tool calls"), std::string::npos);
}

// Content with only an opener marker (Solar Open's "<|content|>"): the marker is markup.
TEST(parser_gen, content_opener_without_closer_is_markup) {
  analysis a = hermes();
  a.content.start = "<|content|>";
  auto p = generate(a, testing::make_request(body("")));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_EQ(testing::parse_summary(*p, "<|content|>Paris."), "content='Paris.'");
  EXPECT_EQ(testing::parse_summary(*p, "Paris."), "content='Paris.'");
  auto n = generate(a, testing::make_request(body(R"(,"tool_choice":"none")")));
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(testing::parse_summary(*n, "<|content|>Paris."), "content='Paris.'");
}

TEST(parser_gen, tool_choice_none_is_content_only) {
  auto p = generate(hermes(), testing::make_request(body(R"(,"tool_choice":"none")")));
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->gbnf.empty());
  EXPECT_EQ(testing::parse_summary(*p, "<tool_call>x"), "content='<tool_call>x'");
}

TEST(parser_gen, auto_is_lazy_with_a_word_trigger) {
  auto p = generate(hermes(), testing::make_request(body("")));
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->grammar_lazy);
  ASSERT_EQ(p->triggers.size(), 1u);
  // The trigger keeps the whitespace the template writes after the opener.
  EXPECT_EQ(p->triggers[0].value, "<tool_call>\n");
  EXPECT_EQ(p->preserved_tokens, hermes().preserved_tokens);
  auto r = generate(hermes(), testing::make_request(body(R"(,"tool_choice":"required")")));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->grammar_lazy);
  EXPECT_TRUE(r->triggers.empty());
}

// Under a required or named call the grammar admits a reasoning block the model opens itself
// only when the request turns thinking on; the parser reads the block either way. Reasoning
// the prompt opened is always admitted.
TEST(parser_gen, required_grammar_admits_model_opened_reasoning_only_when_thinking_is_asked) {
  const std::string call =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>";
  const std::string thought = "<think>Paris it is.</think>\n" + call;
  struct row {
    std::string label, extra;
    bool admitted;
  };
  const std::vector<row> rows = {
      {"required", R"(,"tool_choice":"required")", false},
      {"named", R"(,"tool_choice":{"type":"function","function":{"name":"get_weather"}})", false},
      {"thinking off",
       R"(,"tool_choice":"required","chat_template_kwargs":{"enable_thinking":false})", false},
      {"enable_thinking",
       R"(,"tool_choice":"required","chat_template_kwargs":{"enable_thinking":true})", true},
      {"thinking", R"(,"tool_choice":"required","chat_template_kwargs":{"thinking":true})", true},
      {"auto", R"(,"tool_choice":"auto")", true},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.label);
    auto p = generate(with_think(hermes()), testing::make_request(body(r.extra)));
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    std::string why;
    EXPECT_TRUE(gbnf_accepts(*p, call, &why)) << why;
    EXPECT_EQ(gbnf_accepts(*p, thought, &why), r.admitted) << why;
    EXPECT_EQ(testing::parse_summary(*p, thought), "reasoning='Paris it is.' " + std::string(W1));
  }
  auto opened =
      generate(with_think(hermes()), testing::make_request(body(R"(,"tool_choice":"required")")),
               {.parse_prefix = "<think>\n"});
  ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
  EXPECT_TRUE(gbnf_accepts(*opened, "Paris it is.</think>\n" + call));
}

// Numbers in emitted grammars hold at most 16 digits in each part (a weak model cannot write
// one number forever); the parser reads a number of any length.
TEST(parser_gen, grammar_bounds_the_digits_of_numbers_the_parser_does_not) {
  auto p = generate(hermes(), testing::make_request(body(R"(,"tool_choice":"required")")));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  auto call = [](const std::string& days) {
    return "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", "
           "\"days\": " +
           days + "}}\n</tool_call>";
  };
  const std::string d16(16, '7'), d17(17, '7');
  struct row {
    std::string days;
    bool admitted;
  };
  for (const auto& r :
       std::vector<row>{{d16, true}, {"-" + d16, true}, {d17, false}, {"0", true}, {"-0", true}}) {
    SCOPED_TRACE(r.days);
    std::string why;
    EXPECT_EQ(gbnf_accepts(*p, call(r.days), &why), r.admitted) << why;
    EXPECT_NE(parse_summary(*p, call(r.days)).find("\"days\": " + r.days + "}"), std::string::npos);
  }
  // A schema number: 16 digits before and after the point, and in the exponent.
  auto n = generate(hermes(),
                    testing::make_request(
                        R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required",
      "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object",
      "properties":{"x":{"type":"number"}}}}}]})"));
  ASSERT_TRUE(n.has_value()) << n.error().to_string();
  auto fcall = [](const std::string& x) {
    return "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": " + x + "}}\n</tool_call>";
  };
  EXPECT_TRUE(gbnf_accepts(*n, fcall(d16 + "." + d16 + "e-" + d16)));
  EXPECT_FALSE(gbnf_accepts(*n, fcall("1." + d17)));
  EXPECT_FALSE(gbnf_accepts(*n, fcall("1e" + d17)));
  EXPECT_NE(parse_summary(*n, fcall(d17 + "." + d17)).find(d17 + "." + d17), std::string::npos);
}

// Lenient parses of a response still streaming: a call being written is reported (its
// name complete, arguments so far), and a prefix of the call opener at the end of the text
// is held back instead of leaking into content.
TEST(parser_gen, lenient_parse_reports_the_call_being_written) {
  auto p = generate(qwen_coder(), testing::make_request(body("")));
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  using testing::partial_summary;
  EXPECT_EQ(partial_summary(*p, "Hi <tool_call>\n<function=get_time>\n<parameter=tz>\nUT"),
            "content='Hi ' |tool_name='get_time' tool_arg_name='tz' tool_arg_string_value='UT' …");
  EXPECT_EQ(partial_summary(*p, "Hi <tool_ca"), "content='Hi ' …");
  EXPECT_EQ(partial_summary(*p, "Hi <"), "content='Hi ' …");
  EXPECT_EQ(partial_summary(*p, "a < b"), "content='a < b' …");
  auto h = generate(hermes(), testing::make_request(body("")));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(partial_summary(*h, "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\":"),
            "|tool_name='get_time' tool_args='{\"tz\":' …");
}

// The prompt opened a reasoning block and the output goes straight to a call: while the call
// is still being written the lenient parse must not read it as reasoning (the finished output
// is a call, so a streamed reading as reasoning would have to be taken back).
TEST(parser_gen, call_after_an_opened_reasoning_block_is_never_read_as_reasoning) {
  auto p = generate(with_think(qwen_coder()), testing::make_request(body("")),
                    {.parse_prefix = "<think>\n"});
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  using testing::partial_summary;
  for (const std::string cut : {"<tool_", "<tool_call>\n<function=get_ti",
                                "<tool_call>\n<function=get_time>\n<parameter=tz>\nUT"}) {
    SCOPED_TRACE(cut);
    const std::string summary = partial_summary(*p, cut);
    EXPECT_EQ(summary.find("reasoning="), std::string::npos) << summary;
    EXPECT_EQ(summary.find("content="), std::string::npos) << summary;
  }
  // Reasoning text is still reasoning while it streams.
  EXPECT_EQ(partial_summary(*p, "I think"), "reasoning='I think' …");
}

// A call opened for a tool that is not in the request is not a call: it stays content, as a
// bare marker mention does. A call to an offered tool that does not parse fails the parse
// inside the call, never content.
TEST(parser_gen, a_call_to_a_tool_not_offered_is_content) {
  struct row {
    analysis a;
    std::string not_offered;
    std::string broken;  // an offered call that does not parse after its name
  };
  const std::vector<row> rows = {
      {hermes(), "Sure.\n<tool_call>\n{\"name\": \"get_stock\", \"arguments\": {}}\n</tool_call>",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\" 1}}\n</tool_call>"},
      {qwen_coder(),
       "<tool_call>\n<function=get_stock>\n<parameter=s>\nX\n</parameter>\n</function>\n"
       "</tool_call>",
       "<tool_call>\n<function=get_time>\n!!\n<parameter=tz>\nX\n</parameter>\n</function>\n"
       "</tool_call>"},
      {mistral_small(), "[TOOL_CALLS]get_stock[ARGS]{}", "[TOOL_CALLS]get_time[ARGS]{\"tz\" 1}"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.not_offered);
    auto p = generate(r.a, testing::make_request(body("")));
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    const std::string summary = testing::parse_summary(*p, r.not_offered);
    EXPECT_EQ(summary.find("tool_name"), std::string::npos) << summary;
    EXPECT_NE(summary.find("get_stock"), std::string::npos) << summary;
    const std::string input = p->parse_prefix + r.broken;
    const auto m = peg::match(*p->parser, input, peg::match_flags::complete);
    ASSERT_EQ(m.status, peg::match_status::fail) << r.broken;
    EXPECT_EQ(m.error.code, base::errc::no_match);
    const std::size_t name = r.broken.find("get_");
    EXPECT_GT(m.error.where.offset, p->parse_prefix.size() + name + 8) << m.error.expected;
  }
  auto p = generate(hermes(), testing::make_request(body("")));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(testing::parse_summary(*p, "A <tool_call> tag, and {\"name\": \"x\"}"),
            "content='A ' content='<tool_call> tag, and {\"name\": \"x\"}'");
}

TEST(parser_gen, json_schema_answer_plain_or_fenced) {
  auto req = testing::make_request(
      R"({"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema",
      "json_schema":{"schema":{"type":"object","properties":{"n":{"type":"integer"}},
      "required":["n"]}}}})");
  auto p = generate(analysis{}, req);
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  EXPECT_FALSE(p->grammar_lazy);
  for (const std::string out : {"{\"n\": 1}", "```json\n{\"n\": 2}\n```"}) {
    EXPECT_NE(testing::parse_summary(*p, out), "FAIL") << out;
    std::string why;
    EXPECT_TRUE(testing::gbnf_accepts(*p, out, &why)) << why;
  }
  EXPECT_EQ(testing::parse_summary(*p, "{\"n\": \"x\"}"), "FAIL");
  EXPECT_EQ(testing::parse_summary(*p, "Sure: {\"n\": 1}"), "FAIL");
}

}  // namespace
}  // namespace chatpeg::chat

// The writer over hand-built analyses with invented markers, one per format class: the written
// template loads and reads an output of that format back to the expected dict; formats the v1
// format cannot express are errc::unsupported.
#include <gtest/gtest.h>

#include <functional>

#include "chatpeg/response/response.h"
#include "test_support.h"

namespace chatpeg::response {
namespace {

using testing::js;

chat::analysis with_reasoning() {
  chat::analysis a;
  a.reasoning = {
      .mode = chat::reasoning_mode::tag_based, .start = "[[think]]", .end = "[[/think]]"};
  return a;
}

struct writer_case {
  const char* name;
  std::function<void(chat::analysis&)> shape;
  const char* generation_prompt;
  const char* output;
  const char* want;
};

const char* kTools = R"([{"type": "function", "function": {"name": "get_weather", "parameters": {
  "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}])";

const writer_case kCases[] = {
    {"json calls in their own markers",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::json_native;
       a.tools.call_start = "<call>";
       a.tools.call_end = "</call>";
     },
     "~~bot~~\n[[think]]\n",
     "plan[[/think]]Sure.<call>{\"name\": \"get_weather\", \"arguments\": "
     "{\"city\": \"Oslo\"}}</call>",
     R"({"role":"assistant","reasoning_content":"plan","content":"Sure.","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Oslo"}}}]})"},
    {"a call written before the reasoning's close is reasoning",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::json_native;
       a.tools.call_start = "<call>";
       a.tools.call_end = "</call>";
     },
     "~~bot~~\n[[think]]\n", "maybe <call>{}</call>?[[/think]]No.",
     R"({"role":"assistant","reasoning_content":"maybe <call>{}</call>?","content":"No."})"},
    {"an array of calls in a section with other keys",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::json_native;
       a.tools.section_start = "@@[";
       a.tools.section_end = "]@@";
       a.tools.array_wrapped = true;
       a.tools.name_key = "tool";
       a.tools.arguments_key = "params";
     },
     "~~bot~~\n",
     "@@[[{\"tool\": \"get_weather\", \"params\": {\"city\": \"A\"}}, {\"tool\": "
     "\"get_weather\", \"params\": {\"days\": 2}}]]@@",
     R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"A"}}},{"type":"function","function":{"name":"get_weather","arguments":{"days":2}}}]})"},
    {"name in markers, JSON arguments, optional section",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::tag_with_json;
       a.tools.section_start = "%CALLS%";
       a.tools.section_end = "%END%";
       a.tools.call_start = "<<";
       a.tools.name_prefix = "fn:";
       a.tools.name_suffix = ">>";
       a.tools.call_end = "<</>>";
     },
     "~~bot~~\n", "x %CALLS%<<fn:get_weather>>{\"city\": \"B\"}<</>><<fn:get_weather>>{}<</>>%END%",
     R"({"role":"assistant","content":"x","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"B"}}},{"type":"function","function":{"name":"get_weather","arguments":{}}}]})"},
    {"tagged raw arguments typed by the schema",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::tag_with_tagged;
       a.tools.call_start = "{{call ";
       a.tools.name_suffix = "}}\n";
       a.tools.call_end = "{{/call}}";
       a.tools.arg_name_prefix = "(";
       a.tools.arg_name_suffix = ")=";
       a.tools.arg_value_end = ";\n";
       a.tools.values = chat::value_syntax::raw;
     },
     "~~bot~~\n", "{{call get_weather}}\n(city)=New York;\n(days)=3;\n{{/call}}",
     R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"New York","days":3}}}]})"},
    {"wrapped content", [](chat::analysis& a) { a.content = {.start = "<ans>", .end = "</ans>"}; },
     "~~bot~~\n", "<ans> the answer </ans>", R"({"role":"assistant","content":"the answer"})"},
    {"content without its wrapper",
     [](chat::analysis& a) { a.content = {.start = "<ans>", .end = "</ans>"}; }, "~~bot~~\n",
     " the answer ", R"({"role":"assistant","content":"the answer"})"},
    {"reasoning, then wrapped content",
     [](chat::analysis& a) { a.content = {.start = "<ans>", .end = "</ans>"}; }, "~~bot~~\n",
     "[[think]]plan[[/think]]<ans>go</ans>",
     R"({"role":"assistant","reasoning_content":"plan","content":"go"})"},
    {"a close marker inside a value does not end the call",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::json_native;
       a.tools.call_start = "<call>";
       a.tools.call_end = "</call>";
     },
     "~~bot~~\n",
     "<call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"a</call> b\"}}</call>\n"
     "<call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"c</call>\"}}</call>",
     R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"a</call> b"}}},{"type":"function","function":{"name":"get_weather","arguments":{"city":"c</call>"}}}]})"},
    {"an id before the name",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::tag_with_json;
       a.tools.section_start = "<|calls|>";
       a.tools.section_end = "<|/calls|>";
       a.tools.call_start = "<|c|>";
       a.tools.id_pos = chat::id_position::before_name;
       a.tools.id_suffix = "<|n|>";
       a.tools.name_suffix = "<|a|>";
       a.tools.call_end = "<|e|>";
     },
     "~~bot~~\n",
     "<|calls|><|c|>id_7<|n|>get_weather<|a|>{\"city\": \"C\"}<|e|><|c|>id_8<|n|>get_weather<|a|>"
     "{}<|e|><|/calls|>",
     R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"C"}}},{"type":"function","function":{"name":"get_weather","arguments":{}}}]})"},
    {"an id after the arguments",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::tag_with_json;
       a.tools.call_start = "[C]";
       a.tools.name_suffix = "[A]";
       a.tools.id_pos = chat::id_position::after_args;
       a.tools.id_prefix = "[ID]";
       a.tools.call_end = "[/C]";
     },
     "~~bot~~\n", "[C]get_weather[A]{\"days\": 1}[ID]x9[/C]",
     R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"days":1}}}]})"},
    {"markers match with flexible whitespace, a name ended by a line break",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::tag_with_tagged;
       a.tools.call_start = "<fn>";
       a.tools.name_suffix = "\n";
       a.tools.call_end = "\n</fn>";
       a.tools.arg_name_prefix = "<k>";
       a.tools.arg_name_suffix = "</k>\n<v>";
       a.tools.arg_value_end = "</v>\n";
       a.tools.values = chat::value_syntax::raw;
     },
     "~~bot~~\n", "<fn>get_weather\n<k>city</k><v>Rome</v><k>days</k>\n  <v>4</v></fn>",
     R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Rome","days":4}}}]})"},
    {"a name nothing ends stops at the first argument or the call's end",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::tag_with_tagged;
       a.tools.call_start = "%%call%%";
       a.tools.call_end = "%%end%%";
       a.tools.arg_name_prefix = "%k%";
       a.tools.arg_name_suffix = "%v%";
       a.tools.arg_value_end = "%/v%";
       a.tools.values = chat::value_syntax::raw;
     },
     "~~bot~~\n",
     "Let me see.%%call%%get_weather%k%city%v%Lima%/v%%k%days%v%2%/v%%%end%%"
     "%%call%%get_weather\n%%end%%",
     R"({"role":"assistant","content":"Let me see.","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Lima","days":2}}},{"type":"function","function":{"name":"get_weather","arguments":{}}}]})"},
    {"a name nothing ends stops at its JSON arguments",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::tag_with_json;
       a.tools.call_start = "|call|";
       a.tools.call_end = "|/call|";
     },
     "~~bot~~\n", "|call|get_weather {\"city\": \"Oslo\"}|/call|",
     R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Oslo"}}}]})"},
    {"unmarked JSON calls: the call object is the whole output",
     [](chat::analysis& a) { a.tools.format = chat::tool_format::json_native; }, "~~bot~~\n",
     " {\"name\": \"get_weather\", \"arguments\": {\"days\": \"3\"}}",
     R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"days":3}}}]})"},
    {"unmarked JSON calls: text that is no call object is content",
     [](chat::analysis& a) { a.tools.format = chat::tool_format::json_native; }, "~~bot~~\n",
     "Hello {\"name\": 1}", R"({"role":"assistant","content":"Hello {\"name\": 1}"})"},
    {"content after a call is joined, not replaced",
     [](chat::analysis& a) {
       a.tools.format = chat::tool_format::json_native;
       a.tools.call_start = "<call>";
       a.tools.call_end = "</call>";
     },
     "~~bot~~\n", "First.<call>{\"name\": \"get_weather\", \"arguments\": {}}</call>\n",
     R"({"role":"assistant","content":"First.","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{}}}]})"},
    {"calls without an end marker end at the next call; the prompt's opener is cut off",
     [](chat::analysis& a) {
       a.content = {">>all\n", ""};
       a.tools.format = chat::tool_format::tag_with_json;
       a.tools.name_prefix = ">>";
       a.tools.name_suffix = "\n";
     },
     "~~bot~~\n>>", "all\nLooking.>>get_weather\n{\"city\": \"C\"}>>get_weather\n{}",
     R"({"role":"assistant","content":"Looking.","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"C"}}},{"type":"function","function":{"name":"get_weather","arguments":{}}}]})"},
};

TEST(ResponseWriter, WrittenTemplatesReadTheirFormat) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    chat::analysis a = with_reasoning();
    c.shape(a);
    auto written = write_template(a, c.generation_prompt);
    ASSERT_TRUE(written) << written.error().to_string();
    auto t = response_template::from_json(*written);
    ASSERT_TRUE(t) << t.error().to_string();
    parse_options o;
    o.prefix = std::string("<prompt>") + c.generation_prompt;
    o.tools = js(kTools);
    auto got = parse(**t, c.output, o);
    ASSERT_TRUE(got) << got.error().to_string() << "\n" << written->dump();
    EXPECT_TRUE(testing::same(*got, js(c.want))) << got->dump() << "\n" << written->dump();
  }
}

TEST(ResponseWriter, MarkersAreEscapedInPatterns) {
  chat::analysis a;
  a.tools.format = chat::tool_format::json_native;
  a.tools.call_start = "[TOOL.CALL(*)]";
  a.tools.call_end = "$";
  auto written = write_template(a, "A:");
  ASSERT_TRUE(written) << written.error().to_string();
  auto t = response_template::from_json(*written);
  ASSERT_TRUE(t);
  auto got = parse(**t, "[TOOLxCALL(*)]{} [TOOL.CALL(*)]{\"name\": \"f\", \"arguments\": {}}$");
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ((*got)["tool_calls"].size(), 1u);
  EXPECT_EQ((*got)["content"], "[TOOLxCALL(*)]{}");
}

TEST(ResponseWriter, InexpressibleFormatsAreUnsupported) {
  const std::pair<const char*, std::function<void(chat::analysis&)>> rows[] = {
      {"pythonic",
       [](chat::analysis& a) {
         a.tools.format = chat::tool_format::json_native;
         a.tools.pythonic = true;
       }},
      {"python values",
       [](chat::analysis& a) {
         a.tools.format = chat::tool_format::tag_with_tagged;
         a.tools.call_start = "<c=";
         a.tools.name_suffix = ">";
         a.tools.arg_name_prefix = "<a=";
         a.tools.arg_name_suffix = ">";
         a.tools.arg_value_end = "</a>";
         a.tools.values = chat::value_syntax::python;
       }},
      {"dedicated handler without a writer",
       [](chat::analysis& a) { a.handler = "deepseek-v3.2-dsml"; }},
      {"harmony without its markers", [](chat::analysis& a) { a.handler = "gpt-oss"; }},
      {"name as key",
       [](chat::analysis& a) {
         a.tools.format = chat::tool_format::json_native;
         a.tools.call_start = "<c>";
         a.tools.function_name_as_key = true;
       }},
      {"bare JSON calls with a separator",
       [](chat::analysis& a) {
         a.tools.format = chat::tool_format::json_native;
         a.tools.call_separator = ";";
       }},
      {"reasoning without a start", [](chat::analysis& a) { a.reasoning.start.clear(); }},
      {"a name nothing ends before unmarked arguments",
       [](chat::analysis& a) {
         a.tools.format = chat::tool_format::tag_with_tagged;
         a.tools.call_start = "<c>";
         a.tools.call_end = "</c>";
       }},
  };
  for (const auto& [name, shape] : rows) {
    SCOPED_TRACE(name);
    chat::analysis a = with_reasoning();
    shape(a);
    auto written = write_template(a, "~~bot~~\n");
    ASSERT_FALSE(written) << written->dump();
    EXPECT_EQ(written.error().code, base::errc::unsupported);
  }
  // Without a generation prompt the anchor is the prompt's end.
  auto no_prompt = write_template(chat::analysis{}, "");
  ASSERT_TRUE(no_prompt) << no_prompt.error().to_string();
  auto t = response_template::from_json(*no_prompt);
  ASSERT_TRUE(t);
  auto got = parse(**t, "answer", {.prefix = "earlier answer"});
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)["content"], "answer");
}

}  // namespace
}  // namespace chatpeg::response

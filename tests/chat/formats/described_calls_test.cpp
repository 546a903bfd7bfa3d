// Calls a template only describes in its tools' system prompt: the example call there is the
// format (its keys and the tags around it), read by the parser and written by the grammar. A
// prompt without such an example stays an explicit tool error.
#include <gtest/gtest.h>

#include "chat/gen_test_support.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

using testing::gbnf_accepts;
using testing::make_request;
using testing::parse_summary;

// A ChatML template that never renders tool_calls; `instructions` follows the tool list.
std::string described(const std::string& instructions) {
  return "{%- if tools %}<|im_start|>system\nFunctions:\n{% for t in tools %}{{ t | tojson }}\n"
         "{% endfor %}" +
         instructions +
         "<|im_end|>\n{% endif %}"
         "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
         "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
}

TEST(DescribedCalls, TheExampleInThePromptIsTheFormat) {
  struct row {
    const char* name;
    std::string instructions;
    const char* call_start;
    const char* call_end;
    const char* arguments_key;
    const char* output;  // what a model writes
    const char* section_start = "";
    const char* section_end = "";
  };
  const std::vector<row> rows = {
      {"tags and placeholders",
       "For each call return <tool_call>\n{\"name\": <function-name>, \"arguments\": "
       "<args-json-object>}\n</tool_call>",
       "<tool_call>\n", "\n</tool_call>", "arguments",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
       "</tool_call>"},
      {"special tokens, parameters",
       "To call one, write <|fn|>{\"name\": \"function_name\", \"parameters\": {\"arg\": "
       "\"value\"}}<|/fn|> and stop.",
       "<|fn|>", "<|/fn|>", "parameters",
       "<|fn|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|/fn|>"},
      {"a list in tags",
       "Return the calls as a list:\n<calls>[{\"name\": <function-name-1>, \"arguments\": "
       "<args-1>}, {\"name\": <function-name-2>, \"arguments\": <args-2>},...]</calls>",
       "", "", "arguments",
       "<calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, "
       "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}]</calls>",
       "<calls>", "</calls>"},
      {"no tags",
       "Reply only with JSON: {\"name\": function name, \"parameters\": {argument: value}}.", "",
       "", "parameters", "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}"},
  };
  const request req = make_request(R"({"messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters":
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})");
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto t = chat_template::create(described(r.instructions));
    ASSERT_TRUE(t.has_value()) << t.error().to_string();
    const analysis& a = (*t)->analysis();
    EXPECT_EQ(a.tool_error, "");
    EXPECT_EQ(a.tools.format, tool_format::json_native) << a.summary();
    EXPECT_EQ(a.tools.call_start, r.call_start);
    EXPECT_EQ(a.tools.call_end, r.call_end);
    EXPECT_EQ(a.tools.section_start, r.section_start);
    EXPECT_EQ(a.tools.section_end, r.section_end);
    EXPECT_EQ(a.tools.array_wrapped, *r.section_start != '\0');
    EXPECT_EQ(a.tools.name_key, "name");
    EXPECT_EQ(a.tools.arguments_key, r.arguments_key);
    EXPECT_NE(a.note.find("as its system prompt describes them"), std::string::npos) << a.note;
    auto p = prepare(**t, req);
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    const std::string summary = parse_summary(*p, r.output);
    EXPECT_NE(summary.find("tool_name='get_weather'"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("content="), std::string::npos) << summary;
    std::string why;
    EXPECT_TRUE(gbnf_accepts(*p, r.output, &why)) << why;
    // Prose stays content.
    EXPECT_EQ(parse_summary(*p, "It is sunny."), "content='It is sunny.'");
  }
}

TEST(DescribedCalls, APromptWithoutAnExampleStaysAnError) {
  for (const std::string instructions :
       {std::string("Use them wisely."), std::string("Reply with {\"name\": \"x\"} only."),
        std::string("<tool_call>{\"name\": \"x\", \"description\": \"d\", \"parameters\": "
                    "{}}</tool_call>")}) {
    SCOPED_TRACE(instructions);
    auto t = chat_template::create(described(instructions));
    ASSERT_TRUE(t.has_value()) << t.error().to_string();
    const analysis& a = (*t)->analysis();
    EXPECT_EQ(a.tools.format, tool_format::none);
    EXPECT_NE(a.tool_error.find("does not render assistant tool_calls"), std::string::npos)
        << a.tool_error;
  }
}

}  // namespace
}  // namespace chatpeg::chat

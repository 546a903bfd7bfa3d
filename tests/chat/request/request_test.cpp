// request::from_json: accepted bodies fill every field; each malformed field is an
// invalid_argument error naming its JSON path. message::to_json omits absent fields.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chatpeg/chat/message.h"

namespace chatpeg::chat {
namespace {

base::result<request> parse(const std::string& text) {
  auto j = json::parse(text);
  EXPECT_TRUE(j.has_value()) << text;
  return request::from_json(j ? *j : json::value());
}

TEST(request, full_body) {
  auto r =
      parse(R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"He"}],
    "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
    "tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":true,
    "response_format":{"type":"json_schema","json_schema":{"schema":{"type":"integer"}}},
    "reasoning_format":"deepseek","chat_template_kwargs":{"enable_thinking":false},
    "add_generation_prompt":false,"continue_final_message":"content","grammar":"root ::= \"x\""})");
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->tool_choice.mode, tool_choice_mode::named);
  EXPECT_EQ(r->tool_choice.function, "f");
  EXPECT_TRUE(r->parallel_tool_calls);
  ASSERT_TRUE(r->json_schema.has_value());
  EXPECT_EQ((*r->json_schema)["type"], "integer");
  EXPECT_EQ(r->reasoning_format, reasoning_format::deepseek);
  EXPECT_EQ(r->chat_template_kwargs["enable_thinking"], false);
  EXPECT_FALSE(r->add_generation_prompt);
  EXPECT_EQ(r->continue_final_message, continue_mode::content);
  ASSERT_TRUE(r->grammar.has_value());
}

TEST(request, simple_values) {
  struct row {
    const char* extra;
    tool_choice_mode mode;
    bool schema;
  };
  const std::vector<row> rows = {
      {R"("tool_choice":"none")", tool_choice_mode::none, false},
      {R"("tool_choice":"required")", tool_choice_mode::required, false},
      {R"("tool_choice":"auto","response_format":{"type":"text"})", tool_choice_mode::auto_, false},
      {R"("response_format":{"type":"json_object"})", tool_choice_mode::auto_, true},
  };
  for (const auto& x : rows) {
    auto r = parse(std::string(R"({"messages":[{"role":"user","content":"hi"}],)") + x.extra + "}");
    ASSERT_TRUE(r.has_value()) << x.extra << ": " << r.error().to_string();
    EXPECT_EQ(r->tool_choice.mode, x.mode) << x.extra;
    EXPECT_EQ(r->json_schema.has_value(), x.schema) << x.extra;
  }
}

TEST(request, parallel_tool_calls_absent_or_null_means_true) {
  const std::vector<std::pair<const char*, bool>> rows = {
      {"", true},
      {R"(,"parallel_tool_calls":null)", true},
      {R"(,"parallel_tool_calls":true)", true},
      {R"(,"parallel_tool_calls":false)", false}};
  for (const auto& [extra, expected] : rows) {
    auto r = parse(std::string(R"({"messages":[{"role":"user","content":"hi"}])") + extra + "}");
    ASSERT_TRUE(r.has_value()) << extra << ": " << r.error().to_string();
    EXPECT_EQ(r->parallel_tool_calls, expected) << extra;
  }
  EXPECT_TRUE(request{}.parallel_tool_calls);
}

TEST(request, errors_name_the_path) {
  const std::vector<std::pair<const char*, const char*>> rows = {
      {R"([])", "$"},
      {R"({})", "$"},
      {R"({"messages":{}})", "$.messages"},
      {R"({"messages":[1]})", "$.messages[0]"},
      {R"({"messages":[{"content":"x"}]})", "$.messages[0]"},
      {R"({"messages":[{"role":3}]})", "$.messages[0].role"},
      {R"({"messages":[{"role":"user","content":5}]})", "$.messages[0].content"},
      {R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})",
       "$.messages[0].content[0].text"},
      {R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"name":1}}]}]})",
       "$.messages[0].tool_calls[0].function.name"},
      {R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":3}}]}]})",
       "$.messages[0].tool_calls[0].function.arguments"},
      {R"({"messages":[],"tools":{}})", "$.tools"},
      {R"({"messages":[],"tools":[{"type":"function","function":{"name":""}}]})",
       "$.tools[0].function.name"},
      {R"({"messages":[],"tools":[{},{"type":"function","function":{"name":7}}]})", "$.tools[0]"},
      {R"({"messages":[],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":7}}]})",
       "$.tools[1].function.name"},
      {R"({"messages":[],"tool_choice":"sometimes"})", "$.tool_choice"},
      {R"({"messages":[],"tool_choice":{"type":"function","function":{"name":"g"}}})",
       "$.tool_choice.function.name"},
      {R"({"messages":[],"parallel_tool_calls":"yes"})", "$.parallel_tool_calls"},
      {R"({"messages":[],"response_format":{"type":"xml"}})", "$.response_format.type"},
      {R"({"messages":[],"response_format":{"type":"json_schema","json_schema":{"schema":3}}})",
       "$.response_format.json_schema.schema"},
      {R"({"messages":[],"reasoning_format":"loud"})", "$.reasoning_format"},
      {R"({"messages":[],"chat_template_kwargs":[]})", "$.chat_template_kwargs"},
      {R"({"messages":[],"chat_template_kwargs":{"messages":[]}})",
       "$.chat_template_kwargs.messages"},
      {R"({"messages":[],"chat_template_kwargs":{"tools":[]}})", "$.chat_template_kwargs.tools"},
      {R"({"messages":[],"chat_template_kwargs":{"add_generation_prompt":false}})",
       "$.chat_template_kwargs.add_generation_prompt"},
      {R"({"messages":[],"chat_template_kwargs":{"eos_token":"x"}})",
       "$.chat_template_kwargs.eos_token"},
      {R"({"messages":[],"add_generation_prompt":1})", "$.add_generation_prompt"},
      {R"({"messages":[{"role":"user","content":"x"}],"continue_final_message":"content"})",
       "$.continue_final_message"},
      {R"({"messages":[],"continue_final_message":"later"})", "$.continue_final_message"},
      {R"({"messages":[],"grammar":1})", "$.grammar"},
  };
  for (const auto& [body, path] : rows) {
    auto r = parse(body);
    ASSERT_FALSE(r.has_value()) << body;
    EXPECT_EQ(r.error().code, base::errc::invalid_argument) << body;
    EXPECT_EQ(r.error().where.path, path) << body << ": " << r.error().to_string();
  }
}

TEST(message, to_json_omits_absent_fields) {
  message m;
  EXPECT_EQ(json::dump(m.to_json()), R"({"role":"assistant"})");
  m.content = "hi";
  m.reasoning_content = "r";
  EXPECT_EQ(json::dump(m.to_json()),
            R"({"role":"assistant","content":"hi","reasoning_content":"r"})");
  message c;
  c.tool_calls.push_back({"", "f", "{}"});
  c.tool_calls.push_back({"id1", "g", "{\"a\":1}"});
  EXPECT_EQ(
      json::dump(c.to_json()),
      R"({"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}},{"id":"id1","type":"function","function":{"name":"g","arguments":"{\"a\":1}"}}]})");
}

}  // namespace
}  // namespace chatpeg::chat

// adapt_variables: request → template variables by capability (arguments objects, typed
// content, system merge, tool results as user turns, kwargs merged, generation prompt).
#include <gtest/gtest.h>

#include <string>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

request make(const std::string& text) {
  auto j = json::parse(text);
  EXPECT_TRUE(j.has_value());
  auto r = request::from_json(*j);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : request{};
}

const char* conversation = R"({"messages":[
  {"role":"system","content":"Be brief."},
  {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
  {"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function",
    "function":{"name":"f","arguments":"{\"x\":1}"}}]},
  {"role":"tool","tool_call_id":"1","name":"f","content":"42"}],
  "tools":[{"type":"function","function":{"name":"f"}}],
  "chat_template_kwargs":{"enable_thinking":false},"add_generation_prompt":true})";

TEST(adapter, capable_template_gets_the_request_as_is) {
  template_caps caps;
  caps.supports_system_role = true;
  caps.supports_tool_responses = true;
  caps.supports_typed_content = true;
  auto v = adapt_variables(caps, make(conversation));
  ASSERT_TRUE(v.has_value());
  const auto& m = (*v)["messages"];
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0]["role"], "system");
  EXPECT_TRUE(m[1]["content"].is_array());
  EXPECT_TRUE(m[2]["tool_calls"][0]["function"]["arguments"].is_string());
  EXPECT_EQ(m[3]["role"], "tool");
  EXPECT_EQ((*v)["enable_thinking"], false);
  EXPECT_EQ((*v)["add_generation_prompt"], true);
  EXPECT_EQ((*v)["tools"].size(), 1u);
}

// Firefunction v2 reads `functions` (the function objects as JSON text) and `datetime`.
TEST(adapter, firefunction_gets_functions_and_datetime) {
  auto t = chat_template::create(
      "{{ functions }}|{{ datetime }}|{{ messages[0].content }}"
      "{% if false %} functools[{% endif %}");
  ASSERT_TRUE(t.has_value()) << t.error().to_string();
  ASSERT_EQ((*t)->analysis().handler, "firefunction-v2");
  auto v = template_variables(**t, make(conversation));
  ASSERT_TRUE(v.has_value()) << v.error().to_string();
  auto functions = json::parse((*v)["functions"].get<std::string>());
  ASSERT_TRUE(functions.has_value());
  EXPECT_EQ((*functions)[0]["name"], "f");
  EXPECT_FALSE((*v)["datetime"].get<std::string>().empty());
  // The template writes arguments with tojson: a JSON string would be quoted twice.
  int calls = 0;
  for (const auto& m : (*v)["messages"]) {
    if (!m.contains("tool_calls")) continue;
    ++calls;
    EXPECT_TRUE(m["tool_calls"][0]["function"]["arguments"].is_object()) << json::dump(m);
  }
  EXPECT_EQ(calls, 1);
  // Given as kwargs, they win; without tools, functions is empty text.
  auto given = template_variables(**t, make(R"({"messages":[{"role":"user","content":"x"}],
                    "chat_template_kwargs":{"datetime":"Mar 14 2025"}})"));
  ASSERT_TRUE(given.has_value());
  EXPECT_EQ((*given)["datetime"], "Mar 14 2025");
  EXPECT_EQ((*given)["functions"], "");
  auto plain = template_variables(**t, make(R"({"messages":[{"role":"user","content":"x"}]})"));
  ASSERT_TRUE(plain.has_value());
  auto rendered = (*t)->render_request(*plain);
  ASSERT_TRUE(rendered.has_value()) << rendered.error().to_string();
}

TEST(adapter, limited_template_gets_polyfills) {
  template_caps caps;  // no system role, no tool responses, string content only
  caps.requires_object_arguments = true;
  auto v = adapt_variables(caps, make(conversation));
  ASSERT_TRUE(v.has_value());
  const auto& m = (*v)["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["role"], "user");
  EXPECT_EQ(m[0]["content"], "Be brief.\n\na\nb");
  EXPECT_TRUE(m[1]["tool_calls"][0]["function"]["arguments"].is_object());
  EXPECT_EQ(m[1]["tool_calls"][0]["function"]["arguments"]["x"], 1);
  EXPECT_EQ(m[2]["role"], "user");
  EXPECT_NE(m[2]["content"].get<std::string>().find("42"), std::string::npos);
}

TEST(adapter, string_content_becomes_parts_when_only_parts_render) {
  template_caps caps;
  caps.supports_system_role = true;
  caps.supports_string_content = false;
  caps.supports_typed_content = true;
  auto v = adapt_variables(caps, make(R"({"messages":[{"role":"user","content":"hi"}]})"));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(json::dump((*v)["messages"][0]["content"]), R"([{"type":"text","text":"hi"}])");
  EXPECT_FALSE(v->contains("tools"));
}

TEST(adapter, bad_arguments_for_object_templates_name_the_path) {
  template_caps caps;
  caps.supports_system_role = true;
  caps.requires_object_arguments = true;
  auto v = adapt_variables(caps, make(R"({"messages":[{"role":"assistant","tool_calls":[
    {"function":{"name":"f","arguments":"not json"}}]}]})"));
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().where.path, "$.messages[0].tool_calls[0].function.arguments");
}

}  // namespace
}  // namespace chatpeg::chat

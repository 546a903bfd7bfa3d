// Capability probing on small handwritten templates: each probe finds its capability when the
// template renders the probe, and does not when the template raises or drops it.
#include <gtest/gtest.h>

#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

const char* const head = "{% for m in messages %}<|{{ m.role }}|>";
const char* const tail =
    "<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";

template_caps caps_of(const std::string& body, const std::string& prelude = "") {
  auto t = chat_template::create(prelude + head + body + tail);
  EXPECT_TRUE(t) << t.error().to_string();
  return t ? (*t)->caps() : template_caps{};
}

const std::string content = "{{ m.content }}";
const std::string hermes_calls =
    "{% for tc in m.tool_calls %}<tool_call>{\"name\": \"{{ tc.function.name }}\", "
    "\"arguments\": {{ tc.function.arguments | tojson }}}</tool_call>{% endfor %}";
const std::string tools_list =
    "{% if tools %}{% for t in tools %}{{ t.function.name }} {% endfor %}{% endif %}";

TEST(Caps, PlainChatTemplate) {
  template_caps c = caps_of(content);
  EXPECT_TRUE(c.supports_system_role);
  EXPECT_TRUE(c.supports_string_content);
  EXPECT_FALSE(c.supports_typed_content);  // a list of parts prints as a Python list
  EXPECT_FALSE(c.supports_tools);
  EXPECT_FALSE(c.supports_tool_calls);
  EXPECT_FALSE(c.supports_reasoning);
  EXPECT_FALSE(c.supports_enable_thinking);
}

// Kimi K2 appends to a namespace's list, which the strict sandbox refuses: the probes get the
// reference's permissive environment then, as requests do.
TEST(Caps, ProbesRetryInCompatibilityMode) {
  template_caps c = caps_of(
      "{% set q = namespace(ids=[]) %}{% for tc in m.tool_calls %}{% set _ = "
      "q.ids.append(tc.id) %}{% endfor %}" +
          content + hermes_calls,
      tools_list);
  EXPECT_TRUE(c.supports_tool_calls);
  EXPECT_TRUE(c.supports_parallel_tool_calls);
}

TEST(Caps, RaisingOnSystemMeansNoSystemRole) {
  template_caps c = caps_of(
      "{% if m.role == 'system' %}{{ raise_exception('no system role') }}{% endif %}" + content);
  EXPECT_FALSE(c.supports_system_role);
  EXPECT_TRUE(c.supports_string_content);
}

TEST(Caps, ToolsCallsResponsesParallel) {
  template_caps c = caps_of(content + hermes_calls, tools_list);
  EXPECT_TRUE(c.supports_tools);
  EXPECT_TRUE(c.supports_tool_calls);
  EXPECT_TRUE(c.supports_tool_responses);
  EXPECT_TRUE(c.supports_parallel_tool_calls);
  // tojson of a string argument escapes it: the template needs objects.
  EXPECT_TRUE(c.requires_object_arguments);
}

TEST(Caps, StringArgumentsPrintedRaw) {
  template_caps c = caps_of(content +
                                "{% for tc in m.tool_calls %}<call>{{ tc.function.name }} {{ "
                                "tc.function.arguments }}</call>{% endfor %}",
                            tools_list);
  EXPECT_TRUE(c.supports_tool_calls);
  EXPECT_FALSE(c.requires_object_arguments);
}

TEST(Caps, OnlyFirstCallMeansNoParallelCalls) {
  template_caps c =
      caps_of(content +
                  "{% if m.tool_calls %}<call>{{ m.tool_calls[0].function.name }} "
                  "{{ m.tool_calls[0].function.arguments | tojson }}</call>{% endif %}",
              tools_list);
  EXPECT_TRUE(c.supports_tool_calls);
  EXPECT_FALSE(c.supports_parallel_tool_calls);
}

TEST(Caps, ToolRoleRaising) {
  template_caps c =
      caps_of("{% if m.role == 'tool' %}{{ raise_exception('no tool role') }}{% endif %}" +
                  content + hermes_calls,
              tools_list);
  EXPECT_TRUE(c.supports_tool_calls);
  EXPECT_FALSE(c.supports_tool_responses);
}

TEST(Caps, TypedContent) {
  template_caps c = caps_of(
      "{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}"
      "{{ p.text }}{% endfor %}{% endif %}");
  EXPECT_TRUE(c.supports_typed_content);
  EXPECT_TRUE(c.supports_string_content);
}

TEST(Caps, ReasoningAndEnableThinking) {
  template_caps c = caps_of(
      "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}" + content,
      "");
  EXPECT_TRUE(c.supports_reasoning);
  EXPECT_FALSE(c.supports_enable_thinking);
  auto t = chat_template::create(
      std::string(head) + content + "<|end|>{% endfor %}" +
      "{% if add_generation_prompt %}<|assistant|>{% if enable_thinking "
      "is defined and not enable_thinking %}<think></think>{% endif %}{% endif %}");
  ASSERT_TRUE(t);
  EXPECT_TRUE((*t)->caps().supports_enable_thinking);
  EXPECT_EQ((*t)->analysis().reasoning.start, "<think>");
  EXPECT_EQ((*t)->analysis().reasoning.end, "</think>");
}

}  // namespace
}  // namespace chatpeg::chat

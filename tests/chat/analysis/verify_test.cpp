// The verify stage (src/chat/analysis/verify.cpp): a derived tool syntax must read back the
// template's own rendering of one call and of two. Small handwritten templates: one the
// differential stages read right (no error), one whose calls carry a letter after the name (the
// stages take the first call's letter for a constant marker, so two calls do not read back:
// explicit error, and tool requests fail with it instead of streaming calls as content), and ones
// whose history form does not continue the generation prompt (the calls are looked for in the
// render). Loaded analyses are the user's word and are not verified.
#include <gtest/gtest.h>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

std::string chat_with(const std::string& assistant_body, const std::string& generation_prompt) {
  return "{% if tools %}{% for t in tools %}{{ t.function.name }} {% endfor %}{% endif %}"
         "{% for m in messages %}<|{{ m.role }}|>{% if m.role == 'assistant' %}" +
         assistant_body + "{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}" +
         "{% if add_generation_prompt %}" + generation_prompt + "{% endif %}";
}

const std::string json_calls =
    "{{ m.content }}{% for tc in m.tool_calls %}<call>{\"name\": \"{{ tc.function.name }}\", "
    "\"arguments\": {{ tc.function.arguments | tojson }}}</call>{% endfor %}";

// The call's position glued after the name as a letter (":a", ":b"): the stages take the first
// call's letter for a constant marker (a number is recognized as the call's index).
const std::string indexed_calls =
    "{{ m.content }}{% for tc in m.tool_calls %}<call>fn.{{ tc.function.name }}:{{ "
    "'abcdefgh'[loop.index0] "
    "}}<args>{{ tc.function.arguments | tojson }}</call>{% endfor %}";

// Ministral-like (a dedicated format): "[TOOL_CALLS]NAME[ARGS]{json}".
const std::string mistral_calls =
    "{{ m.content }}{% for tc in m.tool_calls %}[TOOL_CALLS]{{ tc.function.name }}[ARGS]{{ "
    "tc.function.arguments | tojson }}{% endfor %}";

// Cohere-like (a dedicated format): a JSON action list.
const std::string cohere_calls =
    "{{ m.content }}{% if m.tool_calls %}<|START_ACTION|>[{% for tc in m.tool_calls %}{% if not "
    "loop.first %},{% endif %}{\"tool_call_id\": \"{{ loop.index0 }}\", \"tool_name\": \"{{ "
    "tc.function.name }}\", \"parameters\": {{ tc.function.arguments | tojson }}}{% endfor "
    "%}]<|END_ACTION|>{% endif %}";

request tools_request() {
  auto body = json::parse(R"({"messages":[{"role":"user","content":"hi"}],
    "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object",
    "properties":{"a":{"type":"string"}}}}}]})");
  auto r = request::from_json(*body);
  EXPECT_TRUE(r) << r.error().to_string();
  return *r;
}

TEST(Verify, SyntaxThatReadsBackHasNoError) {
  auto t = chat_template::create(chat_with(json_calls, "<|assistant|>"));
  ASSERT_TRUE(t) << t.error().to_string();
  const auto& a = (*t)->analysis();
  EXPECT_NE(a.tools.format, tool_format::none);
  EXPECT_EQ(a.tool_error, "");
  EXPECT_TRUE(prepare(**t, tools_request()));
}

TEST(Verify, SyntaxThatMisreadsTwoCallsIsAnExplicitError) {
  auto t = chat_template::create(chat_with(indexed_calls, "<|assistant|>"));
  ASSERT_TRUE(t) << t.error().to_string();
  const auto& a = (*t)->analysis();
  ASSERT_TRUE(a.caps.supports_parallel_tool_calls);
  EXPECT_NE(a.tool_error.find("tool-call stage 'verify'"), std::string::npos) << a.summary();
  EXPECT_NE(a.tool_error.find("2 calls"), std::string::npos) << a.tool_error;
  // The derived syntax stays visible (to correct with --analysis), but tool requests fail.
  auto p = prepare(**t, tools_request());
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, base::errc::analysis_failed);
  EXPECT_NE(p.error().message.find("verify"), std::string::npos) << p.error().message;
  // A request without tools is unaffected.
  auto body = json::parse(R"({"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_TRUE(prepare(**t, *request::from_json(*body)));
}

// The generation prompt opens and closes an empty block the history form leaves out, so the
// render does not continue the prompt: the calls are looked for in the turn's render instead.
TEST(Verify, HistoryThatDoesNotContinueThePromptIsCheckedInTheRender) {
  const struct {
    const char* name;
    std::string body;
    std::string generation_prompt;
    bool error;
  } rows[] = {
      {"json calls, empty block", json_calls, "<|assistant|><think></think>", false},
      {"indexed calls, empty block", indexed_calls, "<|assistant|><think></think>", true},
      // A dedicated format (fixed markers): the prompt opens a reasoning block the history
      // leaves out (the model closes it before its calls) ...
      {"dedicated, open reasoning", cohere_calls, "<|assistant|><|START_THINKING|>", false},
      // ... or the history adds a tool-response opener after the calls.
      {"dedicated, response opener", mistral_calls + "{% if m.tool_calls %}<response>{% endif %}",
       "<|assistant|>[THINK][/THINK]", false},
  };
  for (const auto& r : rows) {
    auto t = chat_template::create(chat_with(r.body, r.generation_prompt));
    ASSERT_TRUE(t) << r.name << ": " << t.error().to_string();
    const auto& a = (*t)->analysis();
    EXPECT_NE(a.tools.format, tool_format::none) << r.name;
    if (r.error) {
      EXPECT_NE(a.tool_error.find("history renders differently"), std::string::npos)
          << r.name << ": " << a.tool_error;
      EXPECT_NE(a.tool_error.find("2 calls"), std::string::npos) << r.name << ": " << a.tool_error;
      EXPECT_FALSE(prepare(**t, tools_request())) << r.name;
    } else {
      EXPECT_EQ(a.tool_error, "") << r.name << ": " << a.summary();
      EXPECT_TRUE(prepare(**t, tools_request())) << r.name;
    }
  }
}

TEST(Verify, LoadedAnalysisIsNotVerified) {
  auto derived = chat_template::create(chat_with(indexed_calls, "<|assistant|>"));
  ASSERT_TRUE(derived);
  analysis corrected = (*derived)->analysis();
  corrected.tool_error.clear();  // the user says the syntax is right
  auto t = chat_template::create(chat_with(indexed_calls, "<|assistant|>"),
                                 {.analysis_override = corrected});
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)->analysis().tool_error, "");
  EXPECT_TRUE(prepare(**t, tools_request()));
}

}  // namespace
}  // namespace chatpeg::chat

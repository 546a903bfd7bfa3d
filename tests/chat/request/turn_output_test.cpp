// render_turn_output: the text a template writes for an assistant turn after the prompt, the
// end of the turn cut off; and the typed error for a template whose history turns differ from
// fresh ones.
#include <gtest/gtest.h>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"

namespace chatpeg::chat {
namespace {

constexpr const char* kTemplate = R"TPL(
{%- for m in messages -%}
{%- if m.role == 'user' -%}<u>{{ m.content }}</u>
{%- elif m.role == 'assistant' -%}<a>{{ m.content }}
{%- for tc in m.tool_calls or [] -%}<call>{{ tc.function.name }}</call>{%- endfor -%}</a>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<a>{%- endif -%})TPL";

const json::value kBody = {
    {"messages", json::value::array({{{"role", "user"}, {"content", "hi"}}})}};

// An assistant turn with one call to f.
json::value call_turn() {
  return {
      {"role", "assistant"},
      {"content", ""},
      {"tool_calls", json::value::array({{{"id", "c1"},
                                          {"type", "function"},
                                          {"function", {{"name", "f"}, {"arguments", "{}"}}}}})}};
}

struct turn_case {
  const char* name;
  json::value turn;
  const char* want;
};

TEST(TurnOutput, TheTurnsTextBetweenPromptAndEndOfTurn) {
  auto t = chat_template::create(kTemplate);
  ASSERT_TRUE(t) << t.error().to_string();
  const turn_case cases[] = {
      {"content", {{"role", "assistant"}, {"content", "Hello there."}}, "Hello there."},
      {"a call", call_turn(), "<call>f</call>"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto out = render_turn_output(**t, kBody, c.turn);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(out->output, c.want);
    EXPECT_EQ(out->before.prompt, "<u>hi</u><a>");
    EXPECT_EQ(out->before.generation_prompt, "<a>");
  }
}

// A template that trims content and writes it only when something is left (Python's strip()
// takes control characters for whitespace): the end of turn is still found and cut.
TEST(TurnOutput, EndOfTurnOfATemplateThatTrimsContent) {
  auto t = chat_template::create(R"TPL(
{%- for m in messages -%}
{%- if m.role == 'user' -%}<u>{{ m.content }}<eos>
{%- elif m.tool_calls -%}<a>{%- for tc in m.tool_calls -%}<call>{{ tc.function.name }}</call>
{%- endfor -%}<eos>
{%- else -%}<a>{%- if m.content | trim | length > 0 -%}{{ m.content | trim }}<eos>{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<a>{%- endif -%})TPL");
  ASSERT_TRUE(t) << t.error().to_string();
  auto out = render_turn_output(**t, kBody, call_turn());
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(out->output, "<call>f</call>");
}

// A call turn that ends in its own end-of-message marker (<|eom_id|>, where text turns end in
// <|eot_id|>): the marker is cut too.
TEST(TurnOutput, ACallTurnsOwnEndOfMessageMarkerIsCut) {
  auto t = chat_template::create(R"TPL(
{%- for m in messages -%}
{%- if m.role == 'user' -%}<u>{{ m.content }}<|eot_id|>
{%- elif m.tool_calls -%}<a>{%- for tc in m.tool_calls -%}<call>{{ tc.function.name }}</call>
{%- endfor -%}<|eom_id|>
{%- else -%}<a>{{ m.content }}<|eot_id|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<a>{%- endif -%})TPL");
  ASSERT_TRUE(t) << t.error().to_string();
  auto out = render_turn_output(**t, kBody, call_turn());
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(out->output, "<call>f</call>");
}

TEST(TurnOutput, HistoryRenderedDifferentlyIsUnsupported) {
  // The generation prompt opens reasoning that history turns do not carry.
  auto t = chat_template::create(R"TPL(
{%- for m in messages -%}{{ m.role }}: {{ m.content }}
{% endfor -%}
{%- if add_generation_prompt -%}assistant: <think>{%- endif -%})TPL");
  ASSERT_TRUE(t) << t.error().to_string();
  auto out = render_turn_output(**t, kBody, {{"role", "assistant"}, {"content", "x"}});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, base::errc::unsupported);
  auto bad = render_turn_output(**t, json::value::object(), {{"role", "assistant"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where.path, "$.messages");
}

}  // namespace
}  // namespace chatpeg::chat

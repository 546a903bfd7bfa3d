// Chat templates invented for the cross-check tests: "[[bot]]" turns, reasoning in <think>,
// JSON calls in <call>…</call>, and a variant that never writes calls.
#pragma once

#include <string>

#include "support/response_templates.h"

namespace chatpeg::response::testing {

inline constexpr const char* bot_template = R"TPL(
{%- if tools -%}[[tools]]{{ tools | tojson }}[[end]]{%- endif -%}
{%- for m in messages -%}
{%- if m.role == 'user' -%}[[user]]{{ m.content }}[[end]]
{%- elif m.role == 'assistant' -%}[[bot]]
{%- if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif -%}
{%- if m.content %}{{ m.content }}{% endif -%}
{%- if m.tool_calls -%}{%- for tc in m.tool_calls -%}
<call>{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}</call>
{%- endfor -%}{%- endif -%}[[end]]
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}[[bot]]{%- endif -%})TPL";

inline constexpr const char* bot_template_without_calls = R"TPL(
{%- for m in messages -%}
{%- if m.role == 'user' -%}[[user]]{{ m.content }}[[end]]
{%- elif m.role == 'assistant' -%}[[bot]]{{ m.content }}[[end]]
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}[[bot]]{%- endif -%})TPL";

// The response template that describes bot_template's output.
inline std::string bot_response_template() {
  return chatpeg::testing::json_call_response_template("[[bot]]");
}

}  // namespace chatpeg::response::testing

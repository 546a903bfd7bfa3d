// Response templates invented for tests of more than one module: reasoning in <think>, calls
// as JSON objects {"name", "arguments"} in <call>…</call>, the rest content.
#pragma once

#include <string>
#include <string_view>

namespace chatpeg::testing {

// That response template, starting after `anchor` (JSON-escaped by the caller).
inline std::string json_call_response_template(std::string_view anchor) {
  return std::string(R"({
  "version": 1,
  "defaults": {"role": "assistant"},
  "start_anchor": ")") +
         std::string(anchor) + R"(",
  "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>"},
    "tool_calls": {
      "open": "<call>", "close": "</call>", "repeats": true, "content": "json",
      "transform": {"type": "function",
                    "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}
    },
    "content": {}
  }
})";
}

}  // namespace chatpeg::testing

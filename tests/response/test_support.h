// Helpers of the response module's tests: a template from JSON text (failing the test when it
// does not load) and the note's small ChatML example template.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "chatpeg/response/response.h"

namespace chatpeg::response::testing {

inline template_ptr load(const std::string& text) {
  auto j = json::parse(text);
  EXPECT_TRUE(j) << text;
  if (!j) return nullptr;
  auto t = response_template::from_json(*j);
  EXPECT_TRUE(t) << (t ? "" : t.error().to_string());
  return t ? *t : nullptr;
}

inline json::value js(const std::string& text) {
  auto j = json::parse(text);
  EXPECT_TRUE(j) << text;
  return j ? *j : json::value();
}

// JSON equality with objects compared as unordered maps (as Python compares dicts).
inline bool same(const json::value& a, const json::value& b) {
  return json::same(a, b);
}

// Reasoning, repeated JSON tool calls and implicit content closed by the end-of-turn marker,
// every stretch of it joined (a non-repeating implicit field keeps only its last stretch).
inline const char* chatml_template() {
  return R"({"defaults": {"role": "assistant"},
   "start_anchor": "<|im_start|>assistant\n",
   "fields": {
     "reasoning_content": {"open": "<think>", "close": "</think>"},
     "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": true,
                    "content": "json", "transform": {"type": "function", "function": "{content}"}},
     "content": {"close": "<|im_end|>", "repeats": true, "join": ""}}})";
}

}  // namespace chatpeg::response::testing

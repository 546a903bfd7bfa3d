// A backend that stops at max_tokens inside a tool call (llama.cpp stop_type "limit", an
// OpenAI-compatible finish_reason "length"): the gateway answers finish_reason "length" with
// the partial call closed truthfully — a string argument cut mid-text keeps its text, a key cut
// before its value is left out (never null) — in non-streaming and streaming responses alike.
#include <gtest/gtest.h>

#include "gateway_harness.h"

namespace chatpeg::server {
namespace {

using testing::gateway_harness;
using testing::scripted_reply;
using testing::split_chars;

std::string tools_body(bool stream) {
  return std::string(R"({"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":)") +
         testing::weather_tools + R"(,"max_tokens":16)" + (stream ? R"(,"stream":true)" : "") + "}";
}

struct cut_case {
  const char* name;
  std::string output;     // what the backend generated before the token limit
  std::string arguments;  // the call's final arguments, exactly
};

const std::string call_start = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ";

const std::vector<cut_case> cut_cases = {
    {"string argument cut mid-text", call_start + "{\"city\": \"Pa", R"({"city":"Pa"})"},
    {"key cut before its value",
     call_start + "{\"city\": \"Paris\", \"days\": ", R"({"city":"Paris"})"},
    {"first key cut before its value", call_start + "{\"city\": ", "{}"},
};

TEST(GatewayTruncation, CutCallKeepsItsTextAndLeavesOutKeysWithoutValues) {
  for (const auto type : {backend_type::llamacpp, backend_type::openai}) {
    SCOPED_TRACE(std::string(backend_type_name(type)));
    gateway_harness h(testing::hermes_template, type);
    for (const auto& c : cut_cases) {
      SCOPED_TRACE(c.name);
      for (const std::size_t size : {1u, 4u, 1000u}) {
        SCOPED_TRACE("chunk size " + std::to_string(size));
        h.backend.reply_with(
            scripted_reply{.chunks = split_chars(c.output, size), .stop_type = "limit"});
        int status = 0;
        const auto v = h.post_json("/v1/chat/completions", tools_body(false), &status);
        ASSERT_EQ(status, 200) << json::dump(v);
        const auto& choice = v["choices"][0];
        EXPECT_EQ(choice["finish_reason"], "length");
        const auto& calls = choice["message"]["tool_calls"];
        ASSERT_EQ(calls.size(), 1u) << json::dump(v);
        EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
        EXPECT_EQ(calls[0]["function"]["arguments"], c.arguments);

        h.backend.reply_with(
            scripted_reply{.chunks = split_chars(c.output, size), .stop_type = "limit"});
        auto r = h.stream(tools_body(true));
        ASSERT_EQ(r.status, 200) << r.raw;
        EXPECT_EQ(r.finish_reason, "length");
        EXPECT_TRUE(r.done_last);
        ASSERT_EQ(r.calls.size(), 1u) << r.raw;
        const auto& call = r.calls.begin()->second;
        EXPECT_EQ(call["name"], "get_weather");
        EXPECT_EQ(call["arguments"], c.arguments) << r.raw;
      }
    }
  }
}

}  // namespace
}  // namespace chatpeg::server

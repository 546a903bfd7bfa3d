// Tool calling through the gateway with the Hermes-style test template: the grammar, lazy flag,
// triggers and preserved tokens that reach the backend; tool calls in non-streaming and
// streaming answers for many chunkings (markers and multi-byte text split across events);
// the failure policy (output that stops matching → content + warning; truncated call →
// finish_reason length with the partial call).
#include <gtest/gtest.h>

#include <thread>

#include "gateway_harness.h"

namespace chatpeg::server {
namespace {

using testing::args_of;
using testing::gateway_harness;
using testing::scripted_reply;
using testing::split_chars;
using testing::tools_body;

const std::string call_text =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par\xC3\xAEs\", "
    "\"days\": 2}}\n</tool_call>";

TEST(GatewayTools, BackendReceivesLazyGrammarWithTriggers) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = {"Sunny."}});
  int status = 0;
  auto v = h.post_json("/v1/chat/completions", tools_body(), &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  const auto sent = h.backend.last_request();
  ASSERT_TRUE(sent.contains("grammar")) << json::dump(sent);
  EXPECT_NE(sent["grammar"].get<std::string>().find("get_weather"), std::string::npos);
  EXPECT_EQ(sent["grammar_lazy"], true);
  ASSERT_FALSE(sent["grammar_triggers"].empty());
  bool tool_call_trigger = false;
  for (const auto& t : sent["grammar_triggers"]) {
    EXPECT_TRUE(t["type"].is_number_integer());
    if (t["value"].get<std::string>().find("<tool_call>") != std::string::npos) {
      tool_call_trigger = true;
    }
  }
  EXPECT_TRUE(tool_call_trigger) << json::dump(sent["grammar_triggers"]);
  EXPECT_NE(sent["prompt"].get<std::string>().find("\"get_weather\""), std::string::npos);
  EXPECT_EQ(v["choices"][0]["message"]["content"], "Sunny.");
  EXPECT_EQ(v["choices"][0]["finish_reason"], "stop");
}

TEST(GatewayTools, RequiredAndNamedToolChoiceAreNotLazy) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = {call_text}});
  for (const char* choice :
       {R"("required")", R"({"type":"function","function":{"name":"get_weather"}})"}) {
    SCOPED_TRACE(choice);
    int status = 0;
    auto v = h.post_json("/v1/chat/completions",
                         tools_body(std::string(R"(,"tool_choice":)") + choice), &status);
    ASSERT_EQ(status, 200) << json::dump(v);
    const auto sent = h.backend.last_request();
    EXPECT_EQ(sent["grammar_lazy"], false) << json::dump(sent);
    EXPECT_FALSE(sent["grammar"].get<std::string>().empty());
    EXPECT_EQ(v["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  }
}

TEST(GatewayTools, NonStreamingToolCall) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = split_chars(call_text, 4)});
  int status = 0;
  auto v = h.post_json("/v1/chat/completions", tools_body(), &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  const auto& choice = v["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_TRUE(choice["message"]["content"].is_null()) << json::dump(choice);
  const auto& call = choice["message"]["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(args_of(call["function"]["arguments"]),
            (json::value{{"city", "Par\xC3\xAEs"}, {"days", 2}}));
}

TEST(GatewayTools, StreamingToolCallForEveryChunkSize) {
  gateway_harness h;
  const std::string output = "Let me check \xF0\x9F\x8C\xA4.\n" + call_text;
  for (std::size_t size : {1u, 2u, 3u, 5u, 8u, 13u, 1000u}) {
    SCOPED_TRACE("chunk size " + std::to_string(size));
    h.backend.reply_with(
        scripted_reply{.chunks = split_chars(output, size), .write_size = size + 2});
    auto r = h.stream(tools_body(R"(,"stream":true)"));
    ASSERT_EQ(r.status, 200) << r.raw;
    EXPECT_EQ(r.role, "assistant");
    EXPECT_EQ(r.finish_reason, "tool_calls");
    EXPECT_NE(r.content.find("Let me check \xF0\x9F\x8C\xA4."), std::string::npos) << r.content;
    ASSERT_EQ(r.calls.size(), 1u) << r.raw;
    const auto& call = r.calls.begin()->second;
    EXPECT_EQ(call["name"], "get_weather");
    EXPECT_EQ(call["id"].get<std::string>().rfind("call_", 0), 0u);
    EXPECT_EQ(args_of(call["arguments"]), (json::value{{"city", "Par\xC3\xAEs"}, {"days", 2}}));
    EXPECT_TRUE(r.done_last);
  }
}

TEST(GatewayTools, OutputThatStopsMatchingIsDeliveredAsContent) {
  gateway_harness h;
  // tool_choice required: a call is mandatory, so a call to an unknown tool cannot match.
  const std::string output =
      "<tool_call>\n{\"name\": \"launch_rockets\", \"arguments\": {}}\n</tool_call>";
  const std::string required = R"(,"tool_choice":"required")";
  h.backend.reply_with(scripted_reply{.chunks = split_chars(output, 3)});
  int status = 0;
  auto v = h.post_json("/v1/chat/completions", tools_body(required), &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  EXPECT_EQ(v["choices"][0]["message"]["content"], output);
  auto r = h.stream(tools_body(required + R"(,"stream":true)"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content, output);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_TRUE(h.logged_soon("stopped matching"));
}

// A call that goes wrong after text was streamed: nothing the model wrote is lost — the text
// before it and the whole call text reach the client as content, whatever the chunking.
TEST(GatewayTools, CallThatStopsMatchingMidStreamLosesNoText) {
  gateway_harness h;
  const std::string output =
      "Sure, one moment.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\"} oops }\n</tool_call>";
  for (const std::size_t size : {1u, 3u, 7u, 200u}) {
    SCOPED_TRACE("chunk size " + std::to_string(size));
    h.backend.reply_with(scripted_reply{.chunks = split_chars(output, size)});
    auto r = h.stream(tools_body(R"(,"stream":true)"));
    ASSERT_EQ(r.status, 200) << r.raw;
    EXPECT_TRUE(r.done_last);
    // Every byte of the output is in the content (a call header already sent may also
    // remain, but the text is never dropped).
    EXPECT_NE(r.content.find("Sure, one moment."), std::string::npos) << r.raw;
    EXPECT_NE(r.content.find("oops }\n</tool_call>"), std::string::npos) << r.raw;
    EXPECT_NE(r.content.find("<tool_call>"), std::string::npos) << r.raw;
  }
}

TEST(GatewayTools, TruncatedCallFinishesWithLength) {
  gateway_harness h;
  const std::string cut = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa";
  h.backend.reply_with(scripted_reply{.chunks = split_chars(cut, 5), .stop_type = "limit"});
  int status = 0;
  const auto v = h.post_json("/v1/chat/completions", tools_body(R"(,"max_tokens":12)"), &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  EXPECT_EQ(v["choices"][0]["finish_reason"], "length");
  auto r = h.stream(tools_body(R"(,"max_tokens":12,"stream":true)"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_TRUE(r.done_last);
  const auto& message = v["choices"][0]["message"];
  const auto& calls = message["tool_calls"];
  ASSERT_EQ(calls.size(), 1u) << json::dump(v);
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_TRUE(args_of(calls[0]["function"]["arguments"]).is_object());
  ASSERT_EQ(r.calls.size(), 1u) << r.raw;
  EXPECT_EQ(r.calls.begin()->second["name"], "get_weather");
}

}  // namespace
}  // namespace chatpeg::server

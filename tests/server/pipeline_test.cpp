// The gateway reading model output with a response template (gateway_options::
// response_template): reasoning, content and calls in non-streaming answers and in streams of
// every chunk size 1..7 (the same message either way), string arguments cast by the request's
// tool schemas, output that stops matching delivered as content with a warning, a request with
// tools the chat template's analysis cannot express served through the response template, and
// /health naming the pipeline.
#include <gtest/gtest.h>

#include "chatpeg/response/response.h"
#include "gateway_harness.h"
#include "support/response_templates.h"

namespace chatpeg::server {
namespace {

using testing::args_of;
using testing::gateway_harness;
using testing::scripted_reply;
using testing::split_chars;
using testing::tools_body;

// Calls as JSON in <call>…</call> (not the chat template's own <tool_call>, so the test shows
// the response template is what reads them).
response::template_ptr load_template() {
  auto t = response::response_template::from_text(
      chatpeg::testing::json_call_response_template(R"(<|im_start|>assistant\n)"));
  if (!t) ADD_FAILURE() << t.error().to_string();
  return t ? *t : nullptr;
}

std::unique_ptr<gateway_harness> make_harness(
    std::string chat_template = testing::hermes_template) {
  return std::make_unique<gateway_harness>(
      std::move(chat_template), backend_type::llamacpp, server_options{}, 8,
      backend_options{.connect_timeout = std::chrono::seconds(5),
                      .read_timeout = std::chrono::seconds(20)},
      load_template());
}

// "days" comes as a string: the schema says integer, so it is cast.
const std::string output =
    "<think>Paris, two days.</think>Let me check.<call>{\"name\": \"get_weather\", "
    "\"arguments\": {\"city\": \"Par\xC3\xAEs\", \"days\": \"2\"}}</call>";

const json::value expected_arguments = {{"city", "Par\xC3\xAEs"}, {"days", 2}};

TEST(PipelineResponseTemplate, NonStreamingAnswer) {
  auto h = make_harness();
  h->backend.reply_with(scripted_reply{.chunks = split_chars(output, 5)});
  int status = 0;
  auto v = h->post_json("/v1/chat/completions", tools_body(), &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  const auto& choice = v["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  const auto& m = choice["message"];
  EXPECT_EQ(m["reasoning_content"], "Paris, two days.");
  EXPECT_EQ(m["content"], "Let me check.");
  ASSERT_EQ(m["tool_calls"].size(), 1u) << json::dump(m);
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(args_of(m["tool_calls"][0]["function"]["arguments"]), expected_arguments);
  EXPECT_EQ(m["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);
}

TEST(PipelineResponseTemplate, StreamsTheSameMessageAtEveryChunkSize) {
  auto h = make_harness();
  for (std::size_t n = 1; n <= 7; ++n) {
    SCOPED_TRACE("chunk " + std::to_string(n));
    h->backend.reply_with(scripted_reply{.chunks = split_chars(output, n)});
    auto r = h->stream(tools_body(R"(,"stream":true)"));
    ASSERT_EQ(r.status, 200) << r.raw;
    EXPECT_TRUE(r.saw_done);
    EXPECT_EQ(r.reasoning, "Paris, two days.");
    EXPECT_EQ(r.content, "Let me check.");
    ASSERT_EQ(r.calls.size(), 1u) << r.raw;
    EXPECT_EQ(r.calls[0]["name"], "get_weather");
    EXPECT_EQ(args_of(r.calls[0]["arguments"]), expected_arguments);
    EXPECT_FALSE(r.calls[0]["id"].get<std::string>().empty());
    EXPECT_EQ(r.finish_reason, "tool_calls");
    // No delimiter byte reaches a text delta.
    EXPECT_EQ(r.raw.find("\"content\":\"<"), std::string::npos) << r.raw;
  }
}

TEST(PipelineResponseTemplate, OutputThatStopsMatchingIsContentWithAWarning) {
  const std::string bad = "Checking.<call>{\"name\": \"get_weather\", oops}</call> done";
  for (bool streaming : {false, true}) {
    SCOPED_TRACE(streaming ? "stream" : "whole");
    auto h = make_harness();
    h->backend.reply_with(scripted_reply{.chunks = split_chars(bad, 3)});
    std::string content;
    if (streaming) {
      auto r = h->stream(tools_body(R"(,"stream":true)"));
      ASSERT_EQ(r.status, 200) << r.raw;
      EXPECT_TRUE(r.calls.empty());
      EXPECT_EQ(r.finish_reason, "stop");
      content = r.content;
    } else {
      int status = 0;
      auto v = h->post_json("/v1/chat/completions", tools_body(), &status);
      ASSERT_EQ(status, 200) << json::dump(v);
      EXPECT_FALSE(v["choices"][0]["message"].contains("tool_calls") &&
                   !v["choices"][0]["message"]["tool_calls"].empty());
      content = v["choices"][0]["message"]["content"].get<std::string>();
    }
    // Every byte of the output arrives: the text before the call, then the call as written.
    EXPECT_EQ(content, bad);
    EXPECT_TRUE(h->logged_soon("stopped matching"));
  }
}

// A chat template that lists tools but never writes an assistant call: chatpeg's analysis has
// no call syntax, so tool_choice "required" cannot be prepared on its own.
constexpr const char* tools_without_call_syntax = R"TPL(
{%- if tools %}<|im_start|>system
Tools: {{ tools | tojson }}<|im_end|>
{% endif %}
{%- for message in messages %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %})TPL";

TEST(PipelineResponseTemplate, ServesToolsTheChatTemplateAnalysisCannotExpress) {
  const std::string body = tools_body(R"(,"tool_choice":"required")");
  {
    gateway_harness own(tools_without_call_syntax);
    own.backend.reply_with(scripted_reply{.chunks = {output}});
    int status = 0;
    auto v = own.post_json("/v1/chat/completions", body, &status);
    EXPECT_NE(status, 200) << json::dump(v);
  }
  auto h = make_harness(tools_without_call_syntax);
  h->backend.reply_with(scripted_reply{.chunks = split_chars(output, 4)});
  int status = 0;
  auto v = h->post_json("/v1/chat/completions", body, &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  const auto sent = h->backend.last_request();
  EXPECT_NE(sent["prompt"].get<std::string>().find("get_weather"), std::string::npos)
      << "the prompt carries the tools";
  const auto& m = v["choices"][0]["message"];
  ASSERT_EQ(m["tool_calls"].size(), 1u) << json::dump(v);
  EXPECT_EQ(args_of(m["tool_calls"][0]["function"]["arguments"]), expected_arguments);
}

TEST(PipelineResponseTemplate, HealthNamesThePipeline) {
  auto h = make_harness();
  int status = 0;
  auto c = h->client();
  auto r = c.Get("/health");
  ASSERT_TRUE(r);
  status = r->status;
  EXPECT_EQ(status, 200);
  EXPECT_NE(r->body.find("response::delta_stream"), std::string::npos) << r->body;
  gateway_harness own;
  auto r2 = own.client().Get("/health");
  ASSERT_TRUE(r2);
  EXPECT_NE(r2->body.find("stream::session"), std::string::npos) << r2->body;
}

}  // namespace
}  // namespace chatpeg::server

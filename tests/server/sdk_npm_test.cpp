// The official SDKs of the other APIs as clients of the gateway, each installed with npm into
// the build dir on first use (the test skips visibly when node/npm are missing or the install
// fails, as when offline):
// - `openai` (current major) on /v1/responses: create plain and with a function call, the
//   stream helper's finalResponse() equal to the non-streamed response, tool_choice required
//   and named, a stateless refusal surfacing as the client's APIError;
// - `@anthropic-ai/sdk` on /v1/messages: create with tools (a tool_use block whose input is the
//   expected object), stream with thinking and a tool call (finalMessage() equal to the
//   non-streamed message), countTokens, and a 400 and a 401 as the SDK's typed errors;
// - the Vercel `ai` SDK with `@ai-sdk/openai-compatible` on /v1/chat/completions: streamText
//   with a tool, the call arriving with parsed arguments.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gateway_harness.h"
#include "npm_support.h"

namespace chatpeg::server {
namespace {

namespace fs = std::filesystem;
using testing::npm_install;
using testing::run_capture;

json::value run_script(const std::string& script, const std::vector<std::string>& args) {
  std::string cmd = "node '" + std::string(CHATPEG_SOURCE_DIR) + "/tests/server/" + script + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  int status = 0;
  const std::string out = run_capture(cmd + " 2>&1", status);
  EXPECT_EQ(status, 0) << out;
  auto v = json::parse(out);
  EXPECT_TRUE(v) << out;
  return v ? *v : json::value();
}

// Items without their ids (two responses differ there) and without what an SDK's stream helper
// adds on its own (openai's parsed_arguments).
json::value without_ids(json::value items) {
  for (auto& i : items) {
    i.erase("id");
    i.erase("call_id");
    i.erase("parsed_arguments");
  }
  return items;
}

const std::string call_text =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": "
    "3}}\n</tool_call>";
const json::value expected_args = {{"city", "Paris"}, {"days", 3}};

TEST(SdkNpmClients, OpenaiResponses) {
  fs::path dir;
  if (auto why = npm_install("npm-openai-current", "openai", "openai@7", dir); !why.empty()) {
    GTEST_SKIP() << why << ": the openai Responses client test is skipped";
  }
  testing::gateway_harness h;
  h.backend.reply_with(testing::scripted_reply{.chunks = testing::split_chars(call_text, 3)});
  const std::string base = "http://127.0.0.1:" + std::to_string(h.gw->port()) + "/v1";
  const json::value v = run_script("responses_client.mjs", {base, dir.string()});
  // Without tools the tool-call text is plain text.
  EXPECT_EQ(v["plain"]["output_text"], call_text) << json::dump(v["plain"]);
  for (const char* mode : {"call", "stream", "required", "named"}) {
    SCOPED_TRACE(mode);
    const auto& r = v[mode];
    EXPECT_EQ(r["status"], "completed") << json::dump(r);
    ASSERT_EQ(r["output"].size(), 1u) << json::dump(r);
    const auto& item = r["output"][0];
    EXPECT_EQ(item["type"], "function_call");
    EXPECT_EQ(item["name"], "get_weather");
    EXPECT_FALSE(item["call_id"].get<std::string>().empty());
    auto args = json::parse(item["arguments"].get<std::string>());
    ASSERT_TRUE(args);
    EXPECT_EQ(*args, expected_args);
    EXPECT_TRUE(r["usage"]["total_tokens"].is_number_integer()) << json::dump(r);
  }
  EXPECT_EQ(without_ids(v["stream"]["output"]), without_ids(v["call"]["output"]));
  const auto& events = v["stream_events"];
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0], "response.created");
  EXPECT_EQ(events[events.size() - 1], "response.completed");
  EXPECT_EQ(v["error"]["api_error"], true);
  EXPECT_EQ(v["error"]["status"], 400);
  EXPECT_EQ(v["error"]["param"], "$.previous_response_id");
}

TEST(SdkNpmClients, AnthropicMessages) {
  fs::path dir;
  if (auto why = npm_install("npm-anthropic", "@anthropic-ai/sdk", "@anthropic-ai/sdk@1", dir);
      !why.empty()) {
    GTEST_SKIP() << why << ": the Anthropic client test is skipped";
  }
  std::ifstream in(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
  std::stringstream source;
  source << in.rdbuf();
  testing::gateway_harness h(source.str(), backend_type::llamacpp, {.api_keys = {"sk-ant"}});
  h.backend.reply_with(
      testing::scripted_reply{.chunks = testing::split_chars(
                                  "<think>\nThe user wants weather.\n</think>\n" + call_text, 4)});
  const std::string base = "http://127.0.0.1:" + std::to_string(h.gw->port());
  const json::value v = run_script("anthropic_client.mjs", {base, dir.string(), "sk-ant"});
  for (const char* mode : {"create", "stream"}) {
    SCOPED_TRACE(mode);
    const auto& m = v[mode];
    EXPECT_EQ(m["type"], "message") << json::dump(m);
    EXPECT_EQ(m["stop_reason"], "tool_use");
    ASSERT_EQ(m["content"].size(), 2u) << json::dump(m);
    EXPECT_EQ(m["content"][0]["type"], "thinking");
    EXPECT_EQ(m["content"][0]["thinking"], "The user wants weather.\n");
    EXPECT_EQ(m["content"][1]["type"], "tool_use");
    EXPECT_EQ(m["content"][1]["name"], "get_weather");
    EXPECT_EQ(m["content"][1]["input"], expected_args);
  }
  EXPECT_EQ(without_ids(v["stream"]["content"]), without_ids(v["create"]["content"]));
  EXPECT_TRUE(v["count"]["input_tokens"].is_number_integer()) << json::dump(v["count"]);
  EXPECT_GT(v["count"]["input_tokens"].get<std::int64_t>(), 0);
  EXPECT_EQ(v["bad"]["status"], 400);
  EXPECT_EQ(v["bad"]["typed"], true);
  EXPECT_EQ(v["unauthorized"]["status"], 401);
  EXPECT_EQ(v["unauthorized"]["typed"], true);
}

TEST(SdkNpmClients, VercelAiSdkStreamText) {
  fs::path dir;
  const std::string spec = "ai@7 @ai-sdk/openai-compatible@3";
  if (auto why = npm_install("npm-ai-sdk", "@ai-sdk/openai-compatible", spec, dir); !why.empty()) {
    GTEST_SKIP() << why << ": the Vercel ai SDK client test is skipped";
  }
  testing::gateway_harness h;
  h.backend.reply_with(testing::scripted_reply{.chunks = testing::split_chars(call_text, 3)});
  const std::string base = "http://127.0.0.1:" + std::to_string(h.gw->port()) + "/v1";
  const json::value v = run_script("ai_sdk_client.mjs", {base, dir.string()});
  ASSERT_EQ(v["tool_calls"].size(), 1u) << json::dump(v);
  EXPECT_EQ(v["tool_calls"][0]["name"], "get_weather");
  EXPECT_EQ(v["tool_calls"][0]["input"], expected_args);
  EXPECT_EQ(v["finish_reason"], "tool-calls");
}

}  // namespace
}  // namespace chatpeg::server

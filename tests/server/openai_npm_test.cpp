// The official `openai` npm package as the client of the gateway: non-streaming and
// streaming chat completions with tools (the client's accumulated tool calls equal the
// expected ones) and a bad request surfacing as the client's APIError with status 400. The
// package is installed with npm into <build>/npm-openai on first use; the test skips visibly
// when node/npm are missing or the install fails.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gateway_harness.h"
#include "npm_support.h"

namespace chatpeg::server {
namespace {

namespace fs = std::filesystem;
using testing::run_capture;

TEST(OpenaiNpmClient, ToolCallsStreamingAndErrors) {
  if (std::system("command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "node/npm not installed: the openai npm client test is skipped";
  }
  const char* build = std::getenv("CHATPEG_BUILD_DIR");
  const fs::path dir =
      fs::path(build != nullptr ? build : fs::temp_directory_path().string()) / "npm-openai";
  if (!fs::exists(dir / "node_modules" / "openai" / "package.json")) {
    fs::create_directories(dir);
    if (!fs::exists(dir / "package.json")) {
      std::ofstream(dir / "package.json")
          << R"({"name":"chatpeg-openai-client-test","private":true})";
    }
    const std::string install =
        "cd '" + dir.string() +
        "' && npm install --no-audit --no-fund openai@4 > npm-install.log 2>&1";
    if (std::system(install.c_str()) != 0) {
      GTEST_SKIP() << "npm install openai failed (offline?), see " << (dir / "npm-install.log");
    }
  }

  testing::gateway_harness h;
  const std::string call =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": "
      "3}}\n</tool_call>";
  h.backend.reply_with(testing::scripted_reply{.chunks = testing::split_chars(call, 3)});
  const std::string script = std::string(CHATPEG_SOURCE_DIR) + "/tests/server/openai_client.mjs";
  const std::string base = "http://127.0.0.1:" + std::to_string(h.gw->port()) + "/v1";
  int status = 0;
  const std::string out =
      run_capture("node '" + script + "' '" + base + "' '" + dir.string() + "' 2>&1", status);
  ASSERT_EQ(status, 0) << out;
  auto v = json::parse(out);
  ASSERT_TRUE(v) << out;
  const json::value expected_args = {{"city", "Paris"}, {"days", 3}};
  for (const char* mode : {"plain", "stream"}) {
    SCOPED_TRACE(mode);
    const auto& r = (*v)[mode];
    EXPECT_EQ(r["finish_reason"], "tool_calls") << json::dump(r);
    ASSERT_EQ(r["tool_calls"].size(), 1u) << json::dump(r);
    const auto& c = r["tool_calls"][0];
    EXPECT_EQ(c["type"], "function");
    EXPECT_EQ(c["function"]["name"], "get_weather");
    auto args = json::parse(c["function"]["arguments"].get<std::string>());
    ASSERT_TRUE(args);
    EXPECT_EQ(*args, expected_args);
    EXPECT_TRUE(c["id"].is_string());
    EXPECT_TRUE(r["usage"]["total_tokens"].is_number_integer()) << json::dump(r);
  }
  EXPECT_EQ((*v)["error"]["api_error"], true);
  EXPECT_EQ((*v)["error"]["status"], 400);
  EXPECT_EQ((*v)["error"]["param"], "$.temperature");
}

}  // namespace
}  // namespace chatpeg::server

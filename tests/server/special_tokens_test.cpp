// The special-token cache: which preserved markers are single tokens of the backend's
// vocabulary (asked through /tokenize once per marker list), what happens when the backend
// has no /tokenize or is down, and that the gateway asks once, not per request.
#include <gtest/gtest.h>

#include "chatpeg/server/special_tokens.h"
#include "gateway_harness.h"

namespace chatpeg::server {
namespace {

using server::special_token_cache;
using testing::fixture_backend;
using testing::gateway_harness;
using testing::scripted_reply;

backend_client client_for(const fixture_backend& fx, backend_type type = backend_type::llamacpp) {
  return backend_client({.type = type,
                         .url = fx.url(),
                         .connect_timeout = std::chrono::seconds(2),
                         .read_timeout = std::chrono::seconds(5)});
}

TEST(SpecialTokens, SingleTokenMarkersWithTheirIds) {
  fixture_backend fx;
  const auto backend = client_for(fx);
  special_token_cache cache;
  const std::vector<std::string> preserved = {"<tool_call>", "</tool_call>", "<think>"};
  const auto found = cache.lookup(backend, preserved);
  ASSERT_EQ(found.size(), 2u);  // <think> is several tokens in the fixture's vocabulary
  EXPECT_EQ(found[0].text, "<tool_call>");
  EXPECT_EQ(found[0].id, fixture_backend::tool_call_id);
  EXPECT_EQ(found[1].text, "</tool_call>");
  EXPECT_EQ(found[1].id, fixture_backend::tool_call_end_id);
  EXPECT_EQ(fx.tokenize_calls(), 3);
  // Cached: the same list again asks nothing; another list asks for its markers.
  EXPECT_EQ(cache.lookup(backend, preserved).size(), 2u);
  EXPECT_EQ(fx.tokenize_calls(), 3);
  EXPECT_EQ(cache.lookup(backend, {"<|im_end|>"}).size(), 1u);
  EXPECT_EQ(fx.tokenize_calls(), 4);
  EXPECT_EQ(cache.backend_queries(), 4u);
  EXPECT_TRUE(cache.lookup(backend, {}).empty());
  EXPECT_EQ(fx.tokenize_calls(), 4);
}

TEST(SpecialTokens, BackendWithoutTokenizeIsRememberedAndEmpty) {
  fixture_backend fx;
  fx.set_tokenize_enabled(false);
  const auto backend = client_for(fx);
  special_token_cache cache;
  EXPECT_TRUE(cache.lookup(backend, {"<tool_call>"}).empty());
  EXPECT_EQ(fx.tokenize_calls(), 1);
  EXPECT_TRUE(cache.lookup(backend, {"</tool_call>"}).empty());
  EXPECT_EQ(fx.tokenize_calls(), 1);  // not asked again
  // The openai backend type has no /tokenize: nothing is sent.
  fixture_backend fx2;
  special_token_cache cache2;
  EXPECT_TRUE(cache2.lookup(client_for(fx2, backend_type::openai), {"<tool_call>"}).empty());
  EXPECT_EQ(fx2.tokenize_calls(), 0);
}

TEST(SpecialTokens, UnreachableBackendIsNotCached) {
  testing::closed_port closed;
  special_token_cache cache;
  backend_client down({.url = closed.url(), .connect_timeout = std::chrono::seconds(2)});
  EXPECT_TRUE(cache.lookup(down, {"<tool_call>"}).empty());
  EXPECT_TRUE(cache.lookup(down, {"<tool_call>"}).empty());
  EXPECT_EQ(cache.backend_queries(), 2u);  // asked again: the backend may come back
}

TEST(SpecialTokens, TokenizeGarbageIsAnError) {
  fixture_backend fx;
  fx.set_special_vocab({});
  const auto backend = client_for(fx);
  auto r = backend.tokenize("<tool_call>");
  EXPECT_FALSE(r.error.has_value());
  EXPECT_EQ(r.tokens.size(), std::string("<tool_call>").size());
  fx.set_tokenize_enabled(false);
  auto e = backend.tokenize("x");
  ASSERT_TRUE(e.error.has_value());
  EXPECT_EQ(e.error->status, 404);
}

TEST(SpecialTokens, GatewayAsksOncePerMarkerList) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = {"Sunny."}});
  const std::string tools_body =
      std::string(R"({"messages":[{"role":"user","content":"Weather?"}],"tools":)") +
      testing::weather_tools + "}";
  int status = 0;
  auto report = h.post_json("/v1/chat/prepare", tools_body, &status);
  ASSERT_EQ(status, 200);
  const std::size_t preserved = report["preserved_tokens"].size();
  ASSERT_GT(preserved, 0u) << json::dump(report);
  EXPECT_EQ(h.backend.tokenize_calls(), 0);  // /prepare streams nothing: no lookup
  for (int i = 0; i < 3; ++i) {
    for (const char* stream : {"", R"(,"stream":true)"}) {
      std::string body = tools_body;
      body.insert(body.size() - 1, stream);
      auto v = h.post_json("/v1/chat/completions", body, &status);
      EXPECT_EQ(status, 200) << json::dump(v);
    }
  }
  EXPECT_EQ(h.backend.tokenize_calls(), static_cast<int>(preserved));
}

// The model writes a whole call as ordinary text (the markers spelled with ordinary tokens,
// e.g. quoting an example), then really calls the tool with the special tokens: the look-alike
// stays content (under the text rule it would be a call to get_weather for Rome), the special
// tokens start the call. llama.cpp streams one token per event, so each event carries its id.
TEST(SpecialTokens, LookAlikeMarkerTextStaysContent) {
  gateway_harness h;
  const std::string quoted = "\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n";
  const std::vector<std::string> chunks = {
      "Example: ",
      "<",
      "tool",
      "_call",
      ">",
      quoted,
      "</",
      "tool",
      "_call",
      ">",
      " Now: ",
      "<tool_call>",
      "\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n",
      "</tool_call>"};
  const std::vector<std::vector<int>> ids = {{101},   {27},
                                             {14172}, {13429},
                                             {29},    {104},
                                             {1002},  {14172},
                                             {13429}, {29},
                                             {102},   {fixture_backend::tool_call_id},
                                             {103},   {fixture_backend::tool_call_end_id}};
  h.backend.reply_with(scripted_reply{.chunks = chunks, .chunk_tokens = ids});
  const std::string body =
      std::string(R"({"messages":[{"role":"user","content":"Weather?"}],"tools":)") +
      testing::weather_tools + R"(,"stream":true})";
  auto r = h.stream(body);
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.content, "Example: <tool_call>" + quoted + "</tool_call> Now: ");
  ASSERT_EQ(r.calls.size(), 1u) << r.raw;
  EXPECT_EQ(r.calls[0]["name"], "get_weather");
  EXPECT_EQ(json::parse(r.calls[0]["arguments"].get<std::string>()).value(),
            json::value({{"city", "Paris"}}));
  EXPECT_EQ(r.finish_reason, "tool_calls");
}

}  // namespace
}  // namespace chatpeg::server

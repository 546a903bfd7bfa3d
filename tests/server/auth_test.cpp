// API keys: the key a request presents (Bearer or x-api-key), the comparison against the
// configured keys, the key file's rules (table rows each), and the gateway end to end: every
// endpoint but /health refuses a missing or wrong key with a 401 in OpenAI's error shape, a
// right key in either header is served, and no key ever reaches the request log.
#include "server/auth.h"

#include <gtest/gtest.h>

#include "chatpeg/server/gateway.h"
#include "gateway_harness.h"

namespace chatpeg::server {
namespace {

TEST(Auth, PresentedKey) {
  struct row {
    const char* authorization;
    const char* x_api_key;
    const char* key;
  };
  const std::vector<row> rows = {
      {"Bearer k1", "", "k1"},
      {"bearer k1", "", "k1"},
      {"BEARER  k1 ", "", "k1"},
      {"", "k2", "k2"},
      {"", " k2 ", "k2"},
      {"Bearer k1", "k2", "k1"},
      {"Basic dXNlcg==", "k2", "k2"},
      {"Basic dXNlcg==", "", ""},
      {"Bearer", "", ""},
      {"Bearer ", "k2", "k2"},
      {"", "", ""},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(r.authorization) + " | " + r.x_api_key);
    EXPECT_EQ(detail::presented_key(r.authorization, r.x_api_key), r.key);
  }
}

TEST(Auth, KeyMatches) {
  const std::vector<std::string> keys = {"sk-alpha", "sk-beta-longer"};
  struct row {
    std::string_view key;
    bool ok;
  };
  const std::vector<row> rows = {
      {"sk-alpha", true}, {"sk-beta-longer", true},
      {"sk-alph", false}, {"sk-alphaa", false},
      {"sk-beta", false}, {"SK-ALPHA", false},
      {"", false},        {std::string_view("sk-alpha\0", 9), false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(r.key));
    EXPECT_EQ(detail::key_matches(keys, r.key), r.ok);
  }
  EXPECT_FALSE(detail::key_matches({}, "sk-alpha"));
  EXPECT_FALSE(detail::key_matches({""}, ""));  // an empty presented key never matches
}

TEST(Auth, KeyFile) {
  struct row {
    const char* text;
    std::vector<std::string> keys;  // empty: an error
    std::uint32_t line;             // of the error (0: none)
  };
  const std::vector<row> rows = {
      {"k1\nk2\n", {"k1", "k2"}, 0},
      {"  k1  \r\n\n# a comment\n\tk2", {"k1", "k2"}, 0},
      {"k1\nk 2\n", {}, 2},
      {"k1\x01\n", {}, 1},
      {"# only a comment\n\n", {}, 0},
      {"", {}, 0},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.text);
    auto keys = detail::parse_key_file(r.text);
    if (r.keys.empty()) {
      ASSERT_FALSE(keys.has_value());
      EXPECT_EQ(keys.error().where.line, r.line);
    } else {
      ASSERT_TRUE(keys.has_value()) << keys.error().to_string();
      EXPECT_EQ(*keys, r.keys);
    }
  }
  auto missing = read_api_key_file("/nonexistent/keys.txt");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().where.file, "/nonexistent/keys.txt");
}

TEST(Auth, GatewayNeedsAKeyOnEveryEndpointButHealth) {
  testing::gateway_harness h(testing::hermes_template, backend_type::llamacpp,
                             {.log = log_format::json, .api_keys = {"sk-one", "sk-two"}});
  h.backend.reply_with(testing::scripted_reply{.chunks = {"ok"}, .tokens_evaluated = 3});
  const std::string body = R"({"messages":[{"role":"user","content":"hi"}]})";
  auto c = h.client();
  struct row {
    const char* method;
    const char* path;
    httplib::Headers headers;
    int status;
  };
  const std::vector<row> rows = {
      {"GET", "/health", {}, 200},
      {"GET", "/v1/models", {}, 401},
      {"GET", "/v1/models", {{"Authorization", "Bearer sk-wrong"}}, 401},
      {"GET", "/v1/models", {{"Authorization", "Bearer sk-one"}}, 200},
      {"GET", "/v1/models", {{"x-api-key", "sk-two"}}, 200},
      {"POST", "/v1/chat/completions", {}, 401},
      {"POST", "/v1/chat/completions", {{"x-api-key", "sk-on"}}, 401},
      {"POST", "/v1/chat/completions", {{"Authorization", "Bearer sk-two"}}, 200},
      {"POST", "/v1/chat/prepare", {{"Authorization", "Basic c2stb25l"}}, 401},
      {"POST", "/v1/chat/prepare", {{"x-api-key", "sk-one"}}, 200},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(r.method) + " " + r.path);
    auto res = std::string(r.method) == "GET" ? c.Get(r.path, r.headers)
                                              : c.Post(r.path, r.headers, body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, r.status) << res->body;
    if (r.status != 401) continue;
    EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer");
    auto v = json::parse(res->body);
    ASSERT_TRUE(v) << res->body;
    EXPECT_EQ((*v)["error"]["code"], "invalid_api_key");
    EXPECT_EQ((*v)["error"]["type"], "invalid_request_error");
    EXPECT_TRUE((*v)["error"]["message"].is_string());
  }
  // The request log names paths and statuses, never a key (right or wrong).
  std::vector<std::string> lines;
  for (int i = 0; i < 500 && lines.size() < rows.size(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    lines = h.log_lines();
  }
  ASSERT_GE(lines.size(), rows.size() - 1);
  for (const auto& l : lines) {
    EXPECT_EQ(l.find("sk-"), std::string::npos) << l;
  }
}

}  // namespace
}  // namespace chatpeg::server

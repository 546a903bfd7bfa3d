// The gateway under abuse, end to end through a real socket: a client that goes away (whole
// answer or stream) ends the backend request within a second; so does a client that half-closes
// in flight; --backend-deadline bounds a request (504, both modes); backend failures reach the
// client labelled by cause; request paths and methods reach the log escaped.
#include <gtest/gtest.h>

#include "hostile_support.h"
#include "raw_backend.h"

namespace chatpeg::server {
namespace {

using namespace std::chrono_literals;
using namespace testing;  // chatpeg::server::testing: harness, fixtures, raw client

std::string post_request(const std::string& body, const std::string& extra_headers = "") {
  return "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
         extra_headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST(GatewayAbuse, AClientThatGoesAwayEndsTheBackendRequestWithinASecond) {
  for (bool stream : {false, true}) {
    SCOPED_TRACE(stream ? "stream" : "whole");
    raw_backend silent(raw_backend::behaviour::stay_silent);
    gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server(), 8,
                      {.url = silent.url(), .connect_timeout = 5s, .read_timeout = 60s});
    raw_client c(h.gw->port(), 5s);
    ASSERT_TRUE(c.send(post_request(chat_body(stream ? R"(,"stream":true)" : ""))));
    for (int i = 0; i < 300 && silent.accepted() == 0; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_EQ(silent.accepted(), 1);
    const auto closed_at = std::chrono::steady_clock::now();
    c.close();
    // Every connection the gateway opened to the backend (a /tokenize lookup, the completion)
    // is closed.
    while (silent.client_closes() < silent.accepted() &&
           std::chrono::steady_clock::now() - closed_at < 5s) {
      std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(silent.client_closes(), silent.accepted());
    EXPECT_LT(std::chrono::steady_clock::now() - closed_at, 1s);
    EXPECT_EQ(h.gw->stats().client_gone, 1u);
    EXPECT_TRUE(healthy(h));
  }
}

// As a reverse proxy reads it, a client that ends its sending side while its request is in
// flight is gone: the request is cancelled and its backend request, if any, closed.
TEST(GatewayAbuse, AHalfClosedClientCancelsItsRequest) {
  raw_backend silent(raw_backend::behaviour::stay_silent);
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server(), 8,
                    {.url = silent.url(), .connect_timeout = 5s, .read_timeout = 60s});
  std::uint64_t requests = 0;
  for (bool stream : {false, true}) {
    SCOPED_TRACE(stream ? "stream" : "whole");
    ++requests;
    raw_client c(h.gw->port(), 10s);
    ASSERT_TRUE(c.send(post_request(chat_body(stream ? R"(,"stream":true)" : ""))));
    c.shutdown_write();
    bool timed_out = false;
    const std::string answer = c.read_all(&timed_out);
    EXPECT_FALSE(timed_out);
    EXPECT_EQ(answer, "");
    EXPECT_EQ(h.gw->stats().client_gone, requests);
  }
  // Whatever reached the backend was closed again.
  for (int i = 0; i < 200 && silent.client_closes() < silent.accepted(); ++i) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(silent.client_closes(), silent.accepted());
  EXPECT_TRUE(healthy(h));
}

TEST(GatewayAbuse, TheBackendDeadlineBoundsARequest) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server(), 8,
                    {.connect_timeout = 5s, .read_timeout = 60s, .deadline = 1s});
  // Silent before its first byte: 504 in both modes.
  h.backend.reply_with(scripted_reply{.chunks = {"late"}, .delay = 3000ms});
  for (const char* extra : {"", R"(,"stream":true)"}) {
    SCOPED_TRACE(extra);
    int status = 0;
    auto v = h.post_json("/v1/chat/completions", chat_body(extra), &status);
    EXPECT_EQ(status, 504) << json::dump(v);
    EXPECT_EQ(v["error"]["code"], "backend_deadline") << json::dump(v);
  }
  // Streaming steadily past the deadline: what was streamed stays, then an error event.
  h.backend.reply_with(
      scripted_reply{.chunks = std::vector<std::string>(30, "tick "), .delay = 100ms});
  auto r = h.stream(chat_body(R"(,"stream":true)"));
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.content.find("tick"), std::string::npos);
  ASSERT_TRUE(r.error.is_object()) << r.raw;
  EXPECT_EQ(r.error["code"], "backend_deadline");
  EXPECT_TRUE(r.saw_done);
}

TEST(GatewayAbuse, BackendFailuresReachTheClientLabelled) {
  const std::pair<raw_backend::behaviour, const char*> cases[] = {
      {raw_backend::behaviour::close_silently, "backend_disconnected"},
      {raw_backend::behaviour::send_garbage, "backend_bad_response"},
  };
  for (const auto& [behaviour, code] : cases) {
    SCOPED_TRACE(code);
    raw_backend rb(behaviour);
    gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server(), 8,
                      {.url = rb.url(), .connect_timeout = 5s, .read_timeout = 60s});
    int status = 0;
    auto v = h.post_json("/v1/chat/completions", chat_body(), &status);
    EXPECT_EQ(status, 502) << json::dump(v);
    EXPECT_EQ(v["error"]["code"], code) << json::dump(v);
  }
}

// Tools past the caps are refused before any work (400 naming the limit and the path); within
// them thousands of tools are prepared (prepare is linear:
// tests/chat/request/prepare_scaling_test.cpp).
TEST(GatewayAbuse, ToolsPastTheCapsAre400NamingTheLimit) {
  server_options so = tight_server();
  so.max_body_bytes = 8u << 20;
  so.request_limits = {.max_tools = 100, .max_schema_depth = 8};
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, so);
  h.backend.reply_with(scripted_reply{.chunks = {"ok"}});
  const auto tools = [](int n, const std::string& parameters) {
    std::string out = R"(,"tools":[)";
    for (int i = 0; i < n; ++i) {
      out += std::string(i ? "," : "") + R"({"type":"function","function":{"name":"t)" +
             std::to_string(i) + R"(","parameters":)" + parameters + "}}";
    }
    return out + "]";
  };
  const std::string flat = R"({"type":"object","properties":{"a":{"type":"string"}}})";
  std::string deep = R"({"type":"string"})";
  for (int i = 0; i < 8; ++i) deep = R"({"type":"object","properties":{"x":)" + deep + "}}";
  struct cap_case {
    const char* name;
    std::string extra;
    int status;
    const char* param;
    const char* limit;
  };
  const cap_case cases[] = {
      {"100 tools", tools(100, flat), 200, "", ""},
      {"101 tools", tools(101, flat), 400, "$.tools", "max_tools"},
      {"2000 tools", tools(2000, flat), 400, "$.tools", "max_tools"},
      {"a schema too deep", tools(1, deep), 400, "$.tools[0].function.parameters",
       "max_schema_depth"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    int status = 0;
    auto v = h.post_json("/v1/chat/completions", chat_body(c.extra), &status);
    EXPECT_EQ(status, c.status) << json::dump(v).substr(0, 300);
    if (c.status == 400) {
      EXPECT_EQ(v["error"]["param"], c.param) << json::dump(v);
      EXPECT_EQ(v["error"]["code"], "limit_exceeded") << json::dump(v);
      EXPECT_NE(v["error"]["message"].get<std::string>().find(c.limit), std::string::npos)
          << json::dump(v);
    }
  }
}

// Paths are logged as sent (percent-encoding kept) and escaped: no line can be forged and no
// control byte reaches a terminal; a request refused before routing logs its own latency.
TEST(GatewayAbuse, TheLogEscapesWhatClientsSend) {
  for (log_format format : {log_format::text, log_format::json}) {
    SCOPED_TRACE(format == log_format::text ? "text" : "json");
    server_options so = tight_server();
    so.log = format;
    gateway_harness h(testing::hermes_template, backend_type::llamacpp, so);
    for (const std::string target : {"/x%0aGET%20/forged%20200", "/y%1b[31mred", "/z\x1b[31mraw"}) {
      raw_client c(h.gw->port(), 5s);
      c.send("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      (void)c.read_all();
    }
    for (int i = 0; i < 200 && h.log_lines().size() < 3; ++i) std::this_thread::sleep_for(5ms);
    const auto lines = h.log_lines();
    ASSERT_GE(lines.size(), 3u);
    for (const auto& l : lines) {
      for (unsigned char ch : l) EXPECT_GE(ch, 0x20) << l;
      EXPECT_EQ(l.find('\x1b'), std::string::npos) << l;
    }
    bool saw_encoded = false;
    for (const auto& l : lines) saw_encoded = saw_encoded || l.find("/x%0aGET%20/forged") != l.npos;
    EXPECT_TRUE(saw_encoded);
  }
}

}  // namespace
}  // namespace chatpeg::server

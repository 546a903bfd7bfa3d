// Hostile clients and backends against the gateway: slow and stalled clients, oversized and
// malformed bodies, invalid UTF-8, a flood of connections, and backends that stall or answer
// garbage. Every case must end with a clean HTTP answer (JSON error) or a closed connection,
// and the server must keep serving. Bounded by counts and the configured timeouts (1 s); no
// timing assertions.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "hostile_support.h"

namespace chatpeg::server {
namespace {

using namespace testing;  // chatpeg::server::testing: harness, fixture, raw client

// ---- slow and stalled clients ----

// 100 clients trickle request heads one byte per 100 ms for 5 s. They cost no worker (the
// loop reads them), so every chat request and every /health in between is answered, each
// within its client's 3 s.
TEST(HostileGateway, AFloodOfTricklingClientsDoesNotBlockOthers) {
  server_options so = tight_server();
  so.request_deadline = std::chrono::seconds(30);
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, so);
  h.backend.reply_with(scripted_reply{.chunks = {"fine"}});
  std::atomic<bool> stop{false};
  std::vector<std::thread> tricklers;
  for (int t = 0; t < 4; ++t) {
    tricklers.emplace_back([&] {
      std::vector<std::unique_ptr<raw_client>> clients;
      for (int i = 0; i < 25; ++i) clients.push_back(std::make_unique<raw_client>(h.gw->port()));
      const std::string line = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ";
      for (std::size_t k = 0; !stop; ++k) {
        for (auto& c : clients) c->send(std::string(1, line[k % line.size()]));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int chats = 0, healths = 0;
  for (int i = 0; i < 15; ++i) {
    const std::string body = chat_body();
    raw_client c(h.gw->port(), std::chrono::seconds(3));
    c.send(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body);
    const std::string answer = c.read_all();
    if (status_of(answer) == 200 && answer.find("fine") != std::string::npos) ++chats;
    raw_client health(h.gw->port(), std::chrono::seconds(3));
    health.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    if (status_of(health.read_all()) == 200) ++healths;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  stop = true;
  for (auto& t : tricklers) t.join();
  EXPECT_EQ(chats, 15);
  EXPECT_EQ(healths, 15);
  EXPECT_GE(h.gw->stats().peak_open_connections, 100u);
  EXPECT_LE(h.gw->stats().peak_busy_workers, so.threads);
}

TEST(HostileGateway, StalledClientIsDisconnectedAtItsDeadline) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server());
  for (const char* partial :
       {"", "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n",
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"mess"}) {
    SCOPED_TRACE(partial);
    raw_client c(h.gw->port(), std::chrono::seconds(10));
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send(partial) || std::string_view(partial).empty());
    bool timed_out = false;
    const std::string answer = c.read_all(&timed_out);
    // The server gave up on us (closed, possibly after a 4xx), long before our own 10 s.
    EXPECT_FALSE(timed_out) << "the server kept a stalled connection open";
    if (!answer.empty()) {
      EXPECT_GE(status_of(answer), 400) << answer;
    }
  }
  EXPECT_TRUE(healthy(h));
}

// ---- bodies ----

TEST(HostileGateway, OversizedBodyIs413WithJsonError) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server());
  const std::string big = chat_body(R"(,"pad":")" + std::string(100u << 10, 'x') + "\"");
  int status = 0;
  auto v = h.post_json("/v1/chat/completions", big, &status);
  EXPECT_EQ(status, 413);
  ASSERT_TRUE(v.is_object()) << json::dump(v);
  EXPECT_EQ(v["error"]["code"], "body_too_large");
  // The same without a Content-Length (chunked upload).
  auto c = h.client();
  std::size_t sent = 0;
  auto r = c.Post(
      "/v1/chat/completions",
      [&](std::size_t, httplib::DataSink& sink) {
        if (sent >= big.size()) {
          sink.done();
          return true;
        }
        const std::size_t n = std::min<std::size_t>(8192, big.size() - sent);
        sink.write(big.data() + sent, n);
        sent += n;
        return true;
      },
      "application/json");
  if (r) {  // httplib may also just close the connection on an oversized chunked body
    EXPECT_EQ(r->status, 413);
  }
  EXPECT_TRUE(healthy(h));
}

struct bad_body {
  const char* name;
  std::string body;
  const char* where;  // expected in the message ("byte" offset) or the param (JSON path)
};

TEST(HostileGateway, MalformedJsonIs400WithWhere) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server());
  const std::vector<bad_body> cases = {
      {"truncated", R"({"messages": [{"role": "user", "content": "hi"})", "byte"},
      {"trailing_garbage", chat_body() + "}}", "byte"},
      {"not_json", "hello", "byte"},
      {"empty", "", "byte"},
      {"deeply_nested", std::string(30000, '[') + std::string(30000, ']'), ""},
      {"wrong_type", chat_body(R"(,"stream":"yes")"), "$.stream"},
      {"wrong_message_type", R"({"messages":[{"role":"user","content":5}]})", "$.messages[0]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    int status = 0;
    auto v = h.post_json("/v1/chat/completions", c.body, &status);
    EXPECT_EQ(status, 400) << json::dump(v);
    ASSERT_TRUE(v.is_object() && v.contains("error")) << json::dump(v);
    const std::string message = v["error"]["message"];
    const std::string param = v["error"]["param"].is_string() ? v["error"]["param"] : "";
    EXPECT_TRUE(message.find(c.where) != std::string::npos ||
                param.find(c.where) != std::string::npos)
        << json::dump(v);
  }
  EXPECT_TRUE(healthy(h));
}

TEST(HostileGateway, InvalidUtf8InMessagesIs400) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server());
  const std::vector<std::string> contents = {
      "bad \xff byte",          "cut \xe2\x82",          "overlong \xc0\xaf",
      "surrogate \xed\xa0\x80", R"(lone \ud800 escape)", std::string("nul \0 inside", 13)};
  for (const auto& content : contents) {
    SCOPED_TRACE(content);
    const std::string body = R"({"messages":[{"role":"user","content":")" + content + R"("}]})";
    int status = 0;
    auto v = h.post_json("/v1/chat/completions", body, &status);
    EXPECT_EQ(status, 400) << json::dump(v);
    ASSERT_TRUE(v.is_object() && v.contains("error")) << json::dump(v);
  }
  EXPECT_TRUE(healthy(h));
}

// ---- a flood of connections ----

TEST(HostileGateway, ThousandsOfConnectionsAreServedOrRefusedCleanly) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server());
  // Each served request holds a worker ~50 ms, so the burst overflows the queue.
  h.backend.reply_with(scripted_reply{.chunks = {"ok"}, .delay = std::chrono::milliseconds(50)});
  // Both ends of every connection live in this process: raise the descriptor limit as far
  // as allowed and scale down where it is low.
  rlimit fds{};
  ::getrlimit(RLIMIT_NOFILE, &fds);
  if (fds.rlim_cur < 8192 && fds.rlim_max > fds.rlim_cur) {
    fds.rlim_cur = std::min<rlim_t>(fds.rlim_max, 8192);
    ::setrlimit(RLIMIT_NOFILE, &fds);
  }
  const int n = static_cast<int>(std::min<rlim_t>(1500, (fds.rlim_cur - 256) / 2));
  ASSERT_GE(n, 100) << "too few file descriptors for this test";
  std::vector<std::unique_ptr<raw_client>> clients;
  clients.reserve(n);
  const std::string body = chat_body();
  const std::string request =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: application/json\r\nConnection: close\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  for (int i = 0; i < n; ++i) {
    clients.push_back(std::make_unique<raw_client>(h.gw->port(), std::chrono::seconds(60)));
  }
  for (auto& c : clients) c->send(request);
  int served = 0, refused = 0, other = 0;
  for (auto& c : clients) {
    const std::string answer = c->read_all();
    const int status = status_of(answer);
    const json::value v = body_of(answer);
    if (status == 200 && v["choices"][0]["message"]["content"] == "ok") {
      ++served;
    } else if (status == 503 && v["error"]["code"] == "overloaded") {
      ++refused;
    } else {
      ++other;
      if (other < 5) ADD_FAILURE() << "unexpected answer: " << answer.substr(0, 300);
    }
    c->close();
  }
  std::cout << "flood: " << served << " served, " << refused << " refused (503)\n";
  EXPECT_EQ(served + refused, n);
  // The bounds, by the server's own counters: at most max_queued_requests waited for a
  // worker, at most `threads` were busy, and every refusal was a counted 503 (a full queue,
  // or a connection past the per-client limit).
  const auto stats = h.gw->stats();
  const auto so = tight_server();
  EXPECT_LE(stats.peak_queued, so.max_queued_requests);
  EXPECT_LE(stats.peak_busy_workers, so.threads);
  EXPECT_EQ(stats.busy_responses + stats.rejected_connections, static_cast<std::uint64_t>(refused));
  EXPECT_GE(stats.connections, static_cast<std::uint64_t>(n));
  EXPECT_GE(served, 4);
  EXPECT_GT(refused, 0);
  EXPECT_TRUE(healthy(h));

  // Idle connections (opened, never written) are dropped after the keep-alive wait, or freed
  // when their clients go away; afterwards the server serves as before.
  std::vector<std::unique_ptr<raw_client>> idle;
  for (int i = 0; i < n; ++i) {
    idle.push_back(std::make_unique<raw_client>(h.gw->port()));
  }
  idle.clear();
  // The server learns of the closes from its event loop: wait (bounded) until it has freed them.
  const auto freed_by = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (h.gw->stats().open_connections > 0 && std::chrono::steady_clock::now() < freed_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(h.gw->stats().open_connections, 0u);
  int status = 0;
  auto v = h.post_json("/v1/chat/completions", chat_body(), &status);
  EXPECT_EQ(status, 200) << json::dump(v);
}

// ---- backends that stall or answer garbage ----

TEST(HostileGateway, StalledBackendIs504) {
  server_options so = tight_server();
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, so);
  auto tmpl = chat::chat_template::create(testing::hermes_template,
                                          {.special_tokens = {{"eos_token", "<|im_end|>"}}});
  ASSERT_TRUE(tmpl);
  // A second gateway in front of the same fixture with a 1 s backend read timeout.
  so.host = "127.0.0.1";
  so.port = 0;
  auto g = gateway::create(*tmpl, {.server = so,
                                   .backend = {.url = h.backend.url(),
                                               .connect_timeout = std::chrono::seconds(2),
                                               .read_timeout = std::chrono::seconds(1)}});
  ASSERT_TRUE(g);
  auto& gw = **g;
  ASSERT_TRUE(gw.bind());
  std::thread t([&] { (void)gw.listen(); });
  httplib::Client c("127.0.0.1", gw.port());
  c.set_read_timeout(30, 0);
  for (int i = 0; i < 200 && !c.Get("/health"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Silent before the first byte of the answer: 504 for both modes.
  h.backend.reply_with(
      scripted_reply{.chunks = {"late"}, .delay = std::chrono::milliseconds(2500)});
  for (const char* extra : {"", R"(,"stream":true)"}) {
    SCOPED_TRACE(extra);
    auto r = c.Post("/v1/chat/completions", chat_body(extra), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 504) << r->body;
    auto v = json::parse(r->body);
    ASSERT_TRUE(v) << r->body;
    EXPECT_EQ((*v)["error"]["code"], "backend_timeout");
  }
  // Silent in the middle of a stream: what was streamed stays, then an error event and
  // [DONE] (no hang).
  h.backend.reply_with(scripted_reply{.chunks = {"partial ", "answer"},
                                      .stall_after = 1,
                                      .stall = std::chrono::milliseconds(2500)});
  auto r = c.Post("/v1/chat/completions", chat_body(R"(,"stream":true)"), "application/json");
  ASSERT_TRUE(r);
  auto s = testing::read_sse(r->body, r->status);
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.content, "partial ");
  ASSERT_TRUE(s.error.is_object()) << s.raw;
  EXPECT_EQ(s.error["code"], "backend_timeout");
  EXPECT_TRUE(s.saw_done && s.done_last) << s.raw;
  gw.stop();
  t.join();
}

struct garbage_case {
  const char* name;
  scripted_reply reply;
  bool stream;
  const char* message_part;
};

TEST(HostileGateway, GarbageFromTheBackendIs502WithAClearError) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server());
  const std::vector<garbage_case> cases = {
      {"non_json_body", {.raw_body = "<html>oops</html>"}, false, "invalid JSON"},
      {"json_without_content", {.raw_body = R"({"foo": 1})"}, false, "no 'content'"},
      {"json_body_for_a_stream",
       {.raw_body = R"({"content": "x", "stop": true})"},
       true,
       "Content-Type 'application/json'"},
      {"html_for_a_stream",
       {.raw_sse = "<html>oops</html>", .content_type = "text/html"},
       true,
       "Content-Type 'text/html'"},
      {"truncated_sse",
       {.raw_sse = "data: {\"content\": \"a\", \"stop\": false}\n\ndata: {\"content\": \"b"},
       true,
       "invalid JSON"},
      {"sse_without_final_event",
       {.raw_sse = "data: {\"content\": \"a\", \"stop\": false}\n\n"},
       true,
       "without a final event"},
      {"sse_of_non_json", {.raw_sse = "data: hello\n\n"}, true, "invalid JSON"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    h.backend.reply_with(c.reply);
    auto r = h.client().Post("/v1/chat/completions", chat_body(c.stream ? R"(,"stream":true)" : ""),
                             "application/json");
    ASSERT_TRUE(r);
    std::string message;
    if (r->status == 200) {  // failed after streaming began: an error event
      auto s = testing::read_sse(r->body, r->status);
      ASSERT_TRUE(s.error.is_object()) << r->body;
      EXPECT_TRUE(s.saw_done);
      message = s.error["message"];
    } else {
      EXPECT_EQ(r->status, 502) << r->body;
      auto v = json::parse(r->body);
      ASSERT_TRUE(v) << r->body;
      EXPECT_EQ((*v)["error"]["type"], "backend_error");
      message = (*v)["error"]["message"];
    }
    EXPECT_NE(message.find(c.message_part), std::string::npos) << message;
  }
  EXPECT_TRUE(healthy(h));
}

}  // namespace
}  // namespace chatpeg::server

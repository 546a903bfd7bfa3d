// The gateway's request-level limits (http::server) and the backend answer bound
// (backend_options::max_response_bytes) under hostile peers: a client trickling bytes is cut
// at the request deadline while another client is served,
// oversized heads and endless chunked bodies stop at their byte budgets, and backends that
// stream without end, without newlines, garbage mid-stream or drop the connection end in an
// error event. Bounds are asserted through gateway::stats() and the answers; the harness only
// caps how long it waits (no timing assertions).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hostile_support.h"

namespace chatpeg::server {
namespace {

using namespace std::chrono_literals;
using namespace testing;  // chatpeg::server::testing: harness, fixture, raw client

// One worker: a client that held it would block everyone else; 3 s request deadline.
server_options one_worker() {
  server_options so = tight_server();
  so.threads = 1;
  so.request_deadline = 3s;
  return so;
}

TEST(HostileLimits, CreateRejectsLimitsThatCannotWork) {
  auto tmpl = chat::chat_template::create(testing::hermes_template, {});
  ASSERT_TRUE(tmpl);
  const std::vector<std::pair<const char*, server_options>> cases = {
      {"no body", {.max_body_bytes = 0}},
      {"tiny head", {.max_head_bytes = 100}},
      {"no deadline", {.request_deadline = 0s}},
      {"no write timeout", {.client_write_timeout = 0s}},
      {"no write budget", {.client_write_budget = 0s}},
      {"tiny request line", {.max_request_line = 100}},
      {"no keep-alive wait", {.keep_alive_timeout = 0s}},
  };
  for (const auto& [name, so] : cases) {
    SCOPED_TRACE(name);
    auto g = gateway::create(*tmpl, {.server = so});
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().code, base::errc::invalid_argument);
  }
}

struct trickle_case {
  const char* name;
  std::string prefix;  // sent at once
};

TEST(HostileLimits, TrickleIsCutAtTheDeadlineWhileAnotherIsServed) {
  const std::vector<trickle_case> cases = {
      {"head", "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: "},
      {"body",
       "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
       "Content-Length: 1000\r\n\r\n{\"messages\": "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const server_options so = one_worker();
    gateway_harness h(testing::hermes_template, backend_type::llamacpp, so);
    h.backend.reply_with(scripted_reply{.chunks = {"served"}});
    wait_idle(h);
    const auto before = h.gw->stats();

    raw_client slow(h.gw->port(), 30s);
    ASSERT_TRUE(slow.connected());
    ASSERT_TRUE(slow.send(c.prefix));
    std::this_thread::sleep_for(200ms);  // the slow client is being read
    std::atomic<int> other_status{0};
    std::thread other([&] {
      int status = 0;
      auto v = h.post_json("/v1/chat/completions", chat_body(), &status);
      if (v.is_object() && v["choices"][0]["message"]["content"] == "served") {
        other_status = status;
      }
    });
    // One byte per 700 ms: never silent for long. Without a deadline this client would be
    // read for all 60 bytes; it never holds the worker, so the other client is served.
    bool cut = false;
    for (int sent = 0; sent < 60 && !cut; ++sent) {
      cut = slow.readable_now() || !slow.send(" ");
      if (!cut) std::this_thread::sleep_for(700ms);
    }
    const std::string answer = slow.read_all();
    other.join();
    EXPECT_TRUE(cut) << "the trickling client kept its worker";
    EXPECT_EQ(status_of(answer), 408) << answer;
    EXPECT_EQ(body_of(answer)["error"]["code"], "request_timeout") << answer;
    EXPECT_EQ(other_status.load(), 200);
    const auto after = h.gw->stats();
    EXPECT_EQ(after.deadline_exceeded - before.deadline_exceeded, 1u);
    EXPECT_LE(after.peak_busy_workers, so.threads);
  }
}

TEST(HostileLimits, OversizedHeadIs431) {
  server_options so = tight_server();
  so.max_head_bytes = 4096;
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, so);
  wait_idle(h);
  std::string head = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 100; ++i) {
    head += "X-Pad-" + std::to_string(i) + ": " + std::string(90, 'p') + "\r\n";
  }
  raw_client c(h.gw->port());
  ASSERT_TRUE(c.send(head + "\r\n"));
  const std::string answer = c.read_all();
  EXPECT_EQ(status_of(answer), 431) << answer.substr(0, 300);
  EXPECT_EQ(body_of(answer)["error"]["code"], "head_too_large") << answer.substr(0, 300);
  const auto stats = h.gw->stats();
  EXPECT_EQ(stats.too_large, 1u);
  // The head limit, plus at most the rest of the read that crossed it (16 KiB).
  EXPECT_LE(stats.peak_request_bytes, so.max_head_bytes + (16u << 10));
  EXPECT_TRUE(healthy(h));
}

// Chunked bodies are read by the server's loop with the same budget for every route (an
// unknown one, a GET-only one, a chat route): 413 once the decoded body passes max_body_bytes.
TEST(HostileLimits, EndlessChunkedBodiesStopAtTheBodyBudget) {
  const server_options so = tight_server();
  // The head, the body, and the chunk framing around it (8 bytes per 4 KiB chunk).
  const std::size_t budget = so.max_head_bytes + so.max_body_bytes + (so.max_body_bytes >> 8);
  for (const char* request_line : {"POST /nowhere HTTP/1.1", "PUT /v1/models HTTP/1.1",
                                   "POST /v1/chat/completions HTTP/1.1"}) {
    SCOPED_TRACE(request_line);
    gateway_harness h(testing::hermes_template, backend_type::llamacpp, so);
    wait_idle(h);
    raw_client c(h.gw->port());
    ASSERT_TRUE(
        c.send(std::string(request_line) + "\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
    const std::string chunk = "1000\r\n" + std::string(0x1000, 'z') + "\r\n";
    std::size_t sent = 0;
    while (sent < (8u << 20) && !c.readable_now() && c.send(chunk)) sent += chunk.size();
    const std::string answer = c.read_all();
    EXPECT_LT(sent, 8u << 20) << "the server read an 8 MiB body";
    EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 300);
    EXPECT_EQ(body_of(answer)["error"]["code"], "body_too_large") << answer.substr(0, 300);
    const auto stats = h.gw->stats();
    EXPECT_EQ(stats.too_large, 1u);
    EXPECT_LE(stats.peak_request_bytes, budget);
    EXPECT_TRUE(healthy(h));
  }
}

// The connection loop keeps bytes read past one request for the next: pipelined requests on a
// keep-alive connection are all answered, in order.
TEST(HostileLimits, PipelinedRequestsAreAllAnswered) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server());
  h.backend.reply_with(scripted_reply{.chunks = {"piped"}});
  const std::string body = chat_body();
  const std::string chat =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  raw_client c(h.gw->port());
  ASSERT_TRUE(c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + chat +
                     "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string answer = c.read_all();
  std::vector<std::size_t> starts;
  for (auto at = answer.find("HTTP/1.1 "); at != std::string::npos;
       at = answer.find("HTTP/1.1 ", at + 1)) {
    starts.push_back(at);
  }
  ASSERT_EQ(starts.size(), 3u) << answer;
  for (std::size_t at : starts) EXPECT_EQ(answer.substr(at, 12), "HTTP/1.1 200");
  EXPECT_LT(answer.find("\"pipeline\""), answer.find("piped"));
  EXPECT_LT(answer.find("piped"), answer.find("\"object\":\"list\""));
}

// A client that asks for a stream and never reads it (a 4 KB receive window): the backend
// reader waits once 1 MiB is queued for the client (backpressure bounds the memory, not
// max_response_bytes, 1 GiB here), the stalled writes end the stream and the backend read
// (the fixture sees its reader go away); the server keeps serving.
// A client that stops reading its stream: the backend reader waits once the stream holds
// stream_buffer_bytes (its text and per-piece overhead: one-byte pieces cost far more than one
// byte each), the response is given up within the write limits and the backend left.
TEST(HostileLimits, ClientThatStopsReadingAStreamCancelsTheBackend) {
  for (std::size_t text : {std::size_t{1024}, std::size_t{1}}) {
    SCOPED_TRACE(text);
    gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server(), 8,
                      {.connect_timeout = 5s, .read_timeout = 20s, .max_response_bytes = 1u << 30});
    const std::string event = "data: {\"content\": \"" + std::string(text, 'y') + "\"}\n\n";
    h.backend.reply_with(scripted_reply{.endless = event});
    const std::string body = chat_body(R"(,"stream":true)");
    raw_client c(h.gw->port(), 10s, 4096);
    ASSERT_TRUE(
        c.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
               "Content-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body));
    for (int i = 0; i < 3000 && h.backend.disconnects() == 0; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(h.backend.disconnects(), 1);
    const auto stats = h.gw->stats();
    EXPECT_LE(stats.peak_stream_queued_bytes, stream_buffer_bytes + text + 256);
    EXPECT_EQ(stats.write_timeouts, 1u);
    EXPECT_TRUE(healthy(h));
  }
}

struct backend_case {
  const char* name;
  scripted_reply reply;
  bool stream;
  const char* streamed;      // content delivered before the error ("" when a 502)
  const char* message_part;  // in the error
};

TEST(HostileLimits, EndlessGarbledOrDroppedBackendStreamsEndInAnError) {
  constexpr std::size_t limit = 64u << 10;
  const std::string event = "data: {\"content\": \"" + std::string(1024, 'x') + "\"}\n\n";
  const std::vector<backend_case> cases = {
      {"endless_line_without_newline", {.endless = std::string(4096, 'x')}, true, "", "byte limit"},
      {"endless_events", {.chunks = {"hello "}, .endless = event}, true, "hello ", "byte limit"},
      {"huge_unstreamed_body",
       {.raw_body = "{\"content\": \"" + std::string(1u << 20, 'x') + "\"}"},
       false,
       "",
       "byte limit"},
      {"garbage_mid_stream",
       {.raw_sse = "data: {\"content\": \"a\", \"stop\": false}\n\ndata: {garbage\n\n"
                   "data: {\"content\": \"b\", \"stop\": false}\n\n"},
       true,
       "a",
       "invalid JSON"},
      {"connection_dropped_mid_stream",
       {.chunks = {"partial"}, .drop_mid_stream = true},
       true,
       "partial",
       "mid-answer"},
  };
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, tight_server(), 8,
                    {.connect_timeout = 5s, .read_timeout = 20s, .max_response_bytes = limit});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    h.backend.reply_with(c.reply);
    const int disconnects = h.backend.disconnects();
    auto r = h.client().Post("/v1/chat/completions", chat_body(c.stream ? R"(,"stream":true)" : ""),
                             "application/json");
    ASSERT_TRUE(r);
    std::string message;
    if (r->status == 200) {
      auto s = testing::read_sse(r->body, r->status);
      // What came before the failure, and never more text than the limit.
      EXPECT_EQ(s.content.substr(0, std::strlen(c.streamed)), c.streamed);
      EXPECT_LE(s.content.size(), limit);
      if (c.reply.endless.empty()) {
        EXPECT_EQ(s.content, c.streamed);
      }
      ASSERT_TRUE(s.error.is_object()) << r->body.substr(0, 300);
      EXPECT_TRUE(s.saw_done && s.done_last);
      message = s.error["message"];
    } else {
      EXPECT_STREQ(c.streamed, "");
      EXPECT_EQ(r->status, 502) << r->body.substr(0, 300);
      auto v = json::parse(r->body);
      ASSERT_TRUE(v) << r->body.substr(0, 300);
      message = (*v)["error"]["message"];
    }
    EXPECT_NE(message.find(c.message_part), std::string::npos) << message;
    if (!c.reply.endless.empty()) {  // the gateway stopped reading the endless stream
      for (int i = 0; i < 500 && h.backend.disconnects() == disconnects; ++i) {
        std::this_thread::sleep_for(10ms);
      }
      EXPECT_EQ(h.backend.disconnects(), disconnects + 1);
    }
  }
  EXPECT_TRUE(healthy(h));
}

}  // namespace
}  // namespace chatpeg::server

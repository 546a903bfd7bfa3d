// http::server with raw sockets: keep-alive and its honest headers, HEAD, 100-continue,
// pipelining, framing errors answered per RFC 9112 and followed by a close, clients that go
// away (close, reset or half-close in flight) cancelling their request, a flood of trickling
// clients that costs no worker, a full queue (503), the per-client connection limit, the inline
// route while every worker is busy, a client that stops reading its stream given up within the
// write limits, the request deadline, the idle timeout, accepting paused while descriptors run
// out, and the soft descriptor limit raised to the hard one. Waits are bounded by the clients'
// own timeouts; the one time bound asserted is the 1 s a disconnect may take to cancel.
#include "chatpeg/http/server.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <any>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "support/raw_client.h"

namespace chatpeg::http {
namespace {

using chatpeg::testing::raw_client;
using chatpeg::testing::status_of;
using namespace std::chrono_literals;

// A server on a free port, run on a thread for the test's lifetime.
class test_server {
 public:
  test_server(server_options o, server::handler h, server::inline_handler inl = nullptr) {
    o.host = "127.0.0.1";
    o.port = 0;
    if (!inl) {
      inl = [](const request& r, std::any&) -> std::optional<response> {
        if (r.path != "/health") return std::nullopt;
        return response{.status = 200, .headers = {{"Content-Type", "text/plain"}}, .body = "ok"};
      };
    }
    auto s = server::create(
        std::move(o), std::move(h), std::move(inl),
        [](int status, std::string_view code, std::string_view, const request*, std::any&) {
          return response{.status = status,
                          .headers = {{"Content-Type", "application/json"}},
                          .body = "{\"error\":\"" + std::string(code) + "\"}"};
        },
        [this](const completed& c) {
          std::lock_guard lock(mutex_);
          log_.push_back(c);
        });
    EXPECT_TRUE(s) << (s ? "" : s.error().to_string());
    server_ = std::move(*s);
    EXPECT_TRUE(server_->bind());
    thread_ = std::thread([this] { (void)server_->run(); });
  }
  ~test_server() {
    server_->stop();
    thread_.join();
  }
  int port() const { return server_->port(); }
  server_stats stats() const { return server_->stats(); }
  std::vector<completed> log() const {
    std::lock_guard lock(mutex_);
    return log_;
  }

 private:
  std::unique_ptr<server> server_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<completed> log_;
};

// Echoes the method, path and body.
void echo(exchange& ex) {
  const auto& r = ex.req();
  ex.respond({.status = 200,
              .headers = {{"Content-Type", "text/plain"}},
              .body = r.method + " " + r.path + " " + r.body});
}

std::size_t count(const std::string& text, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Reads one response of a keep-alive connection (head + Content-Length body).
std::string read_response(raw_client& c) {
  std::string out;
  for (int i = 0; i < 100; ++i) {
    out += c.read_some(100ms);
    const auto head_end = out.find("\r\n\r\n");
    if (head_end == std::string::npos) continue;
    const auto cl = out.find("Content-Length: ");
    if (cl == std::string::npos || cl > head_end) return out;
    const std::size_t length = std::stoul(out.substr(cl + 16));
    if (out.size() >= head_end + 4 + length) return out;
  }
  return out;
}

TEST(HttpServer, KeepAliveWithHonestHeaders) {
  test_server s({.keep_alive_max_requests = 3}, echo);
  raw_client c(s.port(), 5s);
  ASSERT_TRUE(c.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string first = read_response(c);
  EXPECT_EQ(status_of(first), 200) << first;
  EXPECT_EQ(count(first, "Connection:"), 1u) << first;
  EXPECT_EQ(count(first, "Date:"), 1u) << first;
  EXPECT_NE(first.find("Keep-Alive: timeout=5, max=2\r\n"), std::string::npos) << first;
  EXPECT_NE(first.find("\r\n\r\nGET /a "), std::string::npos) << first;
  ASSERT_TRUE(c.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_NE(read_response(c).find("max=1\r\n"), std::string::npos);
  // The last request the connection takes says so, and the server closes.
  ASSERT_TRUE(c.send("GET /c HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string last = c.read_all();
  EXPECT_NE(last.find("Connection: close\r\n"), std::string::npos) << last;
  EXPECT_EQ(count(last, "Connection:"), 1u) << last;
  EXPECT_EQ(last.find("Keep-Alive:"), std::string::npos) << last;
}

TEST(HttpServer, HeadAnswersWithoutABody) {
  test_server s({}, echo);
  raw_client c(s.port(), 5s);
  ASSERT_TRUE(c.send("HEAD /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string r = c.read_all();
  EXPECT_EQ(status_of(r), 200);
  EXPECT_NE(r.find("Content-Length: 8\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.find("\r\n\r\n") + 4), "");
}

// HTTP/1.0 knows no chunked coding: a stream to such a client ends with the connection.
TEST(HttpServer, AStreamToAnHttp10ClientIsCloseDelimited) {
  test_server s({}, [](exchange& ex) {
    auto& w = ex.stream();
    w.start(200, {{"Content-Type", "text/plain"}});
    w.write("one ");
    w.write("two");
    w.finish();
  });
  for (const char* version : {"HTTP/1.0", "HTTP/1.1"}) {
    SCOPED_TRACE(version);
    raw_client c(s.port(), 5s);
    ASSERT_TRUE(
        c.send(std::string("GET /s ") + version + "\r\nHost: x\r\nConnection: close\r\n\r\n"));
    const std::string r = c.read_all();
    EXPECT_EQ(status_of(r), 200) << r;
    const std::string body = r.substr(r.find("\r\n\r\n") + 4);
    if (std::string_view(version) == "HTTP/1.0") {
      EXPECT_EQ(r.find("Transfer-Encoding"), std::string::npos) << r;
      EXPECT_EQ(body, "one two");
    } else {
      EXPECT_NE(r.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << r;
      EXPECT_EQ(body, "4\r\none \r\n3\r\ntwo\r\n0\r\n\r\n");
    }
  }
}

TEST(HttpServer, ExpectContinueGetsAnInterimAnswerFirst) {
  test_server s({}, echo);
  raw_client c(s.port(), 5s);
  ASSERT_TRUE(
      c.send("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n"
             "Connection: close\r\n\r\n"));
  EXPECT_EQ(c.read_some(2s), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(c.send("body"));
  const std::string r = c.read_all();
  EXPECT_EQ(status_of(r), 200) << r;
  EXPECT_NE(r.find("POST /e body"), std::string::npos) << r;
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  test_server s({}, echo);
  raw_client c(s.port(), 5s);
  ASSERT_TRUE(
      c.send("POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\noneGET /health "
             "HTTP/1.1\r\nHost: x\r\n\r\nPOST /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
             "chunked\r\nConnection: close\r\n\r\n5\r\nthree\r\n0\r\nX-Trailer: t\r\n\r\n"));
  const std::string r = c.read_all();
  EXPECT_EQ(count(r, "HTTP/1.1 200 OK"), 3u) << r;
  const auto one = r.find("POST /1 one");
  const auto ok = r.find("\r\n\r\nok");
  const auto three = r.find("POST /3 three");
  EXPECT_TRUE(one < ok && ok < three && three != std::string::npos) << r;
}

struct framing_case {
  const char* name;
  std::string request;
  int status;
};

// Each answered at once (not after a deadline) and followed by a close.
TEST(HttpServer, FramingErrorsAreAnsweredThenClosed) {
  test_server s(
      {.limits = {.max_request_line = 1024, .max_head_bytes = 4096}, .request_deadline = 30s},
      echo);
  std::string big_head = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 60; ++i) big_head += "X-Pad: " + std::string(90, 'p') + "\r\n";
  const std::vector<framing_case> cases = {
      {"long request line", "GET /" + std::string(2000, 'a') + " HTTP/1.1\r\n", 414},
      {"long request line, unfinished", "GET /" + std::string(2000, 'a'), 414},
      {"large head", big_head, 431},
      {"POST without a length", "POST /x HTTP/1.1\r\nHost: x\r\n\r\n", 411},
      {"length and chunked",
       "POST /x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: "
       "chunked\r\n\r\n",
       400},
      {"garbage", std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 tls hello\r\n\r\n", 23),
       400},
      {"garbage without a line end",
       std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), 400},
      {"HTTP/2 version", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
      {"unknown coding", "POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    raw_client client(s.port(), 5s);
    ASSERT_TRUE(client.send(c.request));
    bool timed_out = false;
    const std::string r = client.read_all(&timed_out);
    EXPECT_FALSE(timed_out) << "no answer, or the connection stayed open";
    EXPECT_EQ(status_of(r), c.status) << r.substr(0, 200);
    EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos) << r.substr(0, 200);
  }
  EXPECT_GE(s.stats().framing_errors, cases.size());
}

// End of input while a request is in flight means the client went away, as a reverse proxy
// reads it: the request is cancelled (the loop sends nothing on its own, no probe byte).
TEST(HttpServer, AHalfClosedClientCancelsItsRequest) {
  std::atomic<int> cancelled{0};
  test_server s({}, [&](exchange& ex) {
    std::this_thread::sleep_for(300ms);  // the client's end of input arrives meanwhile
    if (ex.cancel().cancelled()) {
      ++cancelled;
      return;  // nothing answered: nobody waits for it
    }
    ex.respond({.status = 200, .body = "done"});
  });
  int requests = 0;
  for (const char* request : {"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n",
                              "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"}) {
    SCOPED_TRACE(request);
    ++requests;
    raw_client c(s.port(), 5s);
    ASSERT_TRUE(c.send(request));
    c.shutdown_write();
    bool timed_out = false;
    const std::string r = c.read_all(&timed_out);
    EXPECT_FALSE(timed_out);
    EXPECT_EQ(r, "");  // neither an answer nor a 500 for the handler that gave up
    EXPECT_EQ(cancelled.load(), requests);
    EXPECT_EQ(s.stats().client_gone, static_cast<std::uint64_t>(requests));
  }
}

// A handler that waits for its request to be cancelled; when was it?
struct cancel_probe {
  std::mutex mutex;
  std::condition_variable cv;
  bool started = false;
  std::optional<std::chrono::steady_clock::time_point> cancelled_at;

  void wait_for_cancel(exchange& ex, bool stream) {
    if (stream) {
      ex.stream().start(200, {{"Content-Type", "text/event-stream"}});
      ex.stream().write("data: first\n\n");
    }
    {
      std::lock_guard lock(mutex);
      started = true;
    }
    cv.notify_all();
    base::cancel_callback on(&ex.cancel(), [this] {
      std::lock_guard lock(mutex);
      cancelled_at = std::chrono::steady_clock::now();
      cv.notify_all();
    });
    std::unique_lock lock(mutex);
    cv.wait_for(lock, 5s, [&] { return cancelled_at.has_value(); });
  }
};

TEST(HttpServer, AClientThatGoesAwayCancelsItsRequestWithinASecond) {
  for (bool stream : {false, true}) {
    SCOPED_TRACE(stream ? "streamed" : "whole");
    cancel_probe probe;
    test_server s({}, [&](exchange& ex) { probe.wait_for_cancel(ex, stream); });
    raw_client c(s.port(), 5s);
    ASSERT_TRUE(c.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n"));
    {
      std::unique_lock lock(probe.mutex);
      ASSERT_TRUE(probe.cv.wait_for(lock, 5s, [&] { return probe.started; }));
    }
    if (stream) {
      EXPECT_NE(c.read_some(1s).find("data: first"), std::string::npos);
    }
    const auto closed_at = std::chrono::steady_clock::now();
    c.close();
    std::unique_lock lock(probe.mutex);
    ASSERT_TRUE(probe.cv.wait_for(lock, 5s, [&] { return probe.cancelled_at.has_value(); }));
    EXPECT_LT(*probe.cancelled_at - closed_at, 1s);
    lock.unlock();
    for (int i = 0; i < 100 && s.stats().client_gone == 0; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(s.stats().client_gone, 1u);
  }
}

// 100 clients trickle request heads for 3 s; they cost no worker, so ordinary requests (and
// the inline /health) are all answered meanwhile by the 2 workers.
TEST(HttpServer, AFloodOfTricklingClientsDoesNotDelayOthers) {
  test_server s({.workers = 2, .request_deadline = 30s}, echo);
  std::atomic<bool> stop{false};
  std::vector<std::thread> tricklers;
  for (int t = 0; t < 4; ++t) {
    tricklers.emplace_back([&] {
      std::vector<std::unique_ptr<raw_client>> clients;
      for (int i = 0; i < 25; ++i) clients.push_back(std::make_unique<raw_client>(s.port(), 5s));
      const std::string line = "POST /slow HTTP/1.1\r\nHost: x\r\nX-Slow: ";
      for (std::size_t k = 0; !stop; ++k) {
        for (auto& c : clients) c->send(std::string(1, line[k % line.size()]));
        std::this_thread::sleep_for(100ms);
      }
    });
  }
  std::this_thread::sleep_for(500ms);
  int answered = 0;
  for (int i = 0; i < 20; ++i) {
    raw_client c(s.port(), 2s);  // each must be answered within 2 s
    c.send(i % 2 ? "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                 : "GET /work HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    bool timed_out = false;
    if (status_of(c.read_all(&timed_out)) == 200 && !timed_out) ++answered;
    std::this_thread::sleep_for(100ms);
  }
  stop = true;
  for (auto& t : tricklers) t.join();
  EXPECT_EQ(answered, 20);
  const auto st = s.stats();
  EXPECT_GE(st.peak_open_connections, 100u);
  EXPECT_LE(st.peak_busy_workers, 2u);
}

TEST(HttpServer, AFullQueueIsAnswered503) {
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> started{0};
  test_server s({.workers = 1, .max_queued = 1}, [&](exchange& ex) {
    ++started;
    std::unique_lock lock(m);
    cv.wait_for(lock, 5s, [&] { return release; });
    ex.respond({.status = 200, .body = "served"});
  });
  raw_client first(s.port(), 5s), second(s.port(), 5s), third(s.port(), 5s);
  const std::string request = "GET /w HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  first.send(request);
  for (int i = 0; i < 200 && started == 0; ++i) std::this_thread::sleep_for(5ms);
  second.send(request);  // waits in the queue
  std::this_thread::sleep_for(100ms);
  third.send(request);  // finds the queue full
  const std::string refused = third.read_all();
  EXPECT_EQ(status_of(refused), 503) << refused;
  EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos);
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  EXPECT_EQ(status_of(first.read_all()), 200);
  EXPECT_EQ(status_of(second.read_all()), 200);
  EXPECT_EQ(s.stats().busy_responses, 1u);
  EXPECT_LE(s.stats().peak_queued, 1u);
}

TEST(HttpServer, ConnectionsPastThePerClientLimitAreRefused) {
  test_server s({.max_connections_per_client = 4}, echo);
  std::vector<std::unique_ptr<raw_client>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<raw_client>(s.port(), 5s));
    held.back()->send("G");  // a request started: the loop has accepted it
  }
  for (int i = 0; i < 100 && s.stats().open_connections < 4; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  raw_client extra(s.port(), 5s);
  const std::string r = extra.read_all();
  EXPECT_EQ(status_of(r), 503) << r;
  EXPECT_EQ(s.stats().rejected_connections, 1u);
  held.clear();  // the limit frees up as they close
  for (int i = 0; i < 200 && s.stats().open_connections > 0; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  raw_client again(s.port(), 5s);
  again.send("GET /again HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(again.read_all()), 200);
}

TEST(HttpServer, ConnectionsPerClientAreUnlimitedByDefault) {
  test_server s({}, echo);
  std::vector<std::unique_ptr<raw_client>> held;
  for (int i = 0; i < 300; ++i) {  // more than any per-address limit a gateway used to have
    held.push_back(std::make_unique<raw_client>(s.port(), 5s));
    held.back()->send("G");
  }
  for (int i = 0; i < 400 && s.stats().open_connections < 300; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(s.stats().open_connections, 300u);
  EXPECT_EQ(s.stats().rejected_connections, 0u);
  raw_client one_more(s.port(), 5s);
  one_more.send("GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(one_more.read_all()), 200);
}

// Out of descriptors, the loop pauses accepting instead of spinning on a listener that stays
// ready: a second of a full descriptor table costs a handful of accept attempts (one per
// pause), and the waiting clients are served once descriptors free up.
TEST(HttpServer, OutOfDescriptorsPausesAccepting) {
  test_server s({}, echo);
  {  // the loop runs, so its worker threads exist before the table fills
    raw_client warm(s.port(), 5s);
    warm.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ASSERT_EQ(status_of(warm.read_all()), 200);
  }
  // ... and has closed the warm-up connection (its descriptor would free a slot later).
  for (int i = 0; i < 400 && s.stats().open_connections > 0; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(s.stats().open_connections, 0u);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  // The clients' sockets exist before the table fills (client and server share this process),
  // so every descriptor the server could accept into is taken.
  std::vector<std::unique_ptr<raw_client>> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<raw_client>(s.port(), 5s, 0, /*connect_now=*/false));
  }
  const int lowest_free = ::dup(0);
  ::close(lowest_free);
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(lowest_free + 64);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> filler;
  for (int fd; (fd = ::dup(0)) >= 0;) filler.push_back(fd);
  ASSERT_GE(filler.size(), 1u);
  for (auto& c : clients) {
    EXPECT_TRUE(c->connect());
    c->send("GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }
  std::this_thread::sleep_for(1s);
  const std::uint64_t pauses = s.stats().accept_pauses;
  EXPECT_GE(pauses, 1u);
  EXPECT_LE(pauses, 20u);  // one per 100 ms pause; a spinning loop makes millions
  // Only the warm-up was accepted.
  EXPECT_EQ(s.stats().connections, 1u);
  for (int fd : filler) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  for (auto& c : clients) EXPECT_EQ(status_of(c->read_all()), 200);
}

// raise_descriptor_limit lifts the soft limit on descriptors to the hard one, from wherever the
// soft limit stands (the hard limit stays as it is).
TEST(HttpServer, RaiseDescriptorLimitLiftsTheSoftLimitToTheHardOne) {
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max == RLIM_INFINITY || saved.rlim_max < 128) {
    GTEST_SKIP() << "the hard limit is unbounded or too low to lower the soft one below it";
  }
  const std::vector<std::pair<const char*, rlim_t>> cases = {
      {"far below", 64}, {"just below", saved.rlim_max - 1}, {"at the hard limit", saved.rlim_max}};
  for (const auto& [name, soft] : cases) {
    SCOPED_TRACE(name);
    rlimit low = saved;
    low.rlim_cur = soft;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
    const std::size_t in_force = raise_descriptor_limit();
    rlimit now{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
    EXPECT_EQ(now.rlim_cur, saved.rlim_max);
    EXPECT_EQ(now.rlim_max, saved.rlim_max);
    EXPECT_EQ(in_force, static_cast<std::size_t>(saved.rlim_max));
  }
}

// The application's context of a request goes from the inline handler to the worker's and
// on to the log call.
TEST(HttpServer, TheRequestContextReachesTheLog) {
  test_server s(
      {},
      [](exchange& ex) {
        auto* seen = std::any_cast<std::string>(&ex.context());
        ex.respond({.status = 200, .body = seen != nullptr ? *seen : "none"});
        if (seen != nullptr) *seen += "+worker";
      },
      [](const request& r, std::any& context) -> std::optional<response> {
        context = std::string("inline:" + r.path);
        if (r.path != "/inline") return std::nullopt;
        return response{.status = 200, .body = "ok"};
      });
  for (const std::string path : {"/inline", "/worker"}) {
    raw_client c(s.port(), 5s);
    c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(status_of(c.read_all()), 200);
  }
  std::vector<completed> log;
  for (int i = 0; i < 200 && (log = s.log()).size() < 2; ++i) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(log.size(), 2u);
  std::vector<std::string> contexts;
  for (const auto& c : log) {
    const auto* text = std::any_cast<std::string>(&c.context);
    contexts.push_back(text != nullptr ? *text : "none");
  }
  std::sort(contexts.begin(), contexts.end());
  EXPECT_EQ(contexts, (std::vector<std::string>{"inline:/inline", "inline:/worker+worker"}));
}

TEST(HttpServer, InlineRoutesAnswerWhileEveryWorkerIsBusy) {
  std::atomic<bool> release{false};
  test_server s({.workers = 1}, [&](exchange& ex) {
    for (int i = 0; i < 500 && !release; ++i) std::this_thread::sleep_for(10ms);
    ex.respond({.status = 200});
  });
  raw_client busy(s.port(), 5s);
  busy.send("GET /w HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  for (int i = 0; i < 200 && s.stats().busy_workers == 0; ++i) std::this_thread::sleep_for(5ms);
  raw_client health(s.port(), 2s);
  health.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  bool timed_out = false;
  const std::string r = health.read_all(&timed_out);
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(status_of(r), 200) << r;
  EXPECT_EQ(s.stats().busy_workers, 1u);
  release = true;
}

// A client that never reads its stream: the writes stop within the write limits, the request
// is cancelled, the worker is free again.
TEST(HttpServer, AClientThatStopsReadingIsGivenUp) {
  std::atomic<std::size_t> written{0};
  std::atomic<bool> done{false};
  test_server s({.write_timeout = 500ms, .write_budget = 1500ms}, [&](exchange& ex) {
    auto& w = ex.stream();
    w.start(200, {{"Content-Type", "application/octet-stream"}});
    const std::string piece(64u << 10, 'x');
    while (!ex.cancel().cancelled() && w.write(piece)) written += piece.size();
    done = true;
  });
  raw_client c(s.port(), 10s, 4096);
  c.send("GET /firehose HTTP/1.1\r\nHost: x\r\n\r\n");
  for (int i = 0; i < 500 && !done; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(done.load());
  EXPECT_LT(written.load(), 64u << 20);
  EXPECT_EQ(s.stats().write_timeouts, 1u);
  for (int i = 0; i < 100 && s.stats().busy_workers > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(s.stats().busy_workers, 0u);
}

// A request the loop answers itself with "Connection: close", with more requests pipelined
// behind it in the same packet: the answer is sent, the connection closed, and the bytes
// after it are dropped with it (the loop must not go on reading a connection it closed).
TEST(HttpServer, PipelinedRequestsAfterAClosingInlineAnswerAreDropped) {
  test_server s({}, echo);
  for (int round = 0; round < 20; ++round) {
    raw_client c(s.port(), 5s);
    ASSERT_TRUE(
        c.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
               "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
               "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"));
    bool timed_out = false;
    const std::string r = c.read_all(&timed_out);
    EXPECT_FALSE(timed_out);
    EXPECT_EQ(count(r, "HTTP/1.1 200"), 1u) << r;
    EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos) << r;
  }
  EXPECT_GE(s.stats().requests, 20u);
}

TEST(HttpServer, ARequestNotReadWithinTheDeadlineIs408) {
  test_server s({.request_deadline = 1s}, echo);
  raw_client c(s.port(), 5s);
  ASSERT_TRUE(c.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"));
  bool timed_out = false;
  const std::string r = c.read_all(&timed_out);
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(status_of(r), 408) << r;
  EXPECT_EQ(s.stats().deadline_exceeded, 1u);
  // The log has the request's latency from its first byte (about the deadline).
  const auto log = s.log();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().status, 408);
  EXPECT_TRUE(log.back().on_loop);
}

TEST(HttpServer, AnIdleConnectionIsClosedSilently) {
  test_server s({.keep_alive_timeout = 300ms}, echo);
  raw_client c(s.port(), 5s);
  bool timed_out = false;
  EXPECT_EQ(c.read_all(&timed_out), "");
  EXPECT_FALSE(timed_out);
}

TEST(HttpServer, CreateRejectsLimitsThatCannotWork) {
  const auto noop = [](exchange&) {};
  const auto body = [](int, std::string_view, std::string_view, const request*, std::any&) {
    return response{};
  };
  EXPECT_FALSE(server::create({.workers = 0}, noop, nullptr, body, nullptr));
  EXPECT_FALSE(server::create({.max_connections = 0}, noop, nullptr, body, nullptr));
  EXPECT_TRUE(server::create({.max_connections_per_client = 0}, noop, nullptr, body, nullptr));
  EXPECT_FALSE(server::create({}, nullptr, nullptr, body, nullptr));
  EXPECT_TRUE(server::create({}, noop, nullptr, body, nullptr));
}

}  // namespace
}  // namespace chatpeg::http

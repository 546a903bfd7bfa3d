// Load through `chatpeg serve`: N concurrent streaming chat requests against a fake llama.cpp
// backend that streams 50 tokens at 20 ms each (a 1 s answer), beside the same load sent
// straight to the backend. Its own client and backend (Asio coroutines, one thread each,
// loopback only); the gateway is the real `chatpeg serve` process with default settings. Per
// run: answers with status 200 and all 50 tokens, other answers, p50 / p99 latency (connect →
// last byte), and for the gateway its RSS, peak RSS and CPU-seconds per 1,000 streamed tokens,
// and its p99 over the direct p99 at the same N. Every wait is bounded (a run gives up after
// 60 s); the descriptor limit is raised to the hard limit first.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using asio::ip::tcp;
using clock_type = std::chrono::steady_clock;
constexpr auto use_tuple = asio::experimental::as_tuple(asio::use_awaitable);

constexpr int tokens_per_answer = 50;
constexpr std::chrono::milliseconds token_interval{20};
constexpr std::string_view token_text = "tok ";
constexpr std::chrono::seconds run_limit{60};

// A llama.cpp-like backend: POST /completion streams tokens_per_answer SSE events, one every
// token_interval, then the final event, and closes; POST /tokenize answers one token.
class fake_backend {
 public:
  fake_backend() : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~fake_backend() {
    io_.stop();
    thread_.join();
  }
  int port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(use_tuple);
      if (ec == asio::error::operation_aborted) co_return;
      if (ec) {  // out of descriptors: wait instead of spinning
        asio::steady_timer pause(io_, std::chrono::milliseconds(50));
        co_await pause.async_wait(use_tuple);
        continue;
      }
      asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
    }
  }

  static asio::awaitable<void> serve(tcp::socket s) {
    std::string in;
    char buf[8192];
    std::size_t head_end = std::string::npos;
    std::size_t length = 0;
    while (head_end == std::string::npos || in.size() < head_end + 4 + length) {
      auto [ec, n] = co_await s.async_read_some(asio::buffer(buf), use_tuple);
      if (ec || in.size() > (1u << 20)) co_return;
      in.append(buf, n);
      if (head_end == std::string::npos && (head_end = in.find("\r\n\r\n")) != std::string::npos) {
        std::string head = in.substr(0, head_end);
        std::transform(head.begin(), head.end(), head.begin(), ::tolower);
        const auto cl = head.find("content-length:");
        if (cl != std::string::npos) length = std::stoul(head.substr(cl + 15));
      }
    }
    if (in.rfind("POST /tokenize", 0) == 0) {
      const std::string body = R"({"tokens":[1]})";
      const std::string out =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      co_await asio::async_write(s, asio::buffer(out), use_tuple);
      co_return;
    }
    const std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
    if (auto [ec, n] = co_await asio::async_write(s, asio::buffer(head), use_tuple); ec) co_return;
    asio::steady_timer timer(s.get_executor());
    auto next = clock_type::now();
    for (int i = 0; i < tokens_per_answer; ++i) {
      next += token_interval;
      timer.expires_at(next);
      co_await timer.async_wait(use_tuple);
      const std::string event = "data: {\"content\":\"" + std::string(token_text) +
                                "\",\"tokens\":[" + std::to_string(100 + i) +
                                "],\"stop\":false}\n\n";
      if (auto [ec, n] = co_await asio::async_write(s, asio::buffer(event), use_tuple); ec) {
        co_return;
      }
    }
    const std::string last =
        "data: {\"content\":\"\",\"stop\":true,\"stop_type\":\"eos\",\"tokens_predicted\":" +
        std::to_string(tokens_per_answer) + ",\"tokens_evaluated\":8}\n\n";
    co_await asio::async_write(s, asio::buffer(last), use_tuple);
    asio::error_code ignored;
    s.shutdown(tcp::socket::shutdown_send, ignored);
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

struct answer {
  int status = 0;
  std::size_t tokens = 0;
  double seconds = 0;
};

std::size_t count_of(const std::string& text, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// One request on its own connection, read to the server's close.
asio::awaitable<void> one_request(tcp::endpoint to, const std::string& request, answer& out) {
  const auto start = clock_type::now();
  tcp::socket s(co_await asio::this_coro::executor);
  if (auto [ec] = co_await s.async_connect(to, use_tuple); ec) co_return;
  if (auto [ec, n] = co_await asio::async_write(s, asio::buffer(request), use_tuple); ec) {
    co_return;
  }
  std::string all;
  char buf[16384];
  for (;;) {
    auto [ec, n] = co_await s.async_read_some(asio::buffer(buf), use_tuple);
    all.append(buf, n);
    if (ec) break;
  }
  out.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  if (all.rfind("HTTP/1.1 ", 0) == 0 && all.size() >= 12) out.status = std::stoi(all.substr(9, 3));
  out.tokens = count_of(all, token_text);
}

struct load_result {
  std::size_t ok = 0;      // 200 with every token
  std::size_t other = 0;   // any other answer, or none
  std::size_t tokens = 0;  // streamed tokens received
  double p50 = 0;
  double p99 = 0;
  double wall = 0;
};

load_result run_load(int port, std::string_view path, const std::string& body, int clients) {
  const std::string request = "POST " + std::string(path) +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              "Connection: close\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  asio::io_context io;
  const tcp::endpoint to(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  std::vector<answer> answers(static_cast<std::size_t>(clients));
  asio::steady_timer limit(io, run_limit);  // a run that hangs stops here
  limit.async_wait([&](const asio::error_code& ec) {
    if (!ec) io.stop();
  });
  std::size_t left = answers.size();
  const auto start = clock_type::now();
  for (auto& a : answers) {
    asio::co_spawn(
        io,
        [&, slot = &a]() -> asio::awaitable<void> {
          co_await one_request(to, request, *slot);
          if (--left == 0) limit.cancel();
        },
        asio::detached);
  }
  io.run();
  load_result r;
  r.wall = std::chrono::duration<double>(clock_type::now() - start).count();
  std::vector<double> latencies;
  for (const auto& a : answers) {
    const bool whole = a.status == 200 && a.tokens >= tokens_per_answer;
    (whole ? r.ok : r.other) += 1;
    r.tokens += a.tokens;
    latencies.push_back(a.seconds == 0 ? run_limit.count() : a.seconds);
  }
  std::sort(latencies.begin(), latencies.end());
  const auto at = [&](double q) {
    return latencies[std::min(latencies.size() - 1,
                              static_cast<std::size_t>(q * static_cast<double>(latencies.size())))];
  };
  r.p50 = at(0.50);
  r.p99 = at(0.99);
  return r;
}

// A process's resident set (VmRSS, VmHWM) in MiB and its CPU time (user + system) in seconds.
struct process_usage {
  double rss_mib = 0;
  double peak_rss_mib = 0;
  double cpu_seconds = 0;
};

process_usage usage_of(pid_t pid) {
  process_usage u;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) u.rss_mib = std::stod(line.substr(6)) / 1024;
    if (line.rfind("VmHWM:", 0) == 0) u.peak_rss_mib = std::stod(line.substr(6)) / 1024;
  }
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; fields >> f && i <= 15; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  }
  u.cpu_seconds = ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return u;
}

int free_port() {
  asio::io_context io;
  tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

// `chatpeg serve` with default settings in front of the backend, for the program's lifetime.
class gateway_process {
 public:
  explicit gateway_process(int backend_port) : port_(free_port()) {
    const std::string backend = "http://127.0.0.1:" + std::to_string(backend_port);
    const std::string port = std::to_string(port_);
    pid_ = ::fork();
    if (pid_ == 0) {
      std::freopen("/dev/null", "w", stderr);
      ::execl(CHATPEG_CLI, CHATPEG_CLI, "serve", "--template",
              CHATPEG_SOURCE_DIR "/examples/chatml_tools.jinja", "--backend", backend.c_str(),
              "--port", port.c_str(), static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    for (int i = 0; i < 500 && !ready(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~gateway_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  bool ready() const {
    asio::io_context io;
    tcp::socket s(io);
    asio::error_code ec;
    s.connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)), ec);
    return !ec;
  }
  int port_;
  pid_t pid_ = -1;
};

fake_backend& backend() {
  static fake_backend b;
  return b;
}

gateway_process& gateway() {
  static gateway_process g(backend().port());
  return g;
}

std::map<std::int64_t, double>& direct_p99() {
  static std::map<std::int64_t, double> m;
  return m;
}

void raise_descriptor_limit() {
  rlimit l{};
  if (::getrlimit(RLIMIT_NOFILE, &l) == 0 && l.rlim_cur < l.rlim_max) {
    l.rlim_cur = l.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &l);
  }
}

void report(benchmark::State& state, const load_result& r) {
  state.SetIterationTime(r.wall);
  state.counters["ok"] = static_cast<double>(r.ok);
  state.counters["other"] = static_cast<double>(r.other);
  state.counters["p50_s"] = r.p50;
  state.counters["p99_s"] = r.p99;
}

// Straight to the backend: the baseline.
void BM_direct(benchmark::State& state) {
  raise_descriptor_limit();
  const int clients = static_cast<int>(state.range(0));
  const std::string body = R"({"prompt":"hi","n_predict":50,"stream":true})";
  for (auto _ : state) {
    const auto r = run_load(backend().port(), "/completion", body, clients);
    report(state, r);
    direct_p99()[state.range(0)] = r.p99;
  }
}

// Through `chatpeg serve`.
void BM_gateway(benchmark::State& state) {
  raise_descriptor_limit();
  const int clients = static_cast<int>(state.range(0));
  const std::string body =
      R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":50})";
  auto& g = gateway();
  for (auto _ : state) {
    const auto before = usage_of(g.pid());
    const auto r = run_load(g.port(), "/v1/chat/completions", body, clients);
    const auto after = usage_of(g.pid());
    report(state, r);
    state.counters["rss_mib"] = after.rss_mib;
    state.counters["peak_rss_mib"] = after.peak_rss_mib;
    state.counters["cpu_s_per_1k_tokens"] =
        r.tokens == 0 ? 0 : (after.cpu_seconds - before.cpu_seconds) * 1000 / r.tokens;
    if (const auto d = direct_p99().find(state.range(0));
        d != direct_p99().end() && d->second > 0) {
      state.counters["p99_over_direct"] = r.p99 / d->second;
    }
  }
}

}  // namespace

BENCHMARK(BM_direct)->Arg(64)->Arg(256)->Arg(1000)->Arg(2000)->Iterations(1)->UseManualTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(BM_gateway)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1000)
    ->Arg(2000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

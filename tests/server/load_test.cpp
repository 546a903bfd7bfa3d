// Bounded loopback load test: 2,000 requests from 32 client threads, half streaming, against
// the gateway and a fixture backend whose reply depends on the request. Every response must
// be complete and exactly the reply for its own request (no loss, no cross-talk), and memory
// must stay flat: the resident set after a 500-request warm-up and after the remaining 1,500
// may differ by a bounded amount (allocator caches settle during the warm-up). Bounded in
// request count; no timing assertions.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "gateway_harness.h"

namespace chatpeg::server {
namespace {

using testing::gateway_harness;
using testing::scripted_reply;

// Resident set size of this process in KiB (VmRSS), 0 when unknown.
std::size_t resident_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      std::size_t kib = 0;
      fields >> kib;
      return kib;
    }
  }
  return 0;
}

std::string reply_for(const std::string& n) {
  return "reply " + n + " \xE2\x9C\x93 " + std::string(n.size() * 3, 'z') + " end";
}

TEST(GatewayLoad, TwoThousandRequestsAtConcurrency32) {
  constexpr int warmup = 500;
  constexpr int total = 2000;
  constexpr int concurrency = 32;
  gateway_harness h(testing::hermes_template, backend_type::llamacpp,
                    {.threads = 2 * concurrency, .log = log_format::text}, 2 * concurrency);
  h.backend.reply_with([](const json::value& req) {
    const std::string prompt = req.value("prompt", "");
    const auto at = prompt.find("req-");
    std::string n = "?";
    if (at != std::string::npos) {
      const auto end = prompt.find_first_not_of("0123456789", at + 4);
      n = prompt.substr(at + 4, end - at - 4);
    }
    return scripted_reply{.chunks = testing::split_chars(reply_for(n), 3), .write_size = 7};
  });

  std::atomic<int> next{0};
  std::atomic<int> ok{0};
  std::vector<std::string> failures;
  std::mutex failures_mutex;
  auto fail = [&](std::string what) {
    std::lock_guard lock(failures_mutex);
    if (failures.size() < 20) failures.push_back(std::move(what));
  };
  auto run_until = [&](int limit) {
    std::vector<std::thread> clients;
    for (int t = 0; t < concurrency; ++t) {
      clients.emplace_back([&] {
        auto c = h.client();
        for (int i = next++; i < limit; i = next++) {
          const std::string n = std::to_string(i);
          const bool stream = i % 2 == 0;
          const std::string body = R"({"messages":[{"role":"user","content":"req-)" + n +
                                   R"("}],"stream":)" + (stream ? "true" : "false") + "}";
          auto r = c.Post("/v1/chat/completions", body, "application/json");
          if (!r || r->status != 200) {
            fail(n + ": " +
                 (r ? std::to_string(r->status) + " " + r->body : httplib::to_string(r.error())));
            continue;
          }
          std::string content;
          std::string finish;
          if (stream) {
            auto s = testing::read_sse(r->body, r->status);
            if (!s.saw_done || !s.done_last) fail(n + ": stream not terminated");
            content = s.content;
            finish = s.finish_reason;
          } else {
            auto v = json::parse(r->body);
            if (!v) {
              fail(n + ": bad JSON");
              continue;
            }
            content = (*v)["choices"][0]["message"]["content"];
            finish = (*v)["choices"][0]["finish_reason"];
          }
          if (content != reply_for(n) || finish != "stop") {
            fail(n + ": got '" + content + "' finish " + finish);
            continue;
          }
          ++ok;
        }
      });
    }
    for (auto& t : clients) t.join();
    next = limit;
  };
  run_until(warmup);
  const std::size_t rss_warm = resident_kib();
  run_until(total);
  const std::size_t rss_end = resident_kib();
  EXPECT_EQ(ok.load(), total);
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(h.backend.requests().size(), static_cast<std::size_t>(total));
  std::cout << "load: resident set " << rss_warm / 1024 << " MiB after " << warmup << " requests, "
            << rss_end / 1024 << " MiB after " << total << "\n";
  // The fixture keeps every request (~1 KiB each) and the log every line: ~2 MiB of growth
  // is expected; a leak of a few KiB per request would exceed the bound. Not under the
  // sanitizers: AddressSanitizer's quarantine holds freed memory (256 MiB by default), and
  // LeakSanitizer checks for leaks there instead.
#ifndef CHATPEG_SANITIZED
  constexpr bool measure_rss = true;
#else
  constexpr bool measure_rss = false;
#endif
  if (measure_rss && rss_warm != 0 && rss_end > rss_warm) {
    EXPECT_LT(rss_end - rss_warm, 8u * 1024) << "memory grew";
  }
  if (ok.load() != total) {
    for (auto& l : h.logs) std::cerr << "LOG " << l << "\n";
  }
}

}  // namespace
}  // namespace chatpeg::server

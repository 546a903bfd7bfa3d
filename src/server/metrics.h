// Gateway metrics for GET /metrics (Prometheus text exposition format 0.0.4): requests by
// endpoint and status, request latency and streaming time-to-first-delta histograms, prompt and
// completion tokens, tool calls, parse fallbacks (model output that stopped matching), backend
// errors and timeouts, requests in flight. One instance per gateway, updated from every worker
// thread (a mutex for the labelled counters and histograms, atomics for the rest). Endpoint
// labels come from the route table (routes.h). Internal to the server module.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace chatpeg::server::detail {

// A latency histogram with fixed buckets (seconds), cumulative as Prometheus wants them.
class histogram {
 public:
  static constexpr std::array<double, 12> bounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                    0.5,   1,    2.5,   5,    10,  30};
  void observe(double seconds);
  // "<name>_bucket{le=...} n" lines, then _sum and _count.
  void write(std::string& out, std::string_view name) const;

 private:
  std::array<std::uint64_t, bounds.size() + 1> counts_{};  // last: +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

// What one finished request contributes.
struct request_record {
  std::string_view endpoint;  // the route's label (routes.h), "other" for any other path
  int status = 0;
  double seconds = 0;
  std::optional<double> first_delta_seconds;  // streaming: time to the first delta sent
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t tool_calls = 0;
  bool parse_fallback = false;
  bool backend_error = false;
  bool backend_timeout = false;
};

class metrics {
 public:
  void request_started() { in_flight_.fetch_add(1, std::memory_order_relaxed); }
  void request_finished(const request_record& r);
  // The exposition text (Content-Type: text/plain; version=0.0.4).
  std::string render() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;  // (endpoint, status)
  histogram latency_;
  histogram first_delta_;
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<std::uint64_t> prompt_tokens_{0};
  std::atomic<std::uint64_t> completion_tokens_{0};
  std::atomic<std::uint64_t> tool_calls_{0};
  std::atomic<std::uint64_t> parse_fallbacks_{0};
  std::atomic<std::uint64_t> backend_errors_{0};
  std::atomic<std::uint64_t> backend_timeouts_{0};
};

}  // namespace chatpeg::server::detail

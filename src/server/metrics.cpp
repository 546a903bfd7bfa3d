// Gateway metrics (metrics.h): recording finished requests and rendering the Prometheus text.
#include "metrics.h"

#include <cstdio>

namespace chatpeg::server::detail {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void counter(std::string& out, std::string_view name, std::string_view help, std::uint64_t v) {
  header(out, name, "counter", help);
  out += name;
  out += ' ' + std::to_string(v) + '\n';
}

}  // namespace

void histogram::observe(double seconds) {
  std::size_t i = 0;
  while (i < bounds.size() && seconds > bounds[i]) ++i;
  ++counts_[i];
  sum_ += seconds;
  ++count_;
}

void histogram::write(std::string& out, std::string_view name) const {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += counts_[i];
    out += name;
    out += "_bucket{le=\"" + (i < bounds.size() ? number(bounds[i]) : std::string("+Inf")) +
           "\"} " + std::to_string(cumulative) + '\n';
  }
  out += name;
  out += "_sum " + number(sum_) + '\n';
  out += name;
  out += "_count " + std::to_string(count_) + '\n';
}

void metrics::request_finished(const request_record& r) {
  in_flight_.fetch_sub(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    ++requests_[{std::string(r.endpoint), r.status}];
    latency_.observe(r.seconds);
    if (r.first_delta_seconds) first_delta_.observe(*r.first_delta_seconds);
  }
  const auto add = [](std::atomic<std::uint64_t>& c, std::int64_t v) {
    if (v > 0) c.fetch_add(static_cast<std::uint64_t>(v), std::memory_order_relaxed);
  };
  add(prompt_tokens_, r.prompt_tokens);
  add(completion_tokens_, r.completion_tokens);
  add(tool_calls_, r.tool_calls);
  add(parse_fallbacks_, r.parse_fallback ? 1 : 0);
  add(backend_errors_, r.backend_error ? 1 : 0);
  add(backend_timeouts_, r.backend_timeout ? 1 : 0);
}

std::string metrics::render() const {
  std::string out;
  {
    std::lock_guard lock(mutex_);
    header(out, "chatpeg_requests_total", "counter", "Requests by endpoint and HTTP status.");
    for (const auto& [key, n] : requests_) {
      out += "chatpeg_requests_total{endpoint=\"" + key.first + "\",status=\"" +
             std::to_string(key.second) + "\"} " + std::to_string(n) + '\n';
    }
    header(out, "chatpeg_request_duration_seconds", "histogram",
           "Time from a request's first byte to the end of its response.");
    latency_.write(out, "chatpeg_request_duration_seconds");
    header(out, "chatpeg_time_to_first_delta_seconds", "histogram",
           "Streaming responses: time from the request to the first delta sent.");
    first_delta_.write(out, "chatpeg_time_to_first_delta_seconds");
  }
  header(out, "chatpeg_requests_in_flight", "gauge", "Requests being served now.");
  out += "chatpeg_requests_in_flight " + std::to_string(in_flight_.load()) + '\n';
  counter(out, "chatpeg_prompt_tokens_total", "Prompt tokens the backend evaluated.",
          prompt_tokens_.load());
  counter(out, "chatpeg_completion_tokens_total", "Tokens the backend generated.",
          completion_tokens_.load());
  counter(out, "chatpeg_tool_calls_total", "Tool calls returned to clients.", tool_calls_.load());
  counter(out, "chatpeg_parse_fallbacks_total",
          "Responses whose model output stopped matching the parser (rest sent as content).",
          parse_fallbacks_.load());
  counter(out, "chatpeg_backend_errors_total", "Backend failures other than timeouts.",
          backend_errors_.load());
  counter(out, "chatpeg_backend_timeouts_total", "Backend requests that timed out.",
          backend_timeouts_.load());
  return out;
}

}  // namespace chatpeg::server::detail

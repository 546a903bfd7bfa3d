// /metrics: the histogram's cumulative buckets, the endpoint labels (a table), and the gateway
// end to end — off unless enabled, behind the API keys when set, and every family moves as
// requests are made (content, a streamed tool call, a parse fallback, a bad request, a backend
// failure), read back from the Prometheus text.
#include "server/metrics.h"
#include "server/routes.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "gateway_harness.h"

namespace chatpeg::server {
namespace {

using testing::gateway_harness;
using testing::scripted_reply;

// "name{labels} value" lines of an exposition, by "name{labels}".
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  detail::histogram h;
  for (const double s : {0.001, 0.005, 0.02, 0.7, 40.0}) h.observe(s);
  std::string text;
  h.write(text, "x");
  const auto m = samples(text);
  EXPECT_EQ(m.at("x_bucket{le=\"0.005\"}"), 2);  // le is inclusive
  EXPECT_EQ(m.at("x_bucket{le=\"0.025\"}"), 3);
  EXPECT_EQ(m.at("x_bucket{le=\"1\"}"), 4);
  EXPECT_EQ(m.at("x_bucket{le=\"30\"}"), 4);
  EXPECT_EQ(m.at("x_bucket{le=\"+Inf\"}"), 5);
  EXPECT_EQ(m.at("x_count"), 5);
  EXPECT_NEAR(m.at("x_sum"), 40.726, 1e-9);
}

TEST(Metrics, EndpointLabelsAreTheRoutesElseOther) {
  for (const auto& r : detail::routes) EXPECT_EQ(detail::metrics_label(r.path), r.label) << r.path;
  for (const char* path : {"/v1/chat/completions/x", "/v1/messages/x", "/random-path-1234", ""}) {
    EXPECT_EQ(detail::metrics_label(path), "other") << path;
  }
}

// Every route counts under its own label, end to end: one request per row of the route table
// (a GET, or a POST with a body each route refuses or answers), then /metrics read back.
TEST(Metrics, EveryRouteCountsUnderItsOwnLabel) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, {.metrics = true});
  h.backend.reply_with(scripted_reply{.chunks = {"a"}});
  std::map<std::string, int> status_of_label;
  for (const auto& r : detail::routes) {
    auto c = h.client();
    const auto res = r.method == "GET"
                         ? c.Get(std::string(r.path))
                         : c.Post(std::string(r.path),
                                  R"({"model":"m","max_tokens":8,"messages":[{"role":"user",)"
                                  R"("content":"hi"}],"input":"hi"})",
                                  "application/json");
    ASSERT_TRUE(res) << r.path;
    status_of_label[std::string(r.label)] = res->status;
  }
  auto c = h.client();
  std::map<std::string, double> m;
  for (int attempt = 0; attempt < 500; ++attempt) {  // each is recorded when its response ends
    auto r = c.Get("/metrics");
    ASSERT_TRUE(r);
    m = samples(r->body);
    std::size_t seen = 0;
    for (const auto& [label, status] : status_of_label) {
      seen += m.count("chatpeg_requests_total{endpoint=\"" + label + "\",status=\"" +
                      std::to_string(status) + "\"}");
    }
    if (seen == status_of_label.size()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (const auto& [label, status] : status_of_label) {
    EXPECT_GE(m["chatpeg_requests_total{endpoint=\"" + label + "\",status=\"" +
                std::to_string(status) + "\"}"],
              1)
        << label;
  }
  for (const auto& [key, value] : m) EXPECT_EQ(key.find("endpoint=\"other\""), std::string::npos);
}

TEST(Metrics, OffByDefaultAndBehindTheKeys) {
  gateway_harness off;
  auto c = off.client();
  auto r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  gateway_harness keyed(testing::hermes_template, backend_type::llamacpp,
                        {.api_keys = {"sk-m"}, .metrics = true});
  auto k = keyed.client();
  auto denied = k.Get("/metrics");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  auto allowed = k.Get("/metrics", {{"x-api-key", "sk-m"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  EXPECT_EQ(allowed->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
}

TEST(Metrics, CountsMoveAsRequestsAreMade) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, {.metrics = true});
  const std::string tools = std::string(R"(,"tools":)") + testing::weather_tools;
  const auto body = [&](const std::string& extra) {
    return R"({"messages":[{"role":"user","content":"hi"}])" + extra + "}";
  };
  // Content, non-streaming: 2 completion tokens, 7 prompt tokens.
  h.backend.reply_with(scripted_reply{.chunks = {"a", "b"}, .tokens_evaluated = 7});
  EXPECT_EQ(h.post("/v1/chat/completions", body("")).first, 200);
  // A streamed tool call: a first delta, one tool call.
  const std::string call =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>";
  h.backend.reply_with(scripted_reply{.chunks = {call}, .tokens_evaluated = 5});
  EXPECT_EQ(h.stream(body(tools + R"(,"stream":true)")).status, 200);
  // Output that stops matching (a required call to an unknown tool): a parse fallback.
  h.backend.reply_with(scripted_reply{
      .chunks = {"<tool_call>\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call>"}});
  EXPECT_EQ(h.post("/v1/chat/completions", body(tools + R"(,"tool_choice":"required")")).first,
            200);
  // A bad request and a backend failure.
  EXPECT_EQ(h.post("/v1/chat/completions", "{").first, 400);
  h.backend.reply_with(scripted_reply{.status = 500, .raw_body = R"({"error":{"message":"x"}})"});
  EXPECT_EQ(h.post("/v1/chat/completions", body("")).first, 502);

  // Metrics are recorded once each response is done: wait until the five are in (bounded).
  std::map<std::string, double> m;
  const std::string chat = "chatpeg_requests_total{endpoint=\"/v1/chat/completions\",status=";
  for (int attempt = 0; attempt < 500; ++attempt) {
    auto c = h.client();
    auto r = c.Get("/metrics");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    m = samples(r->body);
    if (m[chat + "\"200\"}"] + m[chat + "\"400\"}"] + m[chat + "\"502\"}"] == 5) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(m[chat + "\"200\"}"], 3);
  EXPECT_EQ(m[chat + "\"400\"}"], 1);
  EXPECT_EQ(m[chat + "\"502\"}"], 1);
  EXPECT_GE(m["chatpeg_request_duration_seconds_count"], 5);
  EXPECT_EQ(m["chatpeg_time_to_first_delta_seconds_count"], 1);
  EXPECT_EQ(m["chatpeg_time_to_first_delta_seconds_bucket{le=\"+Inf\"}"], 1);
  EXPECT_EQ(m["chatpeg_tool_calls_total"], 1);
  EXPECT_EQ(m["chatpeg_parse_fallbacks_total"], 1);
  EXPECT_EQ(m["chatpeg_backend_errors_total"], 1);
  EXPECT_EQ(m["chatpeg_backend_timeouts_total"], 0);
  EXPECT_GE(m["chatpeg_prompt_tokens_total"], 7 + 5);
  EXPECT_GE(m["chatpeg_completion_tokens_total"], 2 + 1);
  // /metrics itself is answered by the server's loop, never in flight on a worker.
  EXPECT_EQ(m["chatpeg_requests_in_flight"], 0);
}

TEST(Metrics, BackendTimeoutsAreCounted) {
  gateway_harness h(
      testing::hermes_template, backend_type::llamacpp, {.metrics = true}, 8,
      {.connect_timeout = std::chrono::seconds(2), .read_timeout = std::chrono::seconds(1)});
  h.backend.reply_with(
      scripted_reply{.chunks = {"late"}, .delay = std::chrono::milliseconds(2500)});
  EXPECT_EQ(h.post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}]})").first,
            504);
  // The request is counted when its log line is written, after the 504 went out: wait for
  // both counters.
  const std::string requests_504 =
      "chatpeg_requests_total{endpoint=\"/v1/chat/completions\",status=\"504\"}";
  std::map<std::string, double> m;
  for (int attempt = 0;
       attempt < 500 && (m["chatpeg_backend_timeouts_total"] < 1 || m[requests_504] < 1);
       ++attempt) {
    auto c = h.client();
    auto r = c.Get("/metrics");
    ASSERT_TRUE(r);
    m = samples(r->body);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(m["chatpeg_backend_timeouts_total"], 1);
  EXPECT_EQ(m["chatpeg_backend_errors_total"], 0);
  EXPECT_EQ(m[requests_504], 1);
}

}  // namespace
}  // namespace chatpeg::server

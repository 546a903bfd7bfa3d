// The cross-check of a response template against chatpeg's analysis on the outputs a chat
// template writes for its probe turns: a template that describes the format agrees on every
// probe, one that misses the calls disagrees exactly on the call probes (with both readings),
// the written template agrees with the analysis it was written from, and call probes are
// skipped for a template that never writes calls.
#include <gtest/gtest.h>

#include <set>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/response/response.h"
#include "probe_templates.h"
#include "test_support.h"

namespace chatpeg::response {
namespace {

std::shared_ptr<const chat::chat_template> chat_template(const char* source) {
  auto t = chat::chat_template::create(source);
  EXPECT_TRUE(t) << (t ? "" : t.error().to_string());
  return t ? *t : nullptr;
}

std::set<std::string> disagreeing(const cross_check_report& r) {
  std::set<std::string> out;
  for (const auto& p : r.probes) {
    if (!p.agree) out.insert(p.probe);
  }
  return out;
}

TEST(CrossCheck, ADescribingTemplateAgreesOnEveryProbe) {
  auto t = chat_template(testing::bot_template);
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->analysis().tool_error.empty()) << t->analysis().tool_error;
  auto rt = testing::load(testing::bot_response_template());
  const auto r = cross_check(*t, *rt);
  EXPECT_EQ(r.probes.size(), 6u) << json::dump(r.to_json());
  EXPECT_TRUE(r.skipped.empty()) << json::dump(r.to_json());
  EXPECT_EQ(r.agreeing(), r.probes.size()) << json::dump(r.to_json());
  // The probes are the template's own text: a call turn holds the call as it renders it.
  bool saw_call = false;
  for (const auto& p : r.probes) {
    if (p.probe != "tool_call") continue;
    saw_call = true;
    EXPECT_EQ(p.output.rfind("<call>{\"name\": \"get_weather\"", 0), 0u) << p.output;
    EXPECT_EQ(p.own["tool_calls"][0]["arguments"]["days"], 3);
  }
  EXPECT_TRUE(saw_call);
  const auto j = r.to_json();
  EXPECT_EQ(j["probes"], 6);
  EXPECT_EQ(j["agree"], 6);
}

TEST(CrossCheck, ATemplateThatMissesCallsDisagreesOnTheCallProbes) {
  auto t = chat_template(testing::bot_template);
  ASSERT_TRUE(t);
  auto rt = testing::load(R"({"version": 1, "start_anchor": "[[bot]]", "fields": {
      "reasoning_content": {"open": "<think>", "close": "</think>"}, "content": {}}})");
  const auto r = cross_check(*t, *rt);
  EXPECT_EQ(disagreeing(r),
            (std::set<std::string>{"tool_call", "content_and_tool_call", "two_tool_calls"}))
      << json::dump(r.to_json());
  for (const auto& p : r.probes) {
    if (p.agree) continue;
    EXPECT_TRUE(p.own.contains("tool_calls"));
    EXPECT_FALSE(p.response_template.contains("tool_calls"));
    EXPECT_NE(p.response_template.value("content", std::string()).find("<call>"),
              std::string::npos);
  }
}

TEST(CrossCheck, AReaderThatFailsIsADisagreementWithItsError) {
  auto t = chat_template(testing::bot_template);
  ASSERT_TRUE(t);
  // Calls read as JSON but without a name: to_message rejects them.
  auto rt = testing::load(R"({"version": 1, "start_anchor": "[[bot]]", "fields": {
      "tool_calls": {"open": "<call>", "close": "</call>", "repeats": true, "content": "json",
                     "transform": {"function": {"arguments": "{content.arguments}"}}},
      "content": {}}})");
  const auto r = cross_check(*t, *rt);
  ASSERT_EQ(disagreeing(r).count("tool_call"), 1u) << json::dump(r.to_json());
  for (const auto& p : r.probes) {
    if (p.probe == "tool_call") {
      EXPECT_TRUE(p.response_template.contains("error"));
    }
  }
}

TEST(CrossCheck, TheWrittenTemplateAgreesWithItsAnalysis) {
  auto t = chat_template(testing::bot_template);
  ASSERT_TRUE(t);
  auto req = chat::request::from_json(
      json::value{{"messages", json::value::array({{{"role", "user"}, {"content", "hi"}}})}});
  ASSERT_TRUE(req);
  auto p = chat::prepare(*t, *req, {.build_gbnf = false});
  ASSERT_TRUE(p);
  auto written = write_template(t->analysis(), p->generation_prompt);
  ASSERT_TRUE(written) << written.error().to_string();
  auto rt = response_template::from_json(*written);
  ASSERT_TRUE(rt) << rt.error().to_string();
  const auto r = cross_check(*t, **rt);
  EXPECT_EQ(r.probes.size(), 6u);
  EXPECT_EQ(r.agreeing(), r.probes.size()) << json::dump(r.to_json());
}

TEST(CrossCheck, CallProbesAreSkippedWhenTheTemplateWritesNoCalls) {
  auto t = chat_template(testing::bot_template_without_calls);
  ASSERT_TRUE(t);
  auto rt =
      testing::load(R"({"version": 1, "start_anchor": "[[bot]]", "fields": {"content": {}}})");
  const auto r = cross_check(*t, *rt);
  EXPECT_EQ(r.probes.size(), 3u) << json::dump(r.to_json());
  EXPECT_EQ(r.skipped.size(), 3u);
  EXPECT_EQ(r.agreeing(), 3u) << json::dump(r.to_json());
}

}  // namespace
}  // namespace chatpeg::response

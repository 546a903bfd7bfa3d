// The grammar the gateway sends to llama.cpp: under tool_choice auto, required and a named
// function it loads with llama.cpp's loader rules (grammar::parse_gbnf's defaults), accepts
// the calls the tools declare and forbids undeclared argument keys — so a backend under it
// cannot stream an extra key — except where the schema opens the object. Checked with the
// gateway's own test template and, when the shared corpus is present, with Gemma 4 and the
// round-trip tool set (four tools, one without arguments, one with a free-form object),
// whose grammar llama-server refused before.
#include <gtest/gtest.h>

#include <string>

#include "chatpeg/grammar/gbnf.h"
#include "gateway_harness.h"
#include "support/shared_data.h"

namespace chatpeg::server {
namespace {

using testing::gateway_harness;
using testing::scripted_reply;

// The grammar sent for a request, read as llama.cpp's loader would.
struct sent_grammar {
  std::shared_ptr<const grammar::gbnf_grammar> g;
  bool lazy = false;
  std::string text;
};

sent_grammar post_and_read(gateway_harness& h, const std::string& body) {
  int status = 0;
  auto v = h.post_json("/v1/chat/completions", body, &status);
  EXPECT_EQ(status, 200) << json::dump(v);
  const auto sent = h.backend.last_request();
  sent_grammar out;
  if (!sent.contains("grammar")) {
    ADD_FAILURE() << "no grammar sent: " << json::dump(sent);
    return out;
  }
  out.text = sent["grammar"].get<std::string>();
  out.lazy = sent.value("grammar_lazy", false);
  auto g = grammar::parse_gbnf(out.text);
  if (!g) {
    ADD_FAILURE() << "llama.cpp's loader would refuse it: " << g.error().to_string() << "\n"
                  << out.text;
    return out;
  }
  out.g = *g;
  return out;
}

bool accepts(const sent_grammar& s, const std::string& output) {
  if (!s.g) return false;
  auto r = grammar::recognize(*s.g, output);
  return r && r->accepted;
}

std::string hermes_call(const std::string& args) {
  return "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + args + "}\n</tool_call>";
}

TEST(GatewayGrammar, SentGrammarForbidsUndeclaredKeys) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = {hermes_call(R"({"city": "Paris"})")}});
  const std::string open_tool =
      R"({"type":"function","function":{"name":"log","parameters":{"type":"object",
         "properties":{"event":{"type":"string"}},"additionalProperties":true}}})";
  for (const char* choice :
       {R"("auto")", R"("required")", R"({"type":"function","function":{"name":"get_weather"}})"}) {
    SCOPED_TRACE(choice);
    std::string tools(testing::weather_tools);
    tools.insert(tools.size() - 1, "," + open_tool);
    const auto s = post_and_read(
        h, std::string(R"({"messages":[{"role":"user","content":"Weather?"}],"tools":)") + tools +
               R"(,"tool_choice":)" + choice + "}");
    EXPECT_TRUE(accepts(s, hermes_call(R"({"city": "Paris", "days": 2})"))) << s.text;
    EXPECT_FALSE(accepts(s, hermes_call(R"({"city": "Paris", "mood": "sunny"})"))) << s.text;
    EXPECT_FALSE(accepts(s, hermes_call(R"({"mood": "sunny", "city": "Paris"})"))) << s.text;
    if (std::string(choice) != R"({"type":"function","function":{"name":"get_weather"}})") {
      // The open object takes any key.
      EXPECT_TRUE(accepts(s,
                          "<tool_call>\n{\"name\": \"log\", \"arguments\": {\"event\": \"x\", "
                          "\"mood\": 1}}\n</tool_call>"))
          << s.text;
    }
  }
}

TEST(GatewayGrammar, Gemma4WithTheRoundTripToolsLoads) {
  CHATPEG_REQUIRE_SHARED(shared);
  gateway_harness h(
      ::chatpeg::testing::read_file(shared / "templates" / "google-gemma-4-31B-it.jinja"));
  h.backend.reply_with(scripted_reply{
      .chunks = {"<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>"}});
  const std::string tools = R"([
    {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
      "properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},
      "required":["city"]}}},
    {"type":"function","function":{"name":"get_time","parameters":{"type":"object",
      "properties":{"timezone":{"type":"string"}},"required":["timezone"]}}},
    {"type":"function","function":{"name":"search","parameters":{"type":"object",
      "properties":{"query":{"type":"string"},"filters":{"type":"object"},"limit":{"type":"integer"}},
      "required":["query"]}}},
    {"type":"function","function":{"name":"noop","parameters":{"type":"object","properties":{}}}}])";
  for (const char* choice :
       {R"("auto")", R"("required")", R"({"type":"function","function":{"name":"search"}})"}) {
    SCOPED_TRACE(choice);
    const auto s = post_and_read(
        h, std::string(R"({"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":)") +
               tools + R"(,"tool_choice":)" + choice + "}");
    const bool named = std::string(choice).find("search") != std::string::npos;
    const std::string search =
        "<|tool_call>call:search{query:<|\"|>shoes<|\"|>,filters:{size:42,color:<|\"|>red<|\"|>}}"
        "<tool_call|>";
    EXPECT_TRUE(accepts(s, search)) << s.text;
    EXPECT_FALSE(accepts(s,
                         "<|tool_call>call:search{query:<|\"|>shoes<|\"|>,mood:<|\"|>x<|\"|>}"
                         "<tool_call|>"))
        << s.text;
    if (!named) {
      EXPECT_TRUE(accepts(s, "<|tool_call>call:noop{}<tool_call|>")) << s.text;
      EXPECT_FALSE(accepts(s, "<|tool_call>call:noop{x:1}<tool_call|>")) << s.text;
      EXPECT_FALSE(accepts(s,
                           "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:2}"
                           "<tool_call|>"))
          << s.text;
    }
  }
}

}  // namespace
}  // namespace chatpeg::server

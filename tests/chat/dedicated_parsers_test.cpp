// Dedicated parser builders (keyed by analysis.handler): sample outputs parse to the expected
// tags and the GBNF accepts them. Functionary v3.2 only so far.
#include <gtest/gtest.h>

#include "gen_test_support.h"

namespace chatpeg::chat {
namespace {

using testing::gbnf_accepts;
using testing::make_request;
using testing::parse_summary;

TEST(dedicated_parsers, functionary_v3_2) {
  analysis a;
  a.source = analysis_source::dedicated;
  a.handler = "functionary-v3.2";
  auto req = make_request(R"({"messages":[{"role":"user","content":"hi"}],"tools":[
    {"type":"function","function":{"name":"get_time","parameters":{"type":"object",
      "properties":{"tz":{"type":"string"}},"required":["tz"]}}}]})");
  auto p = generate(a, req, {.parse_prefix = ">>>"});
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"all\nHello", "content='Hello'"},
      {"get_time\n{\"tz\": \"UTC\"}", "|tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"},
      {"all\nLet me check>>>get_time\n{\"tz\": \"UTC\"}",
       "content='Let me check' |tool_name='get_time' tool_args='{\"tz\": \"UTC\"}'"},
  };
  for (const auto& [output, expected] : rows) {
    EXPECT_EQ(parse_summary(*p, output), expected) << output;
    std::string why;
    EXPECT_TRUE(gbnf_accepts(*p, output, &why)) << output << ": " << why;
  }
  // An unknown function is not a call.
  EXPECT_EQ(parse_summary(*p, "get_date\n{}"), "content='>>>get_date\n{}'");
}

TEST(dedicated_parsers, unknown_handler_uses_the_generic_generator) {
  analysis a;
  a.handler = "no-such-format";
  auto req = make_request(R"({"messages":[{"role":"user","content":"hi"}],"tools":[
    {"type":"function","function":{"name":"f"}}]})");
  auto p = generate(a, req);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code, base::errc::analysis_failed);
}

}  // namespace
}  // namespace chatpeg::chat

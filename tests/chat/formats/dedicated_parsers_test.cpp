// Dedicated parser builders (keyed by analysis.handler): sample outputs parse to the expected
// tags and the GBNF accepts them (Functionary v3.2, DeepSeek V3.2 DSML).
#include <gtest/gtest.h>

#include "chat/gen_test_support.h"

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
  // A call to an offered function that does not parse is never plain content.
  EXPECT_EQ(parse_summary(*p, "get_time\n{tz: UTC}"), "FAIL");
  EXPECT_EQ(parse_summary(*p, "all\nLet me check>>>get_time\n{\"tz\": 1"), "FAIL");
  // A continued (prefilled) text block: the prefix holds "all\nHi, " without ">>>".
  auto cont = generate(a, req, {.parse_prefix = "all\nHi, "});
  ASSERT_TRUE(cont.has_value()) << cont.error().to_string();
  EXPECT_EQ(parse_summary(*cont, "there"), "content='Hi, there'");
}

TEST(dedicated_parsers, deepseek_v3_2_dsml) {
  analysis a;
  a.handler = "deepseek-v3.2-dsml";
  tool_syntax& t = a.tools;
  t.format = tool_format::tag_with_tagged;
  t.section_start = "<｜DSML｜function_calls>\n";
  t.section_end = "</｜DSML｜function_calls>";
  t.name_prefix = "<｜DSML｜invoke name=\"";
  t.name_suffix = "\">\n";
  t.call_end = "</｜DSML｜invoke>\n";
  t.arg_name_prefix = "<｜DSML｜parameter name=\"";
  t.arg_name_suffix = "\" string=\"";
  t.arg_value_end = "</｜DSML｜parameter>\n";
  t.values = value_syntax::raw;
  auto req = make_request(R"({"messages":[{"role":"user","content":"hi"}],"tools":[
    {"type":"function","function":{"name":"f","parameters":{"type":"object",
      "properties":{"n":{"type":"integer"},"s":{"type":"string"}}}}}]})");
  auto p = generate(a, req);
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  const std::string out =
      "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"n\" "
      "string=\"false\">1</｜DSML｜parameter>\n<｜DSML｜parameter name=\"s\" string=\"true\">a "
      "b</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
  EXPECT_EQ(parse_summary(*p, out),
            "|tool_name='f' tool_arg_name='n' tool_arg_value='1' tool_arg_name='s' "
            "tool_arg_string_value='a b'");
  std::string why;
  EXPECT_TRUE(gbnf_accepts(*p, out, &why)) << why;
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

// Raw mode of compile_schema (tagged argument formats, `<parameter=x>value</parameter>`):
// string-typed positions read raw text through the caller's raw_value parser; positions that
// also allow other types try those as JSON first, each followed by the terminator; nested
// positions stay JSON. The test tags raw_value so it can see which alternative matched.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::grammar {
namespace {

constexpr const char* closer = "</parameter>";

struct raw_grammar {
  peg::grammar g;
  std::string error;
};

raw_grammar build_raw(const std::string& schema_text) {
  raw_grammar out;
  auto schema = json::parse(schema_text);
  if (!schema) {
    out.error = schema.error().to_string();
    return out;
  }
  peg::builder b;
  schema_options o;
  o.name = "arg";
  o.raw = true;
  o.raw_value = b.tag(peg::tag::tool_arg_string_value, b.until(closer));
  o.raw_terminator = b.literal(closer);
  auto c = compile_schema(b, *schema, o);
  if (!c) {
    out.error = c.error().to_string();
    return out;
  }
  auto g = b.build(b.tag(peg::tag::tool_arg_value, c->parser) + b.literal(closer));
  if (!g) {
    out.error = g.error().to_string();
    return out;
  }
  out.g = std::move(*g);
  return out;
}

// "" when the value did not match; "string:<raw text>" when raw_value matched; "json" else.
std::string how(const peg::grammar& g, const std::string& input) {
  const auto r = peg::match(g, input, peg::match_flags::complete);
  if (!r.ok()) return "";
  for (const auto& n : r.ast.nodes()) {
    if (n.tag == peg::tag::tool_arg_string_value) {
      return "string:" + std::string(r.ast.raw(n, input));
    }
  }
  return "json";
}

struct raw_case {
  const char* schema;
  std::vector<std::pair<const char*, const char*>> values;  // value text, expected how()
};

TEST(schema_raw, string_positions_read_raw_text) {
  const std::vector<raw_case> cases = {
      {R"({"type":"string"})",
       {{"Paris", "string:Paris"},
        {"", "string:"},
        {"\"quoted\"", "string:\"quoted\""},
        {"line 1\nline 2 {x}", "string:line 1\nline 2 {x}"}}},
      {R"({"type":"integer"})", {{"42", "json"}, {"Paris", ""}, {"4.5", ""}, {"42 x", ""}}},
      {R"({"type":"number"})", {{"4.5", "json"}, {"-1e3", "json"}, {"x", ""}}},
      {R"({"type":["integer","string"]})",
       {{"42", "json"}, {"42abc", "string:42abc"}, {"abc", "string:abc"}}},
      {R"({"anyOf":[{"type":"string"},{"type":"boolean"}]})",
       {{"true", "json"}, {"truex", "string:truex"}, {"false", "json"}}},
      {R"({"enum":["celsius","fahrenheit"]})",
       {{"celsius", "string:celsius"},
        {"fahrenheit", "string:fahrenheit"},
        {"kelvin", ""},
        {"celsiusx", ""},
        {"\"celsius\"", ""}}},
      {R"({"enum":["auto",3,null]})",
       {{"auto", "string:auto"}, {"3", "json"}, {"null", "json"}, {"4", ""}}},
      {R"({"const":"x"})", {{"x", "string:x"}, {"y", ""}}},
      {R"({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]})",
       {{R"({"a":"b"})", "json"}, {R"({"a":1})", ""}, {"a", ""}}},
      {R"({"type":"array","items":{"type":"string"}})", {{R"(["x","y"])", "json"}, {"[x]", ""}}},
      {R"({})", {{"[1]", "json"}, {"12", "json"}, {"hello", "string:hello"}, {"{}", "json"}}},
      {R"({"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"})", {{"x y", "string:x y"}}},
      {R"({"type":["string","null"],"maxLength":2})",
       {{"null", "json"}, {"long text", "string:long text"}}},
  };
  for (const auto& c : cases) {
    auto g = build_raw(c.schema);
    ASSERT_TRUE(g.error.empty()) << c.schema << ": " << g.error;
    for (const auto& [value, expected] : c.values) {
      EXPECT_EQ(how(g.g, std::string(value) + closer), expected) << c.schema << " value: " << value;
    }
  }
}

TEST(schema_raw, partial_raw_values_need_more_input) {
  auto g = build_raw(R"({"type":["integer","string"]})");
  ASSERT_TRUE(g.error.empty()) << g.error;
  const std::string full = std::string("Paris") + closer;
  for (std::size_t n = 0; n < full.size(); ++n) {
    const auto r =
        peg::match(g.g, full.substr(0, n), peg::match_flags::lenient | peg::match_flags::complete);
    EXPECT_EQ(r.status, peg::match_status::need_more_input) << full.substr(0, n);
  }
}

TEST(schema_raw, raw_without_parsers_is_invalid) {
  peg::builder b;
  auto s = json::parse(R"({"type":"string"})");
  ASSERT_TRUE(s.has_value());
  schema_options o;
  o.raw = true;
  auto c = compile_schema(b, *s, o);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, base::errc::invalid_argument);
}

TEST(schema_raw, raw_flag_is_recorded_in_the_schema_node) {
  peg::builder b;
  auto s = json::parse(R"({"type":"string"})");
  ASSERT_TRUE(s.has_value());
  schema_options o;
  o.raw = true;
  o.raw_value = b.until(closer);
  o.raw_terminator = b.literal(closer);
  auto c = compile_schema(b, *s, o);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(std::get<peg::nodes::schema>(b.at(c->parser.id)).raw);
}

TEST(schema_raw, length_limits_on_raw_strings_warn) {
  peg::builder b;
  auto s = json::parse(R"({"type":"string","maxLength":3})");
  ASSERT_TRUE(s.has_value());
  schema_options o;
  o.raw = true;
  o.raw_value = b.until(closer);
  o.raw_terminator = b.literal(closer);
  auto c = compile_schema(b, *s, o);
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_EQ(c->warnings[0].path, "$");
}

}  // namespace
}  // namespace chatpeg::grammar

// The content parsers and their arguments, through whole-output parsing of one region.
#include <gtest/gtest.h>

#include "chatpeg/response/response.h"
#include "response/content.h"
#include "test_support.h"

namespace chatpeg::response {
namespace {

using testing::js;

struct content_case {
  const char* name;
  const char* field;  // the region's field object without open/close
  const char* body;
  const char* want;  // the value, or "ERROR" for errc::no_match
};

const content_case kCases[] = {
    {"text strips", R"({})", "  a b \n", R"("a b")"},
    {"text strip false", R"({"content_args": {"strip": false}})", " a ", R"(" a ")"},
    {"text strips Unicode spaces", R"({})", "\u3000x\u00a0", R"("x")"},
    {"int", R"({"content": "int"})", " 42 ", "42"},
    {"negative int", R"({"content": "int"})", "-7", "-7"},
    {"int with underscores", R"({"content": "int"})", "1_000", "1000"},
    {"not an int", R"({"content": "int"})", "4.2", "ERROR"},
    {"float", R"({"content": "float"})", "2.5e1", "25.0"},
    {"not a float", R"({"content": "float"})", "nan", "ERROR"},
    {"bool", R"({"content": "bool"})", " True ", "true"},
    {"bool false", R"({"content": "bool"})", "false", "false"},
    {"anything else is false", R"({"content": "bool"})", "yes", "false"},
    {"json", R"({"content": "json"})", " {\"a\": [1, 2.5, null, true]} ",
     R"({"a": [1, 2.5, null, true]})"},
    {"json string escapes", R"({"content": "json"})", R"(["a\"b\u00e9"])", R"(["a\"bé"])"},
    {"json error", R"({"content": "json"})", "{\"a\": }", "ERROR"},
    {"json trailing text", R"({"content": "json"})", "{} x", "ERROR"},
    {"json unquoted keys", R"({"content": "json", "content_args": {"unquoted_keys": true}})",
     "{city: \"Paris\",n_2: 3}", R"({"city": "Paris", "n_2": 3})"},
    {"json unquoted keys only right after { or ,",
     R"({"content": "json", "content_args": {"unquoted_keys": true}})", "{city: 1, n: 2}", "ERROR"},
    {"json quoted keys only by default", R"({"content": "json"})", "{city: 1}", "ERROR"},
    {"json string delimiters",
     R"({"content": "json", "content_args": {"unquoted_keys": true,
        "string_delims": [["<|\"|>", "<|\"|>"]]}})",
     "{city:<|\"|>Paris, \"FR\"<|\"|>,n:1}", R"({"city": "Paris, \"FR\"", "n": 1})"},
    {"json allow_non_json", R"({"content": "json", "content_args": {"allow_non_json": true}})",
     " not json ", R"("not json")"},
    {"xml-inline",
     R"({"content": "xml-inline", "content_args": {
        "tag_pattern": "<parameter=(?P<key>\\w+)>\\n?(?P<value>.*?)\\n?</parameter>"}})",
     "<parameter=city>\nParis\n</parameter>\n<parameter=unit>c</parameter>",
     R"({"city": "Paris", "unit": "c"})"},
    {"xml-inline value_parser json",
     R"({"content": "xml-inline", "content_args": {
        "tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>",
        "value_parser": {"name": "json", "args": {"allow_non_json": true}}}})",
     "<a>1</a><b>[true]</b><c>text</c>", R"({"a": 1, "b": [true], "c": "text"})"},
    {"xml-inline duplicates: last wins",
     R"({"content": "xml-inline", "content_args": {
        "tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>"}})",
     "<a>1</a><a>2</a>", R"({"a": "2"})"},
    {"xml-inline merge_duplicates",
     R"({"content": "xml-inline", "content_args": {"merge_duplicates": true,
        "tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>"}})",
     "<a>1</a><a>2</a><a>3</a>", R"({"a": ["1", "2", "3"]})"},
    {"kv-lines", R"({"content": "kv-lines"})", "a: 1\nno separator\nb:x:y\n",
     R"({"a": "1", "b": "x:y"})"},
    {"kv-lines separators and value_parser",
     R"({"content": "kv-lines", "content_args": {"line_sep": ";", "kv_sep": "=",
        "value_parser": {"name": "int"}}})",
     "a=1; b = 2", R"({"a": 1, "b": 2})"},
    {"kv-lines strip false", R"({"content": "kv-lines", "content_args": {"strip": false}})",
     " a : 1 ", R"({" a ": " 1 "})"},
};

TEST(ResponseContent, Parsers) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    json::value field = js(c.field);
    field["open"] = "<r>";
    field["close"] = "</r>";
    json::value tmpl = js(R"({"start_anchor": "A:", "fields": {}})");
    tmpl["fields"]["r"] = field;
    auto t = response_template::from_json(tmpl);
    ASSERT_TRUE(t) << t.error().to_string();
    auto got = parse(**t, std::string("<r>") + c.body + "</r>");
    if (std::string(c.want) == "ERROR") {
      ASSERT_FALSE(got) << got->dump();
      EXPECT_EQ(got.error().code, base::errc::no_match);
      EXPECT_EQ(got.error().where.path, "$.fields.r");
      continue;
    }
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(testing::same((*got)["r"], js(c.want))) << got->dump();
  }
}

TEST(ResponseContent, DeepJsonIsBounded) {
  detail::content_spec spec;
  spec.kind = detail::content_kind::json;
  auto got = detail::parse_content(spec, std::string(100000, '['));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, base::errc::limit_exceeded);
}

TEST(ResponseContent, WhitespaceRuleMatchesPythonStrip) {
  EXPECT_EQ(detail::strip("\x1c\t a \x1f"), "a");
  EXPECT_EQ(detail::strip("\u2003x\u2009"), "x");
  EXPECT_EQ(detail::leading_space("  \xe3"), 2u);  // an incomplete sequence is not space
  EXPECT_EQ(detail::trailing_space("x \xc3"), 0u);
  EXPECT_EQ(detail::strip("\u200b"), "\u200b");  // zero-width space is not whitespace
}

}  // namespace
}  // namespace chatpeg::response

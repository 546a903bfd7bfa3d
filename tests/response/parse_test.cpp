// Whole-output parsing by the scanner's rules: regions, the implicit field, tie-breaking,
// repeats and join, empty values, defaults, the prefix cut after the last anchor, optional
// fields, and errors that name the field and the byte.
#include <gtest/gtest.h>

#include "chatpeg/response/response.h"
#include "test_support.h"

namespace chatpeg::response {
namespace {

using testing::js;
using testing::load;

struct parse_case {
  const char* name;
  const char* tmpl;
  const char* output;
  const char* prefix;
  const char* want;
};

const char* kThinkContent = R"({"start_anchor": "A:", "fields": {
  "thinking": {"open": "<think>", "close": "</think>"}, "content": {}}})";

const parse_case kCases[] = {
    {"note example", testing::chatml_template(),
     "<think>\nplan\n</think>\n\nOK.<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":1}}</"
     "tool_call>",
     "",
     R"({"role":"assistant","reasoning_content":"plan","content":"OK.","tool_calls":[{"type":"function","function":{"name":"f","arguments":{"a":1}}}]})"},
    {"implicit close is dropped", testing::chatml_template(), "Hi there<|im_end|>", "",
     R"({"role":"assistant","content":"Hi there"})"},
    {"each stretch of implicit text is one match: the last one stays", kThinkContent,
     "Hello <think>x</think>world", "", R"({"thinking":"x","content":"world"})"},
    {"a stretch that strips to nothing replaces the one before", kThinkContent,
     "Hello <think>x</think>\n", "", R"({"thinking":"x"})"},
    {"a joined implicit field keeps every stretch",
     R"({"start_anchor": "A:", "fields": {"t": {"open": "<t>", "close": "</t>"},
       "content": {"repeats": true, "join": "+"}}})",
     "Hello <t>x</t>world<t>y</t>", "", R"({"t":"y","content":"Hello+world"})"},
    {"without an implicit field outside text is dropped",
     R"({"start_anchor": "A:", "fields": {"thinking": {"open": "<t>", "close": "</t>"}}})",
     "junk<t>kept</t>junk", "", R"({"thinking":"kept"})"},
    {"the end of output closes an open region", kThinkContent, "<think>unfinished", "",
     R"({"thinking":"unfinished"})"},
    {"earliest match wins", R"({"start_anchor": "A:", "fields": {
       "a": {"open": "<b>", "close": "</b>"}, "b": {"open": "<a>", "close": "</a>"}}})",
     "<a>1</a><b>2</b>", "", R"({"a":"2","b":"1"})"},
    {"on a tie the longest match wins", R"({"start_anchor": "A:", "fields": {
       "short": {"open": "<x", "close": ">"}, "long": {"open": "<xy", "close": ">"}}})",
     "<xyz>", "", R"({"long":"z"})"},
    {"on a tie of start and length an open beats the implicit close",
     R"({"start_anchor": "A:", "fields": {
       "r": {"open": "##", "close": "!"}, "content": {"close": "##"}}})",
     "a##b!c", "", R"({"r":"b","content":"c"})"},
    {"a list of open literals", R"({"start_anchor": "A:", "fields": {
       "t": {"open": ["<think>", "<thinking>"], "close": ["</think>", "</thinking>"]},
       "content": {}}})",
     "<thinking>deep</thinking>out", "", R"({"t":"deep","content":"out"})"},
    {"regions are flat: an open inside a region is text", kThinkContent,
     "<think>a<think>b</think>c", "", R"({"thinking":"a<think>b","content":"c"})"},
    {"a non-repeating field matched twice keeps the last value", kThinkContent,
     "<think>one</think><think>two</think>", "", R"({"thinking":"two"})"},
    {"repeats collect a list", R"({"start_anchor": "A:", "fields": {
       "x": {"open": "[", "close": "]", "repeats": true}}})",
     "[a][b][c]", "", R"({"x":["a","b","c"]})"},
    {"join concatenates repeated matches", R"({"start_anchor": "A:", "fields": {
       "x": {"open": "[", "close": "]", "repeats": true, "join": "+"}}})",
     "[a] [b]", "", R"({"x":"a+b"})"},
    {"empty values are dropped", kThinkContent, "<think>  </think>", "", R"({})"},
    {"defaults are kept, also over an empty value",
     R"({"defaults": {"role": "assistant", "content": ""}, "start_anchor": "A:",
         "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "content": {}}})",
     "<think>t</think>", "", R"({"role":"assistant","content":"","thinking":"t"})"},
    {"prefix rest after the last anchor is scanned first", kThinkContent, "plan</think>answer",
     "A:old<think>x</think>A:<think>\n", R"({"thinking":"plan","content":"answer"})"},
    {"a prefix without the anchor is scanned whole", kThinkContent, "plan</think>answer", "<think>",
     R"({"thinking":"plan","content":"answer"})"},
    {"the anchor is not looked for in the output", kThinkContent, "A:<think>t</think>",
     "A:", R"({"thinking":"t","content":"A:"})"},
    {"start_anchor_pattern", R"({"start_anchor_pattern": "<\\|turn\\|>\\w+\\n", "fields": {
       "thinking": {"open": "<think>", "close": "</think>"}, "content": {}}})",
     "x</think>y", "<|turn|>model\n<think>", R"({"thinking":"x","content":"y"})"},
    {"open_pattern with named groups feeds the transform",
     R"({"start_anchor": "A:", "fields": {"tool_calls": {
       "open_pattern": "<function=(?P<name>[\\w.-]+)>", "close": "</function>", "repeats": true,
       "content": "json",
       "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}},
       "content": {}}})",
     "ok<function=get_weather>{\"city\": \"Paris\"}</function>", "",
     R"({"content":"ok","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]})"},
    {"close_pattern groups are not in scope (only the open's)",
     R"j({"start_anchor": "A:", "fields": {"x": {"open": "<", "close_pattern": ">(?P<tag>\\d+)",
       "transform": {"v": "{content}", "t": "{tag}"}}}})j",
     "<a>12", "", "ERROR"},
    {"regex is Unicode-aware", R"({"start_anchor": "A:", "fields": {"n": {
       "open_pattern": "@(?P<w>\\w+):", "close": ";", "transform": "{w}"}}})",
     "@città:x;", "", R"({"n":"città"})"},
    {"regex dot matches newlines", R"({"start_anchor": "A:", "fields": {"n": {
       "open_pattern": "<a.b>", "close": "</a>"}}})",
     "<a\nb>v</a>", "", R"({"n":"v"})"},
    {"lookarounds", R"({"start_anchor": "A:", "fields": {"n": {
       "open_pattern": "(?<=\\n)CALL ", "close": "\n"}, "content": {}}})",
     "say CALL x\nCALL y\n", "", R"({"n":"y","content":"say CALL x"})"},
};

TEST(ResponseParse, Cases) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    auto t = load(c.tmpl);
    ASSERT_TRUE(t);
    parse_options o;
    o.prefix = c.prefix;
    auto got = parse(*t, c.output, o);
    if (std::string_view(c.want) == "ERROR") {
      ASSERT_FALSE(got) << got->dump();
      EXPECT_EQ(got.error().code, base::errc::no_match);
      continue;
    }
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(testing::same(*got, js(c.want))) << got->dump();
  }
}

TEST(ResponseParse, NotOptionalAndNeverMatchedIsAnError) {
  auto t = load(R"({"start_anchor": "A:", "fields": {
    "answer": {"open": "<a>", "close": "</a>", "optional": false}, "content": {}}})");
  ASSERT_TRUE(t);
  auto got = parse(*t, "just text");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, base::errc::no_match);
  EXPECT_EQ(got.error().where.path, "$.fields.answer");
  EXPECT_TRUE(parse(*t, "<a>yes</a>"));
}

TEST(ResponseParse, BodyErrorsNameTheFieldAndTheByte) {
  auto t = load(R"({"start_anchor": "A:", "fields": {
    "n": {"open": "<n>", "close": "</n>", "content": "int"}, "content": {}}})");
  ASSERT_TRUE(t);
  auto got = parse(*t, "abc<n>x1</n>");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, base::errc::no_match);
  EXPECT_EQ(got.error().where.path, "$.fields.n");
  EXPECT_EQ(got.error().where.offset, 6u);  // the body starts after "abc<n>"
  EXPECT_NE(got.error().message.find("\"n\""), std::string::npos);
}

TEST(ResponseParse, InvalidUtf8NeverMatchesAndIsKept) {
  auto t = load(kThinkContent);
  ASSERT_TRUE(t);
  auto got = parse(*t, std::string("a\xff<think>b\xc3</think>"));
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ((*got)["thinking"].get<std::string>(), "b\xc3");
}

TEST(ResponseParse, CastsStringArgumentsByTheToolSchema) {
  auto t = load(R"({"start_anchor": "A:", "fields": {"tool_calls": {
    "open_pattern": "<call name=\"(?P<name>\\w+)\">", "close": "</call>", "repeats": true,
    "content": "xml-inline",
    "content_args": {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>"},
    "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}}}})");
  ASSERT_TRUE(t);
  parse_options o;
  o.tools = js(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
    "properties": {"n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
    "s": {"type": "string"}, "o": {"type": "object"}, "l": {"type": ["array", "null"]},
    "bad": {"type": "integer"}}}}}])");
  auto got = parse(*t,
                   "<call name=\"f\"><n>3</n><x>2.5</x><b>true</b><s>3</s><o>{\"k\": 1}</o>"
                   "<l>[1]</l><bad>three</bad></call>",
                   o);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ((*got)["tool_calls"][0]["function"]["arguments"],
            js(R"({"n":3,"x":2.5,"b":true,"s":"3","o":{"k":1},"l":[1],"bad":"three"})"));
}

}  // namespace
}  // namespace chatpeg::response

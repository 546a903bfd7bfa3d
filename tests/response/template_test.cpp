// Validation of response templates: one row per rule, each naming the JSON path of the error.
#include <gtest/gtest.h>

#include "chatpeg/response/response.h"
#include "test_support.h"

namespace chatpeg::response {
namespace {

using testing::js;

struct invalid_case {
  const char* name;
  const char* tmpl;
  base::errc code;
  const char* path;
};

const invalid_case kInvalid[] = {
    {"not an object", R"([1])", base::errc::invalid_argument, "$"},
    {"unknown top-level key", R"({"start_anchor": "a", "fields": {"c": {}}, "extra": 1})",
     base::errc::invalid_argument, "$.extra"},
    {"version other than 1", R"({"version": 2, "start_anchor": "a", "fields": {"c": {}}})",
     base::errc::unsupported, "$.version"},
    {"no anchor", R"({"fields": {"c": {}}})", base::errc::invalid_argument, "$"},
    {"two anchors", R"({"start_anchor": "a", "start_anchor_pattern": "b", "fields": {"c": {}}})",
     base::errc::invalid_argument, "$"},
    {"empty anchor", R"({"start_anchor": "", "fields": {"c": {}}})", base::errc::invalid_argument,
     "$.start_anchor"},
    {"anchor pattern does not compile", R"({"start_anchor_pattern": "(", "fields": {"c": {}}})",
     base::errc::syntax_error, "$.start_anchor_pattern"},
    {"defaults not an object", R"({"defaults": [], "start_anchor": "a", "fields": {"c": {}}})",
     base::errc::invalid_argument, "$.defaults"},
    {"no fields", R"({"start_anchor": "a"})", base::errc::invalid_argument, "$.fields"},
    {"empty fields", R"({"start_anchor": "a", "fields": {}})", base::errc::invalid_argument,
     "$.fields"},
    {"field not an object", R"({"start_anchor": "a", "fields": {"c": 1}})",
     base::errc::invalid_argument, "$.fields.c"},
    {"unknown field key", R"({"start_anchor": "a", "fields": {"c": {"opn": "x"}}})",
     base::errc::invalid_argument, "$.fields.c.opn"},
    {"two implicit fields", R"({"start_anchor": "a", "fields": {"c": {}, "d": {}}})",
     base::errc::invalid_argument, "$.fields.d"},
    {"open and open_pattern", R"({"start_anchor": "a", "fields": {
       "c": {"open": "x", "open_pattern": "y"}}})",
     base::errc::invalid_argument, "$.fields.c.open_pattern"},
    {"close and close_pattern", R"({"start_anchor": "a", "fields": {
       "c": {"open": "x", "close": "y", "close_pattern": "z"}}})",
     base::errc::invalid_argument, "$.fields.c.close_pattern"},
    {"empty open literal", R"({"start_anchor": "a", "fields": {"c": {"open": ""}}})",
     base::errc::invalid_argument, "$.fields.c.open"},
    {"empty list of opens", R"({"start_anchor": "a", "fields": {"c": {"open": []}}})",
     base::errc::invalid_argument, "$.fields.c.open"},
    {"open list with a number", R"({"start_anchor": "a", "fields": {"c": {"open": ["x", 1]}}})",
     base::errc::invalid_argument, "$.fields.c.open[1]"},
    {"bad open_pattern", R"({"start_anchor": "a", "fields": {"c": {"open_pattern": "[a"}}})",
     base::errc::syntax_error, "$.fields.c.open_pattern"},
    {"join without repeats", R"({"start_anchor": "a", "fields": {"c": {"open": "x", "join": ""}}})",
     base::errc::invalid_argument, "$.fields.c.join"},
    {"repeats not a boolean", R"({"start_anchor": "a", "fields": {"c": {"open": "x",
       "repeats": "yes"}}})",
     base::errc::invalid_argument, "$.fields.c.repeats"},
    {"optional not a boolean", R"({"start_anchor": "a", "fields": {"c": {"optional": 0}}})",
     base::errc::invalid_argument, "$.fields.c.optional"},
    {"unknown content parser", R"({"start_anchor": "a", "fields": {"c": {"content": "yaml"}}})",
     base::errc::invalid_argument, "$.fields.c.content"},
    {"unknown content arg", R"({"start_anchor": "a", "fields": {"c": {"content": "json",
       "content_args": {"strict": true}}}})",
     base::errc::invalid_argument, "$.fields.c.content_args.strict"},
    {"int takes only strip", R"({"start_anchor": "a", "fields": {"c": {"content": "int",
       "content_args": {"unquoted_keys": true}}}})",
     base::errc::invalid_argument, "$.fields.c.content_args.unquoted_keys"},
    {"named groups without a transform", R"({"start_anchor": "a", "fields": {"c": {
       "open_pattern": "<(?P<n>\\w+)>"}}})",
     base::errc::invalid_argument, "$.fields.c"},
    {"string_delims not pairs", R"({"start_anchor": "a", "fields": {"c": {"content": "json",
       "content_args": {"string_delims": [["<"]]}}}})",
     base::errc::invalid_argument, "$.fields.c.content_args.string_delims[0]"},
    {"xml-inline without tag_pattern", R"({"start_anchor": "a", "fields": {"c": {
       "content": "xml-inline"}}})",
     base::errc::invalid_argument, "$.fields.c.content_args"},
    {"tag_pattern without a value group", R"({"start_anchor": "a", "fields": {"c": {
       "content": "xml-inline", "content_args": {"tag_pattern": "<(?P<key>\\w+)>"}}}})",
     base::errc::invalid_argument, "$.fields.c.content_args.tag_pattern"},
    {"unknown value_parser", R"({"start_anchor": "a", "fields": {"c": {"content": "kv-lines",
       "content_args": {"value_parser": {"name": "xml"}}}}})",
     base::errc::invalid_argument, "$.fields.c.content_args.value_parser.name"},
    {"empty kv_sep", R"({"start_anchor": "a", "fields": {"c": {"content": "kv-lines",
       "content_args": {"kv_sep": ""}}}})",
     base::errc::invalid_argument, "$.fields.c.content_args.kv_sep"},
    {"mixed placeholder", R"({"start_anchor": "a", "fields": {"c": {"open": "x",
       "transform": {"v": "a {content} b"}}}})",
     base::errc::invalid_argument, "$.fields.c.transform.v"},
    {"placeholder out of scope", R"({"start_anchor": "a", "fields": {"c": {"open": "x",
       "transform": ["{name}"]}}})",
     base::errc::invalid_argument, "$.fields.c.transform[0]"},
    {"transform_each without transform", R"({"start_anchor": "a", "fields": {"c": {"open": "x",
       "transform_each": true}}})",
     base::errc::invalid_argument, "$.fields.c.transform_each"},
};

TEST(ResponseTemplate, EveryRuleHasAnErrorWithItsPath) {
  for (const auto& c : kInvalid) {
    SCOPED_TRACE(c.name);
    auto t = response_template::from_json(js(c.tmpl));
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code, c.code) << t.error().to_string();
    EXPECT_EQ(t.error().where.path, c.path) << t.error().to_string();
  }
}

TEST(ResponseTemplate, ValidShapesLoad) {
  for (const char* text : {
           R"({"start_anchor": "a", "fields": {"c": {}}})",
           R"({"version": 1, "start_anchor": ["a", "b"], "fields": {"c": {"close": "x"}}})",
           R"({"start_anchor_pattern": "a+", "fields": {"t": {"open_pattern": "<(?P<n>\\w+)>",
               "transform": {"x": "{n}", "y": "{content.k}", "z": "{}", "w": 3}}}})",
           R"({"start_anchor": "a", "fields": {"t": {"open": "[", "content": "json",
               "transform_each": true, "transform": {"name": "{tool_name}"}}}})",
       }) {
    auto t = response_template::from_json(js(text));
    EXPECT_TRUE(t) << text << ": " << (t ? "" : t.error().to_string());
  }
}

TEST(ResponseTemplate, FieldNamesAndImplicitField) {
  auto t = testing::load(testing::chatml_template());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->field_names(),
            (std::vector<std::string>{"reasoning_content", "tool_calls", "content"}));
  EXPECT_EQ(t->implicit_field(), "content");
}

TEST(ResponseTemplate, FromTextReadsATokenizerConfig) {
  const std::string config = std::string(R"({"chat_template": "x", "response_template": )") +
                             testing::chatml_template() + "}";
  auto t = response_template::from_text(config);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ((*t)->implicit_field(), "content");

  auto bad = response_template::from_text(R"({"response_template": {"fields": {}}})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where.path, "$.response_template");

  auto old = response_template::from_text(R"({"response_schema": {"type": "object"}})");
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().code, base::errc::unsupported);
  EXPECT_EQ(old.error().where.path, "$.response_schema");

  auto none = response_template::from_text(R"({"chat_template": "x"})");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, base::errc::invalid_argument);

  auto not_json = response_template::from_text("{");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.error().code, base::errc::syntax_error);

  auto absent = response_template::from_config(js(R"({"chat_template": "x"})"));
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->has_value());
}

}  // namespace
}  // namespace chatpeg::response

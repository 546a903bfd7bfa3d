// Schemas compiled in each literal syntax (schema_options::syntax): JSON, Gemma 4 and Python
// spellings of the same values, typed and closed the same way; checked with the PEG matcher
// and with the exported GBNF (llama.cpp loader rules on), which must agree. any_value is the
// untyped value of each syntax.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "chatpeg/peg/matcher.h"
#include "schema_test_support.h"

namespace chatpeg::grammar {
namespace {

struct syntax_case {
  const char* name;
  literal_syntax syntax;
  const char* schema;
  const char* value;
  bool accepted;
};
void PrintTo(const syntax_case& c, std::ostream* os) {
  *os << c.name;
}

class literal_syntax_table : public ::testing::TestWithParam<syntax_case> {};

TEST_P(literal_syntax_table, matcher_and_gbnf_agree) {
  const auto& c = GetParam();
  test::expect_both_decide(c.schema, {.undeclared = undeclared_keys::closed, .syntax = c.syntax},
                           c.value, c.accepted);
}

constexpr auto gemma = literal_syntax::gemma;
constexpr auto python = literal_syntax::python;
constexpr auto json_syntax = literal_syntax::json;

const char* const trip = R"({"type":"object","properties":{
    "city":{"type":"string"},"n":{"type":"integer"},"ok":{"type":"boolean"},
    "mode":{"enum":["train","plane",null]},
    "stops":{"type":"array","items":{"type":"object","properties":{"c":{"type":"string"}}}}},
    "required":["city"]})";

INSTANTIATE_TEST_SUITE_P(
    table, literal_syntax_table,
    ::testing::Values(
        // The same value in each spelling.
        syntax_case{
            "json", json_syntax, trip,
            R"({"city": "Paris", "n": 2, "ok": true, "mode": "train", "stops": [{"c": "Lyon"}]})",
            true},
        syntax_case{
            "gemma", gemma, trip,
            R"({city:<|"|>Paris<|"|>,n:2,ok:true,mode:<|"|>train<|"|>,stops:[{c:<|"|>Lyon<|"|>}]})",
            true},
        syntax_case{"gemma_quoted_keys_and_words", gemma, trip,
                    R"({<|"|>city<|"|>: <|"|>Paris<|"|>, ok: False, mode: None})", true},
        syntax_case{
            "python", python, trip,
            R"({'city': 'Paris', 'n': 2, 'ok': True, 'mode': 'train', 'stops': [{'c': "Lyon"}]})",
            true},
        syntax_case{"python_json_words", python, trip,
                    R"({"city": "Paris", "ok": false, "mode": null})", true},
        // Typed: a string where an integer goes, a value outside the enum.
        syntax_case{"gemma_wrong_type", gemma, trip, R"({city:<|"|>P<|"|>,n:<|"|>two<|"|>})",
                    false},
        syntax_case{"python_wrong_type", python, trip, R"({'city': 'P', 'n': 'two'})", false},
        syntax_case{"gemma_enum", gemma, trip, R"({city:<|"|>P<|"|>,mode:<|"|>car<|"|>})", false},
        syntax_case{"python_enum", python, trip, R"({'city': 'P', 'mode': 'car'})", false},
        // Closed, nested too: no undeclared key.
        syntax_case{"gemma_undeclared", gemma, trip, R"({city:<|"|>P<|"|>,mood:1})", false},
        syntax_case{"gemma_nested_undeclared", gemma, trip,
                    R"({city:<|"|>P<|"|>,stops:[{c:<|"|>L<|"|>,x:1}]})", false},
        syntax_case{"python_nested_undeclared", python, trip,
                    R"({'city': 'P', 'stops': [{'c': 'L', 'x': 1}]})", false},
        // Opened by the schema: any other key, typed by additionalProperties.
        syntax_case{
            "gemma_open", gemma,
            R"({"type":"object","properties":{"a":{}},"additionalProperties":{"type":"integer"}})",
            R"({a:[1],b:2,<|"|>c d<|"|>:3})", true},
        syntax_case{
            "gemma_open_typed", gemma,
            R"({"type":"object","properties":{"a":{}},"additionalProperties":{"type":"integer"}})",
            R"({b:<|"|>x<|"|>})", false},
        syntax_case{"python_open", python,
                    R"({"type":"object","properties":{"a":{}},"additionalProperties":true})",
                    R"({'a': [1, 2], 'b': {'x': None, 'y': (1,)}})", true},
        // An untyped object is any object in the syntax.
        syntax_case{"gemma_free_object", gemma, R"({"type":"object"})",
                    R"({size:42,tags:[<|"|>a<|"|>],deep:{x:null}})", true},
        syntax_case{"python_free_object", python, R"({"type":"object"})",
                    R"({'size': 42, "tags": ['a',], 'deep': {'x': None}})", true},
        // String constants in the syntax's own escaping.
        syntax_case{"python_const_escapes", python, R"({"const":"it's \\ \"x\""})",
                    R"('it\'s \\ "x"')", true},
        syntax_case{"python_const_double", python, R"({"const":"it's"})", R"("it's")", true},
        syntax_case{"gemma_const", gemma, R"({"const":"a \"b\""})", R"(<|"|>a "b"<|"|>)", true}),
    [](const auto& tc) { return std::string(tc.param.name); });

TEST(any_value, every_syntax) {
  struct row {
    literal_syntax syntax;
    const char* value;
  };
  for (const row& r :
       {row{json_syntax, R"({"a": [1, "x", null]})"}, row{gemma, R"({a:[1,<|"|>x<|"|>,None]})"},
        row{python, R"({'a': [1, "x", None, (True,)],})"}}) {
    peg::builder b;
    auto g = b.build(any_value(b, r.syntax, b.space(), "v") + b.end());
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    EXPECT_TRUE(peg::match(*g, r.value, peg::match_flags::complete).ok()) << r.value;
    EXPECT_FALSE(peg::match(*g, "{a", peg::match_flags::complete).ok());
  }
}

}  // namespace
}  // namespace chatpeg::grammar

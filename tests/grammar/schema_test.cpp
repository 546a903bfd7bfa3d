// Table-driven tests of compile_schema: each row is a schema and JSON texts with the expected
// verdict of a complete match. For every accepted text, every prefix is matched leniently
// and must never fail (need_more_input unless the prefix is itself accepted) — the property
// the streaming parser relies on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"
#include "grammar/schema_test_support.h"

namespace chatpeg::grammar {
namespace {

struct value_case {
  const char* text;
  bool accept;
};

struct schema_case {
  const char* name;
  const char* schema;
  std::vector<value_case> values;
};

const std::vector<schema_case>& table() {
  static const std::vector<schema_case> cases = {
      {"string",
       R"({"type":"string"})",
       {{R"("abc")", true},
        {R"("")", true},
        {R"("a\"b\\c\n\u00e9")", true},
        {R"(123)", false},
        {R"("abc)", false},
        {R"(null)", false}}},
      {"integer",
       R"({"type":"integer"})",
       {{"0", true},
        {"-12", true},
        {"1.5", false},
        {"1e3", false},
        {R"("1")", false},
        {"01", false},
        {"-", false}}},
      {"number",
       R"({"type":"number"})",
       {{"1.5", true},
        {"-0.25e+3", true},
        {"1", true},
        {".5", false},
        {"1.", false},
        {"true", false}}},
      {"boolean",
       R"({"type":"boolean"})",
       {{"true", true}, {"false", true}, {R"("true")", false}, {"1", false}}},
      {"null", R"({"type":"null"})", {{"null", true}, {"nul", false}, {"0", false}}},
      {"nullable_type_array",
       R"({"type":["string","null"]})",
       {{R"("x")", true}, {"null", true}, {"1", false}}},
      // Type names as clients write them (standard_type): the JSON Schema type they mean; a
      // name without a clear meaning is any value.
      {"lenient_float", R"({"type":"float"})", {{"1.5", true}, {"2", true}, {R"("1.5")", false}}},
      {"lenient_int", R"({"type":"int"})", {{"3", true}, {"1.5", false}, {R"("3")", false}}},
      {"lenient_str", R"({"type":"str"})", {{R"("x")", true}, {"1", false}}},
      {"lenient_dict",
       R"({"type":"dict","properties":{"a":{"type":"int"}}})",
       {{R"({"a": 1})", true}, {R"({"a": "1"})", false}, {"[]", false}}},
      {"lenient_list",
       R"({"type":"list","items":{"type":"bool"}})",
       {{"[true, false]", true}, {"[1]", false}, {"{}", false}}},
      {"lenient_bool", R"({"type":"bool"})", {{"true", true}, {"1", false}}},
      {"lenient_upper_case", R"({"type":"STRING"})", {{R"("x")", true}, {"1", false}}},
      {"lenient_any",
       R"({"type":"any"})",
       {{"1", true}, {R"("x")", true}, {R"({"k": [null]})", true}, {"nope", false}}},
      {"lenient_unknown_name",
       R"({"type":"datetime"})",
       {{R"("2024-01-01")", true}, {"7", true}, {"nope", false}}},
      {"lenient_type_array",
       R"({"type":["str","int","none"]})",
       {{R"("x")", true}, {"1", true}, {"null", true}, {"1.5", false}, {"[]", false}}},
      {"lenient_type_array_with_unknown",
       R"({"type":["string","uuid"]})",
       {{R"("x")", true}, {"1", true}, {"[]", true}}},
      {"lenient_no_type", R"({"description":"anything"})", {{"1", true}, {R"({"a":1})", true}}},
      {"lenient_required_undeclared",
       R"({"type":"object","properties":{"a":{"type":"int"}},"required":["a","b"],
           "additionalProperties":false})",
       {{R"({"a": 1, "b": "x"})", true}, {R"({"a": 1})", false}, {R"({"a": 1, "c": 2})", false}}},
      {"lenient_required_not_a_list",
       R"({"type":"object","properties":{"a":{"type":"int"}},"required":"a"})",
       {{R"({"a": 1})", true}, {"{}", true}}},
      {"integer_or_number",
       R"({"type":["integer","number"]})",
       {{"1", true}, {"1.5", true}, {"x", false}}},
      {"any_array",
       R"({"type":"array"})",
       {{"[]", true}, {R"([1,"a",[null]])", true}, {"{}", false}}},
      {"any_object", R"({"type":"object"})", {{"{}", true}, {R"({"a":[1]})", true}, {"[]", false}}},
      {"integer_items",
       R"({"type":"array","items":{"type":"integer"}})",
       {{"[1, 2 ,3]", true}, {"[ ]", true}, {R"([1,"a"])", false}, {"[1,]", false}}},
      {"min_max_items",
       R"({"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2})",
       {{"[]", false}, {R"(["a"])", true}, {R"(["a", "b"])", true}, {R"(["a","b","c"])", false}}},
      {"prefix_items_closed",
       R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})",
       {{R"(["a",1])", true},
        {R"(["a"])", true},
        {"[]", true},
        {R"(["a",1,2])", false},
        {R"([1,"a"])", false}}},
      {"prefix_items_then_items",
       R"({"prefixItems":[{"type":"boolean"}],"items":{"type":"null"},"minItems":2})",
       {{"[true,null]", true},
        {"[true]", false},
        {"[true, null, null]", true},
        {"[true,1]", false}}},
      {"tuple_items_draft4",
       R"({"type":"array","items":[{"type":"integer"}],"additionalItems":false})",
       {{"[1]", true}, {"[1,2]", false}, {"[]", true}}},
      {"required_closed",
       R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},
           "required":["a","b"],"additionalProperties":false})",
       {{R"({"a":1,"b":"x"})", true},
        {R"({"b":"x","a":1})", true},
        {R"({ "a" : 1 , "b" : "x" })", true},
        {R"({"a":1})", false},
        {R"({"a":1,"b":"x","c":2})", false},
        {R"({"a":1,"a":2,"b":"x"})", false},
        {R"({"a":"1","b":"x"})", false},
        {R"({"a":1,"b":"x",})", false}}},
      {"optional_keys_any_order",
       R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},
           "c":{"type":"integer"}},"required":["b"],"additionalProperties":false})",
       {{R"({"b":1})", true},
        {R"({"c":1,"b":1})", true},
        {R"({"a":1,"c":1,"b":1})", true},
        {R"({"c":1,"b":1,"a":1})", true},
        {"{}", false},
        {R"({"a":1})", false},
        {R"({"b":1,"b":1})", false}}},
      {"additional_default_true",
       R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})",
       {{R"({"a":1,"z":[true]})", true},
        {R"({"z":1,"a":1})", true},
        {R"({"z":1})", false},
        {R"({"a":"s"})", false},
        {R"({"a":1,"a":1})", false}}},
      {"additional_schema_only",
       R"({"type":"object","additionalProperties":{"type":"integer"}})",
       {{R"({"x":1,"y":2})", true}, {R"({"x":"s"})", false}, {"{}", true}}},
      {"additional_schema_with_properties",
       R"({"properties":{"name":{"type":"string"}},"additionalProperties":{"type":"number"}})",
       {{R"({"name":"n","k":1.5})", true},
        {R"({"k":2,"name":"n"})", true},
        {R"({"name":1})", false},
        {R"({"k":"s"})", false}}},
      {"many_keys_declared_order",
       R"({"type":"object","properties":{"p1":{"type":"integer"},"p2":{"type":"integer"},
           "p3":{"type":"integer"},"p4":{"type":"integer"},"p5":{"type":"integer"},
           "p6":{"type":"integer"},"p7":{"type":"integer"},"p8":{"type":"integer"}},
           "required":["p1","p5"],"additionalProperties":false})",
       {{R"({"p1":1,"p5":5})", true},
        {R"({"p1":1,"p2":2,"p3":3,"p4":4,"p5":5,"p6":6,"p7":7,"p8":8})", true},
        {R"({"p1":1,"p2":2,"p5":5,"p8":8})", true},
        {R"({"p5":5,"p1":1})", false},  // beyond max_permute_keys: declared order only
        {R"({"p1":1})", false},
        {R"({"p1":1,"p5":5,"p9":9})", false},
        {R"({"p1":1,"p5":5,"p5":5})", false}}},
      {"many_keys_with_additional",
       R"({"type":"object","properties":{"p1":{"type":"integer"},"p2":{"type":"integer"},
           "p3":{"type":"integer"},"p4":{"type":"integer"},"p5":{"type":"integer"},
           "p6":{"type":"integer"},"p7":{"type":"integer"}},"required":["p1","p5"]})",
       {{R"({"p1":1,"x":0,"p5":5,"y":[]})", true},
        {R"({"x":0,"p1":1,"p5":5})", true},
        {R"({"p1":1,"p5":"no"})", false}}},
      {"nested_objects",
       R"({"type":"object","properties":{"user":{"type":"object","properties":{
           "name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},
           "required":["name"]}},"required":["user"]})",
       {{R"({"user":{"name":"a","tags":["x","y"]}})", true},
        {R"({"user":{"tags":[]}})", false},
        {R"({"user":{"name":"a","tags":[1]}})", false}}},
      {"enum_strings",
       R"({"enum":["red","green"]})",
       {{R"("red")", true}, {R"("green")", true}, {R"("blue")", false}, {R"("re")", false}}},
      {"enum_mixed",
       R"({"enum":[1,"a",null,true,[1,2],{"k":"v"}]})",
       {{"1", true},
        {"12", false},
        {R"("a")", true},
        {"null", true},
        {"true", true},
        {"false", false},
        {"[1, 2]", true},
        {"[1,2,3]", false},
        {R"({ "k" : "v" })", true},
        {R"({"k":"w"})", false},
        {"1.0", false}}},
      {"const_string",
       R"({"const":"fixed"})",
       {{R"("fixed")", true}, {R"("other")", false}, {R"("fixe")", false}}},
      {"const_number", R"({"const":3})", {{"3", true}, {"30", false}, {"3.5", false}}},
      {"const_escapes",
       R"({"const":"café/x😀"})",
       {{R"("café/x😀")", true},
        {R"("caf\u00e9\/x\ud83d\ude00")", true},
        {R"("caf\u00E9/x\uD83D\uDE00")", true},
        {R"("cafe/x😀")", false}}},
      {"const_object",
       R"({"const":{"a":[1,{"b":null}]}})",
       {{R"({"a":[1,{"b":null}]})", true},
        {R"({ "a" : [ 1 , { "b" : null } ] })", true},
        {R"({"a":[1]})", false}}},
      {"string_length",
       R"({"type":"string","minLength":2,"maxLength":3})",
       {{R"("ab")", true},
        {R"("abc")", true},
        {R"("a")", false},
        {R"("abcd")", false},
        {R"("\n\t")", true},
        {R"("é€")", true},
        {R"("\u00e9")", false},
        {R"("😀")", false},
        {R"("\ud83d\ude00x")", true},
        {R"("a😀")", true},
        {R"("\"\\\/")", true},
        {R"("\"\\\/\b")", false}}},
      {"string_max_zero",
       R"({"type":"string","maxLength":0})",
       {{R"("")", true}, {R"("a")", false}}},
      {"nullable_keyword",
       R"({"type":"string","nullable":true})",
       {{"null", true}, {R"("a")", true}, {"1", false}}},
      {"any_of",
       R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})",
       {{"5", true}, {R"("a")", true}, {R"("ab")", false}, {"1.5", false}}},
      {"any_of_integer_then_number",
       R"({"anyOf":[{"type":"integer"},{"type":"number"}]})",
       {{"1.5", true}, {"2", true}, {"2e5", true}}},
      {"one_of_objects",
       R"({"oneOf":[
           {"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},
            "required":["kind","x"],"additionalProperties":false},
           {"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"string"}},
            "required":["kind","y"],"additionalProperties":false}]})",
       {{R"({"kind":"a","x":1})", true},
        {R"({"kind":"b","y":"s"})", true},
        {R"({"y":"s","kind":"b"})", true},
        {R"({"kind":"a","y":"s"})", false}}},
      {"all_of_objects",
       R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
           {"properties":{"b":{"type":"boolean"}},"required":["b"]}],
           "additionalProperties":false})",
       {{R"({"a":1,"b":true})", true},
        {R"({"b":true,"a":2})", true},
        {R"({"a":1})", false},
        {R"({"a":1,"b":true,"c":1})", false}}},
      {"any_of_with_siblings",
       R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
           "anyOf":[{"required":["a"]},{"required":["b"]}],"additionalProperties":false})",
       {{R"({"a":1})", true}, {R"({"b":1})", true}, {R"({"a":1,"b":2})", true}, {"{}", false}}},
      {"ref_defs",
       R"({"$defs":{"pos":{"type":"integer"}},"type":"array","items":{"$ref":"#/$defs/pos"}})",
       {{"[1,2]", true}, {R"(["a"])", false}}},
      {"ref_definitions",
       R"({"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}},
           "required":["a"]})",
       {{R"({"a":"x"})", true}, {R"({"a":1})", false}}},
      {"recursive_tree",
       R"({"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},
           "children":{"type":"array","items":{"$ref":"#/$defs/node"}}},
           "required":["value"],"additionalProperties":false}},"$ref":"#/$defs/node"})",
       {{R"({"value":1})", true},
        {R"({"value":1,"children":[{"value":2,"children":[]},{"value":3}]})", true},
        {R"({"children":[{"value":2,"children":[{"value":4}]}],"value":1})", true},
        {R"({"value":1,"children":[{"children":[]}]})", false},
        {R"({"value":1,"children":[{"value":"x"}]})", false}}},
      {"recursive_root",
       R"({"type":"object","properties":{"name":{"type":"string"},
           "next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},
           "required":["name","next"],"additionalProperties":false})",
       {{R"({"name":"a","next":null})", true},
        {R"({"name":"a","next":{"name":"b","next":null}})", true},
        {R"({"name":"a","next":{"name":"b"}})", false}}},
      {"empty_schema",
       R"({})",
       {{"1", true}, {R"({"a":[]})", true}, {R"("s")", true}, {"nope", false}}},
      {"true_schema", "true", {{"null", true}, {"[1]", true}, {"[1", false}}},
      {"false_schema", "false", {{"1", false}, {"null", false}, {"{}", false}}},
      {"inferred_object",
       R"({"properties":{"a":{"type":"integer"}},"required":["a"]})",
       {{R"({"a":1})", true}, {R"("x")", false}}},
      {"enum_filtered_by_type",
       R"({"type":"string","enum":["a",1]})",
       {{R"("a")", true}, {"1", false}}},
      {"unenforced_string_keywords",
       R"({"type":"string","pattern":"^a+$","format":"date"})",
       {{R"("zzz")", true}, {"1", false}}},
      {"unenforced_number_keywords",
       R"({"type":"integer","minimum":0,"maximum":10})",
       {{"100", true}, {"-5", true}, {R"("5")", false}}},
      {"closed_empty_object",
       R"({"type":"object","additionalProperties":false})",
       {{"{}", true}, {"{ }", true}, {R"({"a":1})", false}}},
      {"enum_items_max",
       R"({"type":"array","items":{"enum":["x","y"]},"maxItems":3})",
       {{R"(["x","y","x"])", true}, {R"(["x","x","x","x"])", false}, {R"(["z"])", false}}},
      {"special_keys",
       R"({"properties":{"a\"b":{"type":"integer"},"ünï":{"type":"string"}},
           "required":["a\"b"],"additionalProperties":false})",
       {{R"({"a\"b":1,"ünï":"x"})", true},
        {R"({"ünï":"x","a\"b":1})", true},
        {R"({"a\"b":1,"\u00fcn\u00EF":"x"})", true},
        {R"({"ünï":"x"})", false}}},
      {"pretty_printed",
       R"({"type":"array","items":{"type":"object","properties":{"k":{"type":"boolean"}}}})",
       {{"[\n  {\n    \"k\": true\n  },\n  {}\n]", true}, {"[{\"k\": 1}]", false}}},
      {"array_or_object",
       R"({"type":["array","object"],"items":{"type":"integer"},
           "properties":{"a":{"type":"integer"}},"additionalProperties":false})",
       {{"[1]", true}, {R"({"a":1})", true}, {R"({"a":"x"})", false}, {R"(["x"])", false}}},
      {"six_keys_permuted",
       R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},
           "c":{"type":"integer"},"d":{"type":"integer"},"e":{"type":"integer"},
           "f":{"type":"integer"}},"required":["a","f"],"additionalProperties":false})",
       {{R"({"f":1,"e":1,"d":1,"c":1,"b":1,"a":1})", true},
        {R"({"c":1,"f":1,"a":1})", true},
        {R"({"c":1,"f":1})", false},
        {R"({"a":1,"f":1,"a":1})", false}}},
      {"all_of_ref_and_siblings",
       R"({"$defs":{"base":{"type":"object","properties":{"id":{"type":"integer"}},
           "required":["id"]}},"$ref":"#/$defs/base","properties":{"n":{"type":"string"}},
           "additionalProperties":false})",
       {{R"({"id":1,"n":"x"})", true},
        {R"({"id":1})", true},
        {R"({"n":"x"})", false},
        {R"({"id":1,"z":2})", false}}},
      {"empty_enum", R"({"enum":[]})", {{"1", false}, {R"("")", false}}},
      {"any_of_with_false", R"({"anyOf":[false,{"type":"null"}]})", {{"null", true}, {"1", false}}},
      {"huge_max_length",
       R"({"type":"string","maxLength":1e10})",
       {{R"("abc")", true}, {"1", false}}},
      {"additional_keys_exclude_declared_prefixes",
       R"({"properties":{"ab":{"type":"integer"},"abc":{"type":"integer"}},
           "additionalProperties":{"type":"string"}})",
       {{R"({"ab":1,"abc":2})", true},
        {R"({"ab":"x"})", false},
        {R"({"abc":"x"})", false},
        {R"({"a":"x","abcd":"y","":"z"})", true},
        {R"({"ab\n":"x","\u0061b":"y"})", true}}},
      {"additional_keys_exclude_escaped_declared",
       R"({"properties":{"a\"b":{"type":"integer"},"é":{"type":"integer"}},
           "additionalProperties":{"type":"string"}})",
       {{R"({"a\"b":1,"é":2})", true},
        {R"({"a\"b":"s"})", false},
        {R"({"é":"s"})", false},
        {R"({"a\"c":"s","a\\b":"t","éé":"u"})", true}}},
      {"all_of_type_intersection",
       R"({"allOf":[{"type":["integer","string"]},{"type":"number"},{"minimum":0}]})",
       {{"1", true}, {"1.5", false}, {R"("a")", false}}},
      {"pattern_properties_loosen_closed_objects",
       R"({"type":"object","properties":{"a":{"type":"integer"}},
           "patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false})",
       {{R"({"a":1,"x-y":"s"})", true},
        {R"({"zzz":"s"})", true},  // patterns are not enforced: any key, pattern schemas
        {R"({"x-y":1})", false},
        {R"({"a":"s"})", false}}},
      {"conditionals_loosen_closed_objects",
       R"({"type":"object","properties":{"a":{"type":"string"}},
           "if":{"properties":{"a":{"const":"x"}}},"then":{"properties":{"b":{"type":"integer"}}},
           "additionalProperties":false})",
       {{R"({"a":"x","b":1})", true}, {R"({"a":1})", false}}},
      {"contradictory_lengths",
       R"({"type":"string","minLength":3,"maxLength":2})",
       {{R"("abc")", false}, {R"("ab")", false}}},
  };
  return cases;
}

void PrintTo(const schema_case& c, std::ostream* os) {
  *os << c.name;
}

class schema_table : public ::testing::TestWithParam<schema_case> {};

TEST_P(schema_table, matches_exactly_the_valid_values) {
  const auto& c = GetParam();
  auto compiled = test::compile_text(c.schema);
  ASSERT_TRUE(compiled.ok()) << compiled.error;
  for (const auto& v : c.values) {
    const auto r = peg::match(compiled.grammar, v.text, peg::match_flags::complete);
    EXPECT_EQ(r.ok(), v.accept) << "value: " << v.text
                                << "\nstatus: " << peg::match_status_name(r.status) << " "
                                << r.error.to_string();
  }
}

TEST_P(schema_table, prefixes_of_accepted_values_need_more_input) {
  const auto& c = GetParam();
  auto compiled = test::compile_text(c.schema);
  ASSERT_TRUE(compiled.ok()) << compiled.error;
  const auto lenient = peg::match_flags::lenient | peg::match_flags::complete;
  for (const auto& v : c.values) {
    if (!v.accept) continue;
    const std::string text = v.text;
    for (std::size_t n = 0; n < text.size(); ++n) {
      const std::string prefix = text.substr(0, n);
      const auto r = peg::match(compiled.grammar, prefix, lenient);
      EXPECT_NE(r.status, peg::match_status::fail)
          << "prefix of " << text << ": '" << prefix << "' " << r.error.to_string();
      if (!peg::match(compiled.grammar, prefix, peg::match_flags::complete).ok()) {
        EXPECT_EQ(r.status, peg::match_status::need_more_input)
            << "prefix of " << text << ": '" << prefix << "'";
      }
    }
  }
}

// The exported GBNF must accept every value the PEG accepts (constrained decoding must never
// forbid a valid answer) and should reject the others; lookaheads (not a declared key, no
// longer number) are dropped by the export, so a few rejections are known to be looser.
TEST_P(schema_table, exported_gbnf_agrees) {
  const auto& c = GetParam();
  auto compiled = test::compile_text(c.schema);
  ASSERT_TRUE(compiled.ok()) << compiled.error;
  auto text = peg::export_gbnf(compiled.grammar);
  ASSERT_TRUE(text.has_value()) << text.error().to_string();
  auto gbnf = parse_gbnf(*text);
  ASSERT_TRUE(gbnf.has_value()) << gbnf.error().to_string() << "\n" << *text;
  for (const auto& v : c.values) {
    auto r = recognize(**gbnf, v.text);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    EXPECT_EQ(r->accepted, v.accept) << "value: " << v.text << "\n" << *text;
  }
}

INSTANTIATE_TEST_SUITE_P(schemas, schema_table, ::testing::ValuesIn(table()),
                         [](const ::testing::TestParamInfo<schema_case>& info) {
                           return std::string(info.param.name);
                         });

TEST(schema_table_size, has_enough_cases) {
  std::size_t values = 0;
  for (const auto& c : table()) values += c.values.size();
  EXPECT_GE(table().size(), 40u);
  EXPECT_GE(values, 200u);
}

}  // namespace
}  // namespace chatpeg::grammar

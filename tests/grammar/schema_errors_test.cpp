// compile_schema's diagnostics: warnings (with JSON paths) for keywords it accepts but does
// not enforce, invalid_argument (with JSON paths) for malformed schemas, limit_exceeded for
// the depth and node budgets, and the shape of what it creates (unique, GBNF-safe rule names;
// grammar size linear in the number of properties beyond the permutation bound).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "chatpeg/grammar/schema.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"
#include "grammar/schema_test_support.h"

namespace chatpeg::grammar {
namespace {

using test::compile_text;

struct warning_case {
  const char* schema;
  std::vector<std::string> paths;  // expected warning paths, in order
};

TEST(schema_warnings, list_unenforced_keywords_with_paths) {
  const std::vector<warning_case> cases = {
      {R"({"type":"string","pattern":"^a","format":"date"})", {"$.pattern", "$.format"}},
      {R"({"properties":{"a":{"type":"integer","minimum":0,"multipleOf":2}}})",
       {"$.properties.a.minimum", "$.properties.a.multipleOf"}},
      {R"({"type":"array","items":{"type":"array","uniqueItems":true}})", {"$.items.uniqueItems"}},
      {R"({"type":"object","patternProperties":{"^x":{}},"propertyNames":{"maxLength":3}})",
       {"$.patternProperties", "$.propertyNames"}},
      {R"({"if":{},"then":{},"else":{},"not":{"type":"null"}})",
       {"$.if", "$.then", "$.else", "$.not"}},
      {R"({"type":"object","dependentRequired":{"a":["b"]},"minProperties":1})",
       {"$.dependentRequired", "$.minProperties"}},
      {R"({"oneOf":[{"type":"string"},{"type":"integer"}]})", {"$.oneOf"}},
      {R"({"type":"string","x-vendor":1})", {"$[\"x-vendor\"]"}},
      {R"({"type":"object","dependentSchemas":{"a":{}},"additionalProperties":false})",
       {"$.dependentSchemas", "$.additionalProperties"}},
      {R"({"type":"array","items":{"type":"string","maxLength":5000},"minItems":2000})",
       {"$.minItems", "$.items.maxLength"}},
      {R"({"$defs":{"s":{"type":"string","format":"email"}},"$ref":"#/$defs/s"})",
       {"$[\"$defs\"].s.format"}},
      {R"({"$defs":{"a/b":{"type":"string","format":"email"}},"$ref":"#/$defs/a~1b"})",
       {"$[\"$defs\"][\"a/b\"].format"}},
      {R"({"type":"string","title":"t","description":"d","default":"x","examples":["y"],
           "$schema":"https://json-schema.org/draft/2020-12/schema","$comment":"c"})",
       {}},
  };
  for (const auto& c : cases) {
    auto r = compile_text(c.schema);
    ASSERT_TRUE(r.ok()) << c.schema << "\n" << r.error;
    std::vector<std::string> paths;
    for (const auto& w : r.warnings) {
      paths.push_back(w.path);
      EXPECT_FALSE(w.message.empty());
    }
    EXPECT_EQ(paths, c.paths) << c.schema;
  }
}

TEST(schema_warnings, message_names_the_keyword) {
  auto r = compile_text(R"({"type":"string","pattern":"^a"})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].message.find("'pattern'"), std::string::npos);
  EXPECT_NE(r.warnings[0].message.find("not enforced"), std::string::npos);
}

// A type or required list a template can render but JSON Schema does not define is any value
// (or ignored), with a warning at its path, never an error.
TEST(schema_warnings, loose_types_and_required_lists_warn) {
  struct row {
    const char* schema;
    const char* path;
  };
  for (const row& c :
       {row{R"({"type":5})", "$.type"}, row{R"({"type":"strin"})", "$.type"},
        row{R"({"type":["string",3]})", "$.type[1]"}, row{R"({"type":[]})", "$.type"},
        row{R"({"required":"a"})", "$.required"}, row{R"({"required":["a",1]})", "$.required[1]"},
        row{R"({"properties":{"a":{"type":{}}}})", "$.properties.a.type"}}) {
    auto r = compile_text(c.schema);
    ASSERT_TRUE(r.ok()) << c.schema << ": " << r.error;
    ASSERT_EQ(r.warnings.size(), 1u) << c.schema;
    EXPECT_EQ(r.warnings[0].path, c.path) << c.schema;
  }
}

struct error_case {
  const char* schema;
  base::errc code;
  const char* path;
};

TEST(schema_errors, malformed_schemas_name_the_json_path) {
  using base::errc;
  const std::vector<error_case> cases = {
      {R"({"properties":{"a":3}})", errc::invalid_argument, "$.properties.a"},
      {R"({"properties":[]})", errc::invalid_argument, "$.properties"},
      {R"({"$ref":"#/$defs/nope"})", errc::invalid_argument, "$[\"$ref\"]"},
      {R"({"items":{"$ref":"#/definitions/x"}})", errc::invalid_argument, "$.items[\"$ref\"]"},
      {R"({"anyOf":[]})", errc::invalid_argument, "$.anyOf"},
      {R"({"anyOf":[{"type":"string"},7]})", errc::invalid_argument, "$.anyOf[1]"},
      {R"({"minLength":-1})", errc::invalid_argument, "$.minLength"},
      {R"({"maxItems":"3"})", errc::invalid_argument, "$.maxItems"},
      {R"({"maxLength":1e300})", errc::invalid_argument, "$.maxLength"},
      {R"({"minItems":1.5})", errc::invalid_argument, "$.minItems"},
      {R"({"enum":"a"})", errc::invalid_argument, "$.enum"},
      {R"({"additionalProperties":"no"})", errc::invalid_argument, "$.additionalProperties"},
      {R"({"prefixItems":{}})", errc::invalid_argument, "$.prefixItems"},
      {R"({"$ref":3})", errc::invalid_argument, "$[\"$ref\"]"},
      {R"({"$defs":[]})", errc::invalid_argument, "$[\"$defs\"]"},
      {R"({"nullable":"yes"})", errc::invalid_argument, "$.nullable"},
      {R"(3)", errc::invalid_argument, "$"},
      {R"({"allOf":[{"type":"object"},"x"]})", errc::invalid_argument, "$.allOf[1]"},
  };
  for (const auto& c : cases) {
    auto r = compile_text(c.schema);
    ASSERT_FALSE(r.compiled) << c.schema;
    EXPECT_EQ(r.compile_error.code, c.code) << c.schema << ": " << r.error;
    EXPECT_EQ(r.compile_error.where.path, c.path) << c.schema << ": " << r.error;
    EXPECT_FALSE(r.compile_error.message.empty());
  }
}

TEST(schema_errors, cyclic_bare_refs_are_invalid) {
  auto r = compile_text(
      R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})");
  ASSERT_FALSE(r.compiled);
  EXPECT_EQ(r.compile_error.code, base::errc::invalid_argument);
  EXPECT_NE(r.compile_error.message.find("cyclic"), std::string::npos) << r.error;
}

TEST(schema_errors, left_recursion_is_invalid) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"anyOf":[{"$ref":"#"},{"type":"null"}]})", "$"},
      {R"({"$defs":{"a":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/b"}]},
           "b":{"allOf":[{"$ref":"#/$defs/a"}]}},"type":"array","items":{"$ref":"#/$defs/a"}})",
       "$[\"$defs\"].b"},
  };
  for (const auto& [schema, path] : cases) {
    auto r = compile_text(schema);
    ASSERT_FALSE(r.compiled) << schema;
    EXPECT_EQ(r.compile_error.code, base::errc::invalid_argument) << r.error;
    EXPECT_EQ(r.compile_error.where.path, path) << r.error;
    EXPECT_NE(r.compile_error.message.find("left recursion"), std::string::npos) << r.error;
  }
  // Recursion through a container is fine.
  auto ok = compile_text(R"({"anyOf":[{"type":"array","items":{"$ref":"#"}},{"type":"null"}]})");
  ASSERT_TRUE(ok.ok()) << ok.error;
  EXPECT_TRUE(peg::match(ok.grammar, "[[null],[]]", peg::match_flags::complete).ok());
}

TEST(schema_errors, cyclic_all_of_hits_the_depth_limit) {
  auto r = compile_text(R"({"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"})");
  ASSERT_FALSE(r.compiled);
  EXPECT_EQ(r.compile_error.code, base::errc::limit_exceeded) << r.error;
}

TEST(schema_limits, depth) {
  std::string schema = R"({"type":"integer"})";
  for (int i = 0; i < 80; ++i) schema = R"({"type":"array","items":)" + schema + "}";
  auto deep = compile_text(schema, {.max_depth = 64});
  ASSERT_FALSE(deep.compiled);
  EXPECT_EQ(deep.compile_error.code, base::errc::limit_exceeded);
  EXPECT_FALSE(deep.compile_error.where.path.empty());
  auto ok = compile_text(schema, {.max_depth = 100});
  ASSERT_TRUE(ok.ok()) << ok.error;
  const std::string value = std::string(81, '[') + std::string(81, ']');
  EXPECT_FALSE(peg::match(ok.grammar, value, peg::match_flags::complete).ok());
  const std::string good = std::string(80, '[') + "7" + std::string(80, ']');
  EXPECT_TRUE(peg::match(ok.grammar, good, peg::match_flags::complete).ok());
}

std::string many_properties(int n, bool all_required) {
  std::string props, req;
  for (int i = 0; i < n; ++i) {
    if (i) {
      props += ",";
      req += ",";
    }
    props += "\"k" + std::to_string(i) + "\":{\"type\":\"integer\"}";
    req += "\"k" + std::to_string(i) + "\"";
  }
  return R"({"type":"object","properties":{)" + props + "}" +
         (all_required ? R"(,"required":[)" + req + "]" : std::string()) + "}";
}

TEST(schema_limits, node_budget) {
  auto r = compile_text(many_properties(30, false), {.max_nodes = 50});
  ASSERT_FALSE(r.compiled);
  EXPECT_EQ(r.compile_error.code, base::errc::limit_exceeded) << r.error;
}

TEST(schema_shape, grammar_size_is_linear_beyond_the_permutation_bound) {
  auto g20 = compile_text(many_properties(20, true));
  auto g40 = compile_text(many_properties(40, true));
  ASSERT_TRUE(g20.ok() && g40.ok()) << g20.error << g40.error;
  // Twice the properties, about twice the nodes (never a blow-up).
  EXPECT_LT(g40.grammar.size(), 2 * g20.grammar.size() + 100);
  EXPECT_LT(g40.grammar.size(), 40u * 40u);
  // Six keys permute: 2^6 state rules, still small.
  auto g6 = compile_text(many_properties(6, false));
  ASSERT_TRUE(g6.ok()) << g6.error;
  EXPECT_LT(g6.grammar.size(), 3000u);
}

std::size_t gbnf_size(const std::string& schema) {
  auto r = compile_text(schema);
  EXPECT_TRUE(r.ok()) << r.error;
  if (!r.ok()) return 0;
  auto text = peg::export_gbnf(r.grammar);
  EXPECT_TRUE(text.has_value());
  return text.has_value() ? text->size() : 0;
}

std::string nested_arrays(int depth) {
  std::string s =
      R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}}})";
  for (int i = 0; i < depth; ++i) s = R"({"type":"array","minItems":1,"items":)" + s + "}";
  return s;
}

TEST(schema_shape, exported_gbnf_stays_linear_when_subtrees_are_reused) {
  // Array items appear twice in the grammar (first, then ", item"*) and object members once
  // per permutation state: they are named rules, so nesting does not multiply the text.
  const std::size_t d6 = gbnf_size(nested_arrays(6));
  const std::size_t d12 = gbnf_size(nested_arrays(12));
  EXPECT_LT(d12, 2 * d6 + 200) << d6 << " " << d12;
  std::string inner = many_properties(6, false);
  std::string outer = R"({"type":"object","properties":{)";
  for (int i = 0; i < 6; ++i) {
    outer += (i ? "," : "") + std::string("\"o") + std::to_string(i) + "\":" + inner;
  }
  outer += "}}";
  const std::size_t one = gbnf_size(inner);
  const std::size_t nested = gbnf_size(outer);
  EXPECT_LT(nested, 12 * one) << one << " " << nested;
}

TEST(schema_shape, rule_names_are_unique_and_gbnf_safe) {
  peg::builder b;
  auto s1 = json::parse(R"({"type":"object","properties":{"a":{"$ref":"#/$defs/x y"}},
                            "$defs":{"x y":{"type":"object","properties":{"b":{}}}}})");
  ASSERT_TRUE(s1.has_value());
  auto c1 = compile_schema(b, *s1, {.name = "my tool.v2"});
  auto c2 = compile_schema(b, *s1, {.name = "my tool.v2"});  // same name again
  auto c3 = compile_schema(b, *s1, {.name = "json"});        // clashes with json-* rules
  ASSERT_TRUE(c1 && c2 && c3);
  auto g = b.build(c1->parser + c2->parser + c3->parser);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  const std::regex safe("[a-zA-Z0-9-]+");
  std::size_t mine = 0;
  for (const auto id : g->rules()) {
    const auto& name = std::get<peg::nodes::rule>(g->at(id)).name;
    EXPECT_TRUE(std::regex_match(name, safe)) << name;
    if (name.rfind("my-tool-v2", 0) == 0) ++mine;
  }
  EXPECT_GT(mine, 0u);
  const std::string value = R"({"a":{"b":1}}{"a":{}}{})";
  EXPECT_TRUE(peg::match(*g, value, peg::match_flags::complete).ok());
}

TEST(schema_shape, wraps_in_a_schema_node) {
  peg::builder b;
  auto s = json::parse(R"({"type":"string"})");
  ASSERT_TRUE(s.has_value());
  auto c = compile_schema(b, *s, {.name = "tool-0-args"});
  ASSERT_TRUE(c.has_value());
  const auto* node = std::get_if<peg::nodes::schema>(&b.at(c->parser.id));
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->name, "tool-0-args");
  EXPECT_EQ(node->schema_json, R"({"type":"string"})");
  EXPECT_FALSE(node->raw);
}

}  // namespace
}  // namespace chatpeg::grammar

// Hostile schemas: deep nesting, recursive $ref in every form, enormous enums,
// long and pathological patterns, huge repetition counts, plus the downstream steps a schema
// grammar goes through (build/validate, GBNF export, GBNF reader + recognizer, serialization,
// matching deeply nested values). Every case must end with a typed error beyond an explicit
// limit (schema_options::max_depth / max_nodes / max_repeat / max_enum_values, ...) or a
// grammar whose size we assert through counters — never a crash or a stack overflow. No
// wall-clock assertions: sizes and error codes only.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/grammar/serialize.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"
#include "grammar/schema_test_support.h"

namespace chatpeg::grammar {
namespace {

using test::compile_text;

std::string nested(const char* open, const char* close, int depth, const std::string& leaf) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  s += leaf;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

// A schema nested `depth` times, built as a value (json::parse refuses such depth itself; a
// caller holding a json::value does not go through it). wrap(inner) gives one level.
template <class F>
json::value nest(int depth, json::value leaf, F wrap) {
  json::value v = std::move(leaf);
  for (int i = 0; i < depth; ++i) v = wrap(std::move(v));
  return v;
}

json::value obj(std::initializer_list<std::pair<const char*, json::value>> kv) {
  json::value o = json::value::object();
  for (const auto& [k, v] : kv) o[k] = v;
  return o;
}

TEST(hostile_schema, json_reader_refuses_ten_thousand_levels) {
  const auto r = compile_text(nested(R"({"type":"array","items":)", "}", 10000, "{}"));
  ASSERT_FALSE(r.compiled);
  EXPECT_NE(r.error.find("nesting deeper than"), std::string::npos) << r.error;
}

TEST(hostile_schema, ten_thousand_nested_schemas_hit_max_depth) {
  // Each wrap moves the inner schema in (no copies: building stays linear).
  using wrap_fn = json::value (*)(json::value);
  const std::vector<std::pair<const char*, wrap_fn>> shapes = {
      {"array items",
       [](json::value in) {
         json::value o = obj({{"type", "array"}});
         o["items"] = std::move(in);
         return o;
       }},
      {"object properties",
       [](json::value in) {
         json::value o = obj({{"type", "object"}, {"required", {"a"}}});
         o["properties"] = json::value::object();
         o["properties"]["a"] = std::move(in);
         return o;
       }},
      {"anyOf",
       [](json::value in) {
         json::value o = json::value::object();
         o["anyOf"] = json::value::array();
         o["anyOf"].push_back(std::move(in));
         return o;
       }},
      {"allOf",
       [](json::value in) {
         json::value o = json::value::object();
         o["allOf"] = json::value::array();
         o["allOf"].push_back(std::move(in));
         return o;
       }},
      {"prefixItems",
       [](json::value in) {
         json::value o = json::value::object();
         o["prefixItems"] = json::value::array();
         o["prefixItems"].push_back(std::move(in));
         return o;
       }},
      {"additionalProperties",
       [](json::value in) {
         json::value o = obj({{"type", "object"}});
         o["additionalProperties"] = std::move(in);
         return o;
       }},
      {"not (unenforced)",
       [](json::value in) {
         json::value o = json::value::object();
         o["not"] = std::move(in);
         return o;
       }},
  };
  for (const auto& [name, wrap] : shapes) {
    SCOPED_TRACE(name);
    const json::value schema = nest(10000, obj({{"type", "integer"}}), wrap);
    peg::builder b;
    auto c = compile_schema(b, schema);
    // Beyond schema_max_value_depth as a value: refused before compiling anything.
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error().code, base::errc::limit_exceeded) << c.error().to_string();
    EXPECT_NE(c.error().message.find("deeper than"), std::string::npos);
    EXPECT_EQ(b.size(), 0u);
    // 100 levels (under the value bound, over max_depth 64): the compiler's own limit, with
    // the JSON path of the level that crossed it.
    peg::builder b1;
    auto c1 = compile_schema(b1, nest(100, obj({{"type", "integer"}}), wrap));
    if (std::string(name) == "not (unenforced)") {
      // An unenforced keyword is not descended into: one warning, a tiny grammar.
      ASSERT_TRUE(c1.has_value()) << c1.error().to_string();
      EXPECT_LE(b1.size(), 128u);
      continue;
    }
    ASSERT_FALSE(c1.has_value());
    EXPECT_EQ(c1.error().code, base::errc::limit_exceeded) << c1.error().to_string();
    EXPECT_NE(c1.error().message.find(std::to_string(schema_options{}.max_depth)),
              std::string::npos)
        << c1.error().to_string();
    EXPECT_FALSE(c1.error().where.path.empty());
    // The builder holds what was compiled before the limit: bounded by the depth limit.
    EXPECT_LE(b1.size(), 64u * 64u);
    // Within a raised limit the same shape compiles (200 levels).
    peg::builder b2;
    auto ok = compile_schema(b2, nest(200, obj({{"type", "integer"}}), wrap), {.max_depth = 256});
    EXPECT_TRUE(ok.has_value()) << ok.error().to_string();
  }
}

TEST(hostile_schema, long_ref_chain_is_rules_not_recursion) {
  // 2,000 definitions each referring to the next inside an array: refs compile as rules
  // (no nesting depth), the node budget bounds the size, and every later stage stays
  // iterative or depth-bounded on the result.
  json::value defs = json::value::object();
  for (int i = 0; i < 2000; ++i) {
    defs["d" + std::to_string(i)] =
        obj({{"type", "array"}, {"items", obj({{"$ref", "#/$defs/d" + std::to_string(i + 1)}})}});
  }
  defs["d2000"] = obj({{"type", "integer"}});
  const json::value schema = obj({{"$defs", defs}, {"$ref", "#/$defs/d0"}});
  peg::builder b;
  auto c = compile_schema(b, schema);
  if (!c) {
    EXPECT_EQ(c.error().code, base::errc::limit_exceeded) << c.error().to_string();
    EXPECT_LE(b.size(), schema_options{}.max_nodes + 256);
    return;
  }
  EXPECT_LE(b.size(), schema_options{}.max_nodes + 256);
  auto g = b.build(c->parser);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  auto text = peg::export_gbnf(*g);
  ASSERT_TRUE(text.has_value()) << text.error().to_string();
  auto gbnf = parse_gbnf(*text);
  ASSERT_TRUE(gbnf.has_value()) << gbnf.error().to_string();
  auto loaded = from_json(to_json(*g));
  ASSERT_TRUE(loaded.has_value()) << loaded.error().to_string();
  EXPECT_EQ(loaded->size(), g->size());
  // A value 2,000 arrays deep is beyond the matcher's max_depth: a typed error.
  const std::string deep = nested("[", "]", 2000, "1");
  const auto m = peg::match(*g, deep, peg::match_flags::complete);
  EXPECT_EQ(m.error.code, base::errc::limit_exceeded) << m.error.to_string();
}

TEST(hostile_schema, deep_const_and_enum_values) {
  for (const char* key : {"const", "enum"}) {
    SCOPED_TRACE(key);
    // Built by moves: copying (or dumping) a value this deep would itself recurse 100,000 deep.
    json::value deep = nest(100000, json::value(1), [](json::value in) {
      json::value a = json::value::array();
      a.push_back(std::move(in));
      return a;
    });
    json::value schema = json::value::object();
    if (std::string(key) == "enum") {
      schema[key] = json::value::array();
      schema[key].push_back(std::move(deep));
    } else {
      schema[key] = std::move(deep);
    }
    peg::builder b;
    auto c = compile_schema(b, schema);
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error().code, base::errc::limit_exceeded) << c.error().to_string();
    EXPECT_LE(b.size(), 64u);
  }
  // Below the value bound but beyond max_depth: the const/enum check names the keyword.
  json::value shallow = nest(100, json::value(1), [](json::value in) {
    json::value a = json::value::array();
    a.push_back(std::move(in));
    return a;
  });
  json::value schema = json::value::object();
  schema["const"] = std::move(shallow);
  peg::builder b;
  auto c = compile_schema(b, schema);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, base::errc::limit_exceeded);
  EXPECT_EQ(c.error().where.path, "$.const") << c.error().to_string();
}

TEST(hostile_schema, recursive_refs) {
  struct ref_case {
    const char* name;
    const char* schema;
    std::optional<base::errc> error;  // nullopt: compiles
    const char* accepted;
  };
  const std::vector<ref_case> cases = {
      {"self bare", R"({"$ref":"#"})", base::errc::invalid_argument, nullptr},
      {"mutual bare", R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},
                          "$ref":"#/$defs/a"})",
       base::errc::invalid_argument, nullptr},
      {"self through anyOf", R"({"anyOf":[{"type":"null"},{"$ref":"#"}]})",
       base::errc::invalid_argument, nullptr},
      {"mutual through anyOf",
       R"({"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"type":"integer"}]},
                    "b":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"})",
       base::errc::invalid_argument, nullptr},
      {"self through allOf", R"({"allOf":[{"$ref":"#"}]})", base::errc::limit_exceeded, nullptr},
      {"self inside array", R"({"type":"array","items":{"$ref":"#"}})", std::nullopt,
       "[[],[[[]]]]"},
      {"mutual inside objects",
       R"({"$defs":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b"}}},
                    "b":{"type":"array","items":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"})",
       std::nullopt, R"({"b":[{"b":[]},{}]})"},
      {"anyOf recursion behind input",
       R"({"anyOf":[{"type":"integer"},{"type":"array","items":{"$ref":"#"}}]})", std::nullopt,
       "[1,[2,[3]]]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = compile_text(c.schema);
    if (c.error) {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.compile_error.code, *c.error) << r.error;
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(peg::match(r.grammar, c.accepted, peg::match_flags::complete).ok());
    // Recursion through a rule: the GBNF round trip terminates and agrees.
    auto text = peg::export_gbnf(r.grammar);
    ASSERT_TRUE(text.has_value()) << text.error().to_string();
    auto gbnf = parse_gbnf(*text);
    ASSERT_TRUE(gbnf.has_value()) << gbnf.error().to_string();
    auto rec = recognize(**gbnf, c.accepted);
    ASSERT_TRUE(rec.has_value());
    EXPECT_TRUE(rec->accepted);
  }
}

TEST(hostile_schema, recursive_schema_on_deeply_nested_values) {
  const auto r = compile_text(R"({"type":"array","items":{"$ref":"#"}})");
  ASSERT_TRUE(r.ok()) << r.error;
  // 100,000 '[': the matcher's max_depth ends it with a typed error, strict or lenient.
  const std::string deep(100000, '[');
  for (const auto flags : {peg::match_flags::none, peg::match_flags::lenient}) {
    const auto m = peg::match(r.grammar, deep, flags);
    EXPECT_EQ(m.status, peg::match_status::fail);
    EXPECT_EQ(m.error.code, base::errc::limit_exceeded) << m.error.to_string();
    EXPECT_NE(m.error.message.find("max_depth"), std::string::npos);
  }
  // Within the limit it matches; the recognizer on the exported GBNF handles the same depth.
  const std::string ok = nested("[", "]", 200, "");
  EXPECT_TRUE(peg::match(r.grammar, ok, peg::match_flags::complete).ok());
  auto gbnf = parse_gbnf(*peg::export_gbnf(r.grammar));
  ASSERT_TRUE(gbnf.has_value());
  auto rec = recognize(**gbnf, nested("[", "]", 20000, ""));
  if (rec) {
    EXPECT_TRUE(rec->accepted);
  } else {
    EXPECT_EQ(rec.error().code, base::errc::limit_exceeded);
  }
}

std::string big_enum(std::size_t n) {
  std::string s = R"({"enum":[)";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += ",";
    s += "\"value-" + std::to_string(i) + "\"";
  }
  return s + "]}";
}

TEST(hostile_schema, enormous_enum_is_bounded) {
  // 100,000 values: beyond max_enum_values, a typed error naming the limit.
  const auto r = compile_text(big_enum(100000));
  ASSERT_FALSE(r.compiled) << "compiled an enum of 100000 values";
  EXPECT_EQ(r.compile_error.code, base::errc::limit_exceeded) << r.error;
  EXPECT_NE(r.compile_error.message.find("enum"), std::string::npos) << r.error;
  // Raising the limits lets it through, with a node count linear in the values.
  peg::builder b;
  auto s = json::parse(big_enum(100000));
  ASSERT_TRUE(s.has_value());
  auto c = compile_schema(b, *s, {.max_nodes = 1000000, .max_enum_values = 200000});
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  EXPECT_LE(b.size(), 3u * 100000u + 64u);
  auto g = b.build(c->parser);
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(peg::match(*g, "\"value-99999\"", peg::match_flags::complete).ok());
  EXPECT_FALSE(peg::match(*g, "\"value-100000\"", peg::match_flags::complete).ok());
  // At the default limit it compiles within the default node budget.
  const auto at_limit = compile_text(big_enum(schema_options{}.max_enum_values));
  ASSERT_TRUE(at_limit.ok()) << at_limit.error;
  EXPECT_LE(at_limit.grammar.size(), schema_options{}.max_nodes);
}

TEST(hostile_schema, long_and_pathological_patterns_are_warnings) {
  const std::vector<std::string> patterns = {
      std::string(1 << 20, 'a'),                          // 1 MB
      "(a+)+$",                                           // catastrophic backtracking shape
      std::string(50000, '(') + std::string(50000, ')'),  // deep groups
      "[\\",                                              // malformed
      "\\u{110000}\xFF\xFE",                              // invalid escapes and bytes
  };
  for (const auto& p : patterns) {
    json::value schema = json::value::object();
    schema["type"] = "string";
    schema["pattern"] = p;
    peg::builder b;
    auto c = compile_schema(b, schema);
    if (!c) {
      // Invalid UTF-8 in the pattern may be refused; the error is typed.
      EXPECT_NE(c.error().message, "");
      continue;
    }
    ASSERT_EQ(c->warnings.size(), 1u);
    EXPECT_NE(c->warnings[0].message.find("pattern"), std::string::npos);
    EXPECT_LE(c->warnings[0].message.size(), 200u);  // the pattern is not copied into it
    peg::builder plain;
    ASSERT_TRUE(compile_schema(plain, json::value{{"type", "string"}}).has_value());
    EXPECT_EQ(b.size(), plain.size());  // the pattern adds nothing to the grammar
  }
}

TEST(hostile_schema, huge_repetition_counts_are_not_expanded) {
  const std::vector<std::string> schemas = {
      R"({"type":"string","minLength":0,"maxLength":1000000})",
      R"({"type":"string","minLength":1000000})",
      R"({"type":"array","minItems":1000000,"maxItems":1000000})",
      R"({"type":"array","items":{"type":"integer"},"maxItems":4294967295})",
      R"({"type":"array","prefixItems":[{},{},{}],"minItems":99999999999})",
      R"({"type":"string","maxLength":1e300})",
      R"({"type":"string","maxLength":-5})",
  };
  const auto max_repeat = schema_options{}.max_repeat;
  for (const auto& text : schemas) {
    SCOPED_TRACE(text);
    const auto r = compile_text(text);
    if (!r.compiled) {
      EXPECT_NE(r.compile_error.message, "");
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_LE(r.grammar.size(), 200u);  // not max_repeat copies of anything
    for (const auto& n : r.grammar.nodes()) {
      if (const auto* rep = std::get_if<peg::nodes::repetition>(&n)) {
        EXPECT_TRUE(rep->max == peg::unbounded || rep->max <= max_repeat);
        EXPECT_LE(rep->min, max_repeat);
      }
    }
    auto gbnf = peg::export_gbnf(r.grammar);
    ASSERT_TRUE(gbnf.has_value());
    EXPECT_LE(gbnf->size(), 20000u);
  }
}

TEST(hostile_schema, node_budget_counts_what_was_created) {
  // Many large objects side by side: the budget stops them with a typed error, and the
  // builder holds no more than the budget (plus the node that crossed it).
  std::string props;
  for (int i = 0; i < 2000; ++i) {
    if (i) props += ",";
    props +=
        "\"k" + std::to_string(i) +
        R"(":{"type":"object","properties":{"a":{"type":"integer"},"b":{"enum":[1,2,3]},"c":{"type":"array","items":{"type":"string"}}},"required":["a"]})";
  }
  peg::builder b;
  auto s = json::parse(R"({"type":"object","properties":{)" + props + "}}");
  ASSERT_TRUE(s.has_value());
  const std::size_t budget = 5000;
  auto c = compile_schema(b, *s, {.max_nodes = budget});
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, base::errc::limit_exceeded);
  EXPECT_LE(b.size(), budget + 256);
}

}  // namespace
}  // namespace chatpeg::grammar

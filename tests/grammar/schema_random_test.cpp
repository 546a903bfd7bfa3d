// Robustness of compile_schema on generated schemas (fixed seed): whatever the mix of
// keywords, compiling never crashes, a schema that compiles always builds (no left
// recursion, no empty loops slip through), exports to GBNF that our reader accepts, is
// deterministic, and matching arbitrary JSON against it terminates with a verdict.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::grammar {
namespace {

class schema_generator {
 public:
  explicit schema_generator(unsigned seed) : rng_(seed) {}

  json::value root() {
    json::value s = schema(0);
    if (!s.is_object()) s = json::value{{"anyOf", json::value::array({s, {{"type", "null"}}})}};
    json::value defs = json::value::object();
    for (int i = 0; i < 2; ++i) defs["d" + std::to_string(i)] = schema(2);
    s["$defs"] = defs;
    return s;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  json::value scalar() {
    switch (pick(6)) {
      case 0:
        return nullptr;
      case 1:
        return pick(2) == 0;
      case 2:
        return pick(100) - 50;
      case 3:
        return 1.5;
      case 4:
        return std::string(1, static_cast<char>('a' + pick(3)));
      default:
        return "é/\"";
    }
  }

  json::value schema(int depth) {
    const int kind = depth >= 4 ? pick(5) : pick(14);
    switch (kind) {
      case 0: {
        static const char* types[] = {"string", "integer", "number", "boolean", "null"};
        json::value s = {{"type", types[pick(5)]}};
        if (pick(3) == 0) s["minLength"] = pick(3);
        if (pick(3) == 0) s["maxLength"] = pick(4);
        return s;
      }
      case 1: {
        json::value e = json::value::array();
        for (int i = 0, n = pick(4); i < n; ++i) e.push_back(scalar());
        return {{"enum", e}};
      }
      case 2:
        return {{"const", scalar()}};
      case 3:
        return pick(2) == 0;
      case 4:
        return {{"$ref", pick(3) == 0 ? std::string("#") : "#/$defs/d" + std::to_string(pick(2))}};
      case 5:
      case 6: {
        json::value props = json::value::object();
        json::value req = json::value::array();
        for (int i = 0, n = pick(5); i < n; ++i) {
          const std::string k = std::string(1, static_cast<char>('a' + pick(6)));
          props[k] = schema(depth + 1);
          if (pick(2) == 0) req.push_back(k);
        }
        json::value s = {{"type", "object"}, {"properties", props}, {"required", req}};
        switch (pick(3)) {
          case 0:
            s["additionalProperties"] = false;
            break;
          case 1:
            s["additionalProperties"] = schema(depth + 1);
            break;
          default:
            break;
        }
        return s;
      }
      case 7:
      case 8: {
        json::value s = {{"type", "array"}};
        if (pick(2) == 0) s["items"] = schema(depth + 1);
        if (pick(3) == 0) {
          json::value p = json::value::array();
          for (int i = 0, n = pick(3); i < n; ++i) p.push_back(schema(depth + 1));
          s["prefixItems"] = p;
        }
        if (pick(2) == 0) s["minItems"] = pick(3);
        if (pick(2) == 0) s["maxItems"] = pick(4);
        return s;
      }
      case 9:
      case 10: {
        json::value alts = json::value::array();
        for (int i = 0, n = 1 + pick(3); i < n; ++i) alts.push_back(schema(depth + 1));
        return {{pick(2) == 0 ? "anyOf" : "oneOf", alts}};
      }
      case 11: {
        json::value parts = json::value::array();
        for (int i = 0, n = 1 + pick(2); i < n; ++i) parts.push_back(schema(depth + 1));
        return {{"allOf", parts}};
      }
      case 12: {
        json::value s = schema(depth + 1);
        if (s.is_object()) s["pattern"] = "x";
        return s;
      }
      default: {
        json::value t = json::value::array({"string", "null"});
        if (pick(2) == 0) t.push_back("object");
        return {{"type", t}};
      }
    }
  }

  std::mt19937 rng_;
};

TEST(schema_random, compiles_builds_exports_and_matches) {
  const char* values[] = {"null",
                          "1",
                          "-2.5e3",
                          "\"a\"",
                          "true",
                          "[]",
                          "[1,\"b\",null]",
                          "{}",
                          R"({"a":1,"b":"c"})",
                          R"({"a":{"b":[{"c":null}]}})",
                          "{\"a\":"};
  int compiled = 0, rejected = 0;
  for (unsigned seed = 1; seed <= 150; ++seed) {
    const json::value schema = schema_generator(seed).root();
    SCOPED_TRACE(json::dump(schema));
    peg::builder b1, b2;
    auto c1 = compile_schema(b1, schema, {.max_nodes = 100000});
    auto c2 = compile_schema(b2, schema, {.max_nodes = 100000});
    ASSERT_EQ(c1.has_value(), c2.has_value());
    if (!c1) {
      ++rejected;
      EXPECT_FALSE(c1.error().message.empty());
      continue;
    }
    ++compiled;
    auto g1 = b1.build(c1->parser);
    ASSERT_TRUE(g1.has_value()) << g1.error().to_string();
    auto g2 = b2.build(c2->parser);
    ASSERT_TRUE(g2.has_value());
    EXPECT_EQ(g1->dump(), g2->dump());
    auto text = peg::export_gbnf(*g1);
    ASSERT_TRUE(text.has_value()) << text.error().to_string();
    auto gbnf = parse_gbnf(*text);
    ASSERT_TRUE(gbnf.has_value()) << gbnf.error().to_string();
    for (const char* v : values) {
      const auto r = peg::match(*g1, v, peg::match_flags::complete);
      EXPECT_NE(r.error.code, base::errc::limit_exceeded) << v;
      if (r.ok()) {
        auto gr = recognize(**gbnf, v);
        ASSERT_TRUE(gr.has_value());
        EXPECT_TRUE(gr->accepted) << "PEG accepts but GBNF rejects " << v << "\n" << *text;
      }
    }
  }
  EXPECT_GT(compiled, 100);
  (void)rejected;
}

}  // namespace
}  // namespace chatpeg::grammar

// Helpers shared by the schema compiler tests: compile a schema given as JSON text into a
// fresh builder and build a grammar whose root is the compiled schema node.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"

#include "chatpeg/grammar/schema.h"
#include "chatpeg/json/json.h"
#include "chatpeg/peg/builder.h"

namespace chatpeg::grammar::test {

struct compiled_grammar {
  peg::grammar grammar;
  std::vector<schema_warning> warnings;
  std::string error;  // compile or build error, empty when ok
  base::error compile_error;
  bool compiled = false;
  bool ok() const { return error.empty(); }
};

inline compiled_grammar compile_text(const std::string& schema_text, schema_options options = {}) {
  compiled_grammar out;
  auto schema = json::parse(schema_text);
  if (!schema) {
    out.error = "bad schema JSON: " + schema.error().to_string();
    return out;
  }
  peg::builder b;
  auto c = compile_schema(b, *schema, options);
  if (!c) {
    out.compile_error = c.error();
    out.error = "compile: " + c.error().to_string();
    return out;
  }
  out.compiled = true;
  out.warnings = c->warnings;
  auto g = b.build(c->parser);
  if (!g) {
    out.error = "build: " + g.error().to_string();
    return out;
  }
  out.grammar = std::move(*g);
  return out;
}

// Compiles schema_text with options and checks that the PEG matcher and the exported GBNF
// (read with llama.cpp's loader rules) both accept value, or both reject it.
inline void expect_both_decide(const std::string& schema_text, const schema_options& options,
                               const std::string& value, bool accepted) {
  auto g = compile_text(schema_text, options);
  ASSERT_TRUE(g.ok()) << g.error;
  EXPECT_EQ(peg::match(g.grammar, value, peg::match_flags::complete).ok(), accepted);
  auto text = peg::export_gbnf(g.grammar);
  ASSERT_TRUE(text.has_value()) << text.error().to_string();
  auto gbnf = parse_gbnf(*text);
  ASSERT_TRUE(gbnf.has_value()) << gbnf.error().to_string() << "\n" << *text;
  auto r = recognize(**gbnf, value);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->accepted, accepted) << *text;
}

}  // namespace chatpeg::grammar::test

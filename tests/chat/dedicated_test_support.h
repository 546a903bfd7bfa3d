// Helpers for the per-format dedicated parser tests (tests/chat/dedicated_<format>_test.cpp):
// the analysis of a small fixture template carrying a row's signature, a request with tools
// from a compact spec, and a table runner that checks the parse summary and GBNF acceptance
// of each hand-written output.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/gen_test_support.h"
#include "chatpeg/chat/template.h"

namespace chatpeg::chat::testing {

// The analysis of a template source (must select a dedicated row).
inline analysis dedicated_analysis(const std::string& source, const std::string& handler) {
  auto t = chat_template::create(source, {});
  EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().to_string());
  if (!t) return {};
  EXPECT_EQ((*t)->analysis().handler, handler);
  return (*t)->analysis();
}

struct output_case {
  std::string output;
  std::string expected;  // parse_summary(); "FAIL" when the parser must reject
  bool gbnf = true;      // the GBNF must accept the output (when there is a GBNF)
};

inline void check_outputs(const prepared& p, const std::vector<output_case>& rows) {
  for (const auto& row : rows) {
    EXPECT_EQ(parse_summary(p, row.output), row.expected) << row.output;
    if (row.gbnf && !p.gbnf.empty()) {
      std::string why;
      EXPECT_TRUE(gbnf_accepts(p, row.output, &why)) << row.output << ": " << why;
    }
  }
}

}  // namespace chatpeg::chat::testing

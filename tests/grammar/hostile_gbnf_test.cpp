// Hostile GBNF for the reader and recognizer: nesting far beyond the limit even
// when the caller raises it (gbnf_max_nesting_cap), huge texts (100,000 rules against max_rules;
// reading stays linear in the rules), {m,n} bounds in the millions (max_symbols / the count limit),
// and recognizing inputs 100,000 brackets deep (Earley is iterative; max_items bounds the work).
// Typed errors with line:column, counters asserted — no crash, no timing.
#include <gtest/gtest.h>

#include <string>

#include "chatpeg/grammar/gbnf.h"

namespace chatpeg::grammar {
namespace {

TEST(hostile_gbnf, nesting_beyond_the_cap_even_when_raised) {
  const std::string text =
      "root ::= " + std::string(500000, '(') + "\"a\"" + std::string(500000, ')');
  for (const std::size_t asked : {std::size_t{256}, std::size_t{100000000}}) {
    auto g = parse_gbnf(text, {.max_nesting = asked});
    ASSERT_FALSE(g.has_value());
    EXPECT_EQ(g.error().code, base::errc::limit_exceeded);
    EXPECT_EQ(g.error().where.line, 1u);
    const std::size_t limit = std::min(asked, gbnf_max_nesting_cap);
    EXPECT_EQ(g.error().where.column, 10u + limit) << g.error().to_string();
  }
  // Up to the limit it parses.
  const std::string ok = "root ::= " + std::string(200, '(') + "\"a\"" + std::string(200, ')');
  auto g = parse_gbnf(ok);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  auto r = recognize(**g, "a");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->accepted);
}

std::string rule_chain(std::size_t n) {
  std::string text = "root ::= r0\n";
  for (std::size_t i = 0; i < n; ++i) {
    text += "r" + std::to_string(i) + " ::= \"x\" " +
            (i + 1 < n ? "r" + std::to_string(i + 1) : std::string("\"!\"")) + "\n";
  }
  return text;
}

TEST(hostile_gbnf, many_rules) {
  auto over = parse_gbnf(rule_chain(100000));
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, base::errc::limit_exceeded);
  EXPECT_EQ(over.error().where.line,
            100001u);  // the rule that crossed max_rules  // the rule that crossed max_rules
  auto g = parse_gbnf(rule_chain(50000));
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  EXPECT_GE(gbnf_rule_count(**g), 50001u);
  auto r = recognize(**g, std::string(50000, 'x') + "!");
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_TRUE(r->accepted);
  r = recognize(**g, std::string(49999, 'x') + "!");
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->accepted);
  EXPECT_EQ(r->fail_offset, 49999u);
}

TEST(hostile_gbnf, million_repetition_bounds) {
  // Within the per-count limit but beyond the symbol budget: a typed error before expanding.
  auto g = parse_gbnf("root ::= \"a\"{0,1000000}", {.max_symbols = 100000, .llama_loader = false});
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code, base::errc::limit_exceeded);
  // Nested bounds multiply only through rules, never into memory: a billion-fold bound is
  // read into a grammar of a few thousand symbols (or refused by max_symbols).
  auto nested = parse_gbnf("root ::= ((\"a\"{0,1000}){0,1000}){0,1000}");
  if (nested) {
    EXPECT_LE(gbnf_rule_count(**nested), 10000u);
  } else {
    EXPECT_EQ(nested.error().code, base::errc::limit_exceeded);
  }
}

TEST(hostile_gbnf, deeply_nested_input) {
  auto g = parse_gbnf("root ::= v\nv ::= \"[\" v? \"]\" | \"1\"");
  ASSERT_TRUE(g.has_value());
  const std::string deep = std::string(100000, '[') + "1" + std::string(100000, ']');
  auto r = recognize(**g, deep, {.max_items = 50000000});
  if (r) {
    EXPECT_TRUE(r->accepted);
  } else {
    EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
  }
  // A tight item budget ends it with a typed error.
  r = recognize(**g, deep, {.max_items = 10000});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
  // Unclosed: rejected at the end, with the offset.
  r = recognize(**g, std::string(100000, '['));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->accepted);
  EXPECT_EQ(r->fail_offset, 100000u);
}

}  // namespace
}  // namespace chatpeg::grammar

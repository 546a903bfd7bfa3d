// Hostile grammars and inputs for the PEG engine: 100,000 nested brackets against
// the JSON rules (strict, lenient, growing), grammars nested 20,000 nodes deep (build,
// validate, first-byte tables, dump, GBNF export, matching), huge repetition bounds, very wide
// choices and long literals. Each ends at an explicit limit — matcher_options::max_depth /
// max_steps, the GBNF exporter's nesting bound — with a typed error, or with sizes asserted
// through counters (node counts, text sizes). No stack overflow, no wall-clock assertions.
#include <gtest/gtest.h>

#include <string>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"
#include "chatpeg/peg/validate.h"

namespace chatpeg::peg {
namespace {

constexpr auto L = match_flags::lenient;
constexpr auto C = match_flags::complete;

grammar json_grammar() {
  builder b;
  auto g = b.build(b.json_value());
  EXPECT_TRUE(g.has_value());
  return std::move(*g);
}

TEST(HostileGrammar, HundredThousandBracketsHitMaxDepth) {
  const grammar g = json_grammar();
  const matcher_options defaults;
  for (const std::string& input : {std::string(100000, '['), [] {
                                     std::string s;
                                     for (int i = 0; i < 50000; ++i) s += "{\"a\":[";
                                     return s;
                                   }()}) {
    for (const auto flags : {match_flags::none, L, C, L | C}) {
      SCOPED_TRACE(input.substr(0, 8) + " flags " + std::to_string(static_cast<int>(flags)));
      matcher m(g);
      const auto r = m.match(input, flags);
      ASSERT_EQ(r.status, match_status::fail);
      EXPECT_EQ(r.error.code, base::errc::limit_exceeded) << r.error.to_string();
      EXPECT_NE(r.error.message.find("max_depth (" + std::to_string(defaults.max_depth) + ")"),
                std::string::npos)
          << r.error.message;
      // Where it stopped: inside the brackets, well before the end.
      EXPECT_LT(r.error.where.offset, defaults.max_depth);
      EXPECT_GT(r.error.where.offset, 0u);
    }
  }
  // Growing input: the same limit, call after call, and the matcher stays usable.
  matcher m(g);
  std::string text;
  for (int i = 0; i < 100; ++i) {
    text.append(1000, '[');
    const auto r = m.match_growing(text, L);
    if (r.status == match_status::fail) {
      EXPECT_EQ(r.error.code, base::errc::limit_exceeded);
    } else {
      EXPECT_EQ(r.status, match_status::need_more_input);
    }
  }
  EXPECT_TRUE(m.match("[[1]]", C).ok());
}

TEST(HostileGrammar, DepthLimitIsTheBoundary) {
  // Nesting that fits the limit matches; the limit is what makes deeper input fail.
  const grammar g = json_grammar();
  const std::string ok = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(match(g, ok, C).ok());
  matcher tight(g, {.max_depth = 64});
  EXPECT_EQ(tight.match(ok, C).error.code, base::errc::limit_exceeded);
}

// A grammar whose nodes nest `depth` deep: seq(lit, choice(seq(lit, ...), lit)).
parser deep_chain(builder& b, int depth, bool tags) {
  parser p = b.literal("z");
  for (int i = 0; i < depth; ++i) {
    parser inner = b.literal("a") + p;
    if (tags && i % 2 == 0) inner = b.content(inner);
    p = inner | b.literal("b");
  }
  return p;
}

TEST(HostileGrammar, TwentyThousandNestedNodes) {
  for (const bool tags : {false, true}) {
    SCOPED_TRACE(tags ? "with tags" : "plain");
    builder b;
    auto g = b.build(deep_chain(b, 20000, tags));  // validate() and tables: iterative
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    EXPECT_GE(g->size(), 60000u);
    EXPECT_TRUE(validate(*g).empty());
    EXPECT_EQ(nullable_nodes(*g).size(), g->size());
    EXPECT_GT(g->dump().size(), g->size());
    // Matching: beyond max_depth a typed error; a shallow input still matches.
    const std::string deep(20000, 'a');
    const auto r = match(*g, deep + "z", C);
    EXPECT_EQ(r.error.code, base::errc::limit_exceeded) << r.error.to_string();
    EXPECT_TRUE(match(*g, "aab", C).ok());
    // GBNF export is depth-bounded: a typed error, not a crash.
    auto text = export_gbnf(*g);
    ASSERT_FALSE(text.has_value());
    EXPECT_EQ(text.error().code, base::errc::limit_exceeded) << text.error().to_string();
  }
}

TEST(HostileGrammar, DeepRuleChainThroughRefs) {
  // 10,000 rules r0 → r1 → ... each consuming one byte first: no nesting inside one rule, so
  // export and validation see a long list, not a deep tree.
  builder b;
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    b.rule("r" + std::to_string(i),
           b.literal("x") + (i + 1 < n ? b.optional(b.ref("r" + std::to_string(i + 1))) : b.eps()));
  }
  auto g = b.build(b.ref("r0") + b.end());
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  EXPECT_EQ(g->rules().size(), static_cast<std::size_t>(n));
  auto text = export_gbnf(*g);
  ASSERT_TRUE(text.has_value()) << text.error().to_string();
  EXPECT_LE(text->size(), static_cast<std::size_t>(n) * 64);
  // Matching recurses through the chain: max_depth ends it.
  const auto r = match(*g, std::string(n, 'x'), C);
  EXPECT_EQ(r.error.code, base::errc::limit_exceeded);
  EXPECT_TRUE(match(*g, std::string(100, 'x'), C).ok());
}

TEST(HostileGrammar, LeftRecursionAndEmptyLoopsAreRefused) {
  builder b;
  b.rule("a", b.ref("b") + b.literal("x"));
  b.rule("b", b.ref("c") | b.literal("y"));
  b.rule("c", b.optional(b.literal("q")) + b.ref("a"));
  auto g = b.build(b.ref("a"));
  ASSERT_FALSE(g.has_value());
  EXPECT_NE(g.error().message.find("left recursion"), std::string::npos);
  // Unvalidated, the matcher still ends with a typed error.
  builder b2;
  b2.rule("a", b2.ref("a") + b2.literal("x"));
  auto raw = b2.build(b2.ref("a"), {.validate = false});
  ASSERT_TRUE(raw.has_value());
  EXPECT_EQ(match(*raw, "xxx").error.code, base::errc::limit_exceeded);
}

TEST(HostileGrammar, HugeRepetitionBoundsAreLoopsNotCopies) {
  builder b;
  auto g = b.build(b.repeat(b.literal("ab"), 0, 1000000) + b.chars("[0-9]", 1, 1000000) + b.end());
  ASSERT_TRUE(g.has_value());
  EXPECT_LE(g->size(), 8u);  // one node per construct, whatever the bound
  std::string input;
  for (int i = 0; i < 200000; ++i) input += "ab";
  input += std::string(500000, '7');
  EXPECT_TRUE(match(*g, input, C).ok());
  // max_steps bounds the work of one match: a tight budget gives a typed error.
  matcher tight(*g, {.max_steps = 1000});
  EXPECT_EQ(tight.match(input, C).error.code, base::errc::limit_exceeded);
  // The export loosens bounds above llama.cpp's loader limit (a superset: the bound is not
  // enforced), so the text stays small and loads.
  auto text = export_gbnf(*g);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "root ::= \"ab\"* [0-9]+\n") << *text;
}

TEST(HostileGrammar, WideChoicesAndLongLiterals) {
  builder b;
  std::vector<parser> alts;
  for (int i = 0; i < 20000; ++i) alts.push_back(b.literal("k" + std::to_string(i) + ";"));
  auto wide = b.choice(alts);
  auto g = b.build(b.one_or_more(wide) + b.literal(std::string(1 << 20, 'L')) + b.end());
  ASSERT_TRUE(g.has_value());
  EXPECT_LE(g->size(), 20010u);
  const std::string tail(1 << 20, 'L');
  EXPECT_TRUE(match(*g, "k19999;k0;" + tail, C).ok());
  const auto cut = match(*g, "k19999;" + tail.substr(0, 1000), L);
  EXPECT_EQ(cut.status, match_status::need_more_input);
  const auto bad = match(*g, "k20000;" + tail, C);
  ASSERT_EQ(bad.status, match_status::fail);
  EXPECT_LE(bad.error.expected.size(), 400u);  // max_expected bounds the message
}

}  // namespace
}  // namespace chatpeg::peg

namespace chatpeg::peg {
namespace {

TEST(HostileGrammar, MaxDepthOptionIsCapped) {
  // A caller asking for a huge depth still gets a typed error instead of a stack overflow.
  builder b;
  auto g = b.build(b.json_value());
  ASSERT_TRUE(g.has_value());
  matcher m(*g, {.max_depth = 1000000000});
  const auto r = m.match(std::string(1000000, '['), match_flags::complete);
  EXPECT_EQ(r.error.code, base::errc::limit_exceeded);
  EXPECT_NE(r.error.message.find(std::to_string(matcher_max_depth_cap)), std::string::npos)
      << r.error.message;
}

}  // namespace
}  // namespace chatpeg::peg

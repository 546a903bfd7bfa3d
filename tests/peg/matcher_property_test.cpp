// Invariants of peg::matcher checked over many generated inputs: the prefix property (every
// prefix of an accepted text is never a fail under the lenient flag), memoization does not
// change results or ASTs, limits end runaway matches with limit_exceeded instead of crashing.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"
#include "peg/test_grammars.h"

namespace chatpeg::peg {
namespace {

using test_support::grammar_generator;
using test_support::grammars;
using test_support::random_text;

TEST(MatcherProperty, PrefixOfAcceptedTextNeverFails) {
  std::mt19937 rng(12345);
  for (const auto& gg : grammars()) {
    SCOPED_TRACE(gg.name);
    builder b;
    auto g = b.build(gg.make(b));
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    matcher m(*g);
    int accepted = 0;
    for (int i = 0; i < 3000; ++i) {
      const std::string text = random_text(rng, gg.pieces);
      if (!m.match(text, match_flags::complete).ok()) continue;
      ++accepted;
      for (std::size_t k = 0; k <= text.size(); ++k) {
        const std::string_view prefix(text.data(), k);
        for (const auto flags :
             {match_flags::lenient, match_flags::lenient | match_flags::complete}) {
          const auto r = m.match(prefix, flags);
          ASSERT_NE(r.status, match_status::fail)
              << "prefix \"" << prefix << "\" of \"" << text << "\": " << r.error.to_string();
        }
      }
    }
    EXPECT_GT(accepted, 20) << "too few accepted samples for the property to mean much";
  }
}

TEST(MatcherProperty, MemoDoesNotChangeResults) {
  std::mt19937 rng(777);
  for (const auto& gg : grammars()) {
    SCOPED_TRACE(gg.name);
    builder b;
    auto g = b.build(gg.make(b));
    ASSERT_TRUE(g.has_value());
    matcher with(*g);
    matcher without(*g, {.memoize = false});
    for (int i = 0; i < 1500; ++i) {
      const std::string text = random_text(rng, gg.pieces);
      for (const auto flags : {match_flags::none, match_flags::lenient, match_flags::complete}) {
        const auto a = with.match(text, flags);
        const auto c = without.match(text, flags);
        ASSERT_EQ(a.status, c.status) << text;
        ASSERT_EQ(a.end, c.end) << text;
        ASSERT_EQ(a.error.where.offset, c.error.where.offset) << text;
        ASSERT_EQ(a.ast.dump(*g, text), c.ast.dump(*g, text)) << text;
      }
    }
  }
}

// Heavy backtracking: each alternative re-parses the same rule at the same position.
parser backtracking_grammar(builder& b) {
  auto item = b.rule(
      "item", b.tag(tag::tool_name, b.chars("[a-z]", 1, unbounded)) +
                  b.optional(b.rule("args", b.literal("(") + b.tag(tag::tool_args, b.until(")")) +
                                                b.literal(")"))));
  auto list = b.rule("list", item + b.zero_or_more(b.literal(",") + item));
  return (list + b.literal("!")) | (list + b.literal("?")) | (list + b.literal(".")) |
         b.content(b.rest());
}

TEST(MatcherProperty, MemoReplaysSameAstUnderBacktracking) {
  builder b;
  auto g = b.build(backtracking_grammar(b));
  ASSERT_TRUE(g.has_value());
  matcher with(*g);
  matcher without(*g, {.memoize = false});
  for (const std::string text :
       {"ab(x),c.", "ab(x),c(y)?", "a,b,c,d!", "a(", "a(x", "ab,", "a(1),b(2),c(3)."}) {
    for (const auto flags : {match_flags::none, match_flags::lenient}) {
      const auto a = with.match(text, flags);
      const auto c = without.match(text, flags);
      EXPECT_EQ(a.status, c.status) << text;
      EXPECT_EQ(a.ast.dump(*g, text), c.ast.dump(*g, text)) << text;
    }
  }
  const std::string text = "ab(x),c.";
  EXPECT_EQ(with.match(text).ast.dump(*g, text),
            "list [0,7) \"ab(x),c\"\n"
            "  item [0,5) \"ab(x)\"\n"
            "    tool-name [0,2) \"ab\"\n"
            "    args [2,5) \"(x)\"\n"
            "      tool-args [3,4) \"x\"\n"
            "  item [6,7) \"c\"\n"
            "    tool-name [6,7) \"c\"\n");
}

TEST(MatcherProperty, MemoPreventsExponentialBacktracking) {
  builder b;
  auto s = b.rule("s", (b.literal("x") + b.ref("s") + b.literal("y")) |
                           (b.literal("x") + b.ref("s") + b.literal("z")) | b.literal("x"));
  auto g = b.build(s + b.end());
  ASSERT_TRUE(g.has_value());
  const std::string text = std::string(30, 'x') + std::string(29, 'z');
  matcher with(*g, {.max_steps = 20000});
  EXPECT_TRUE(with.match(text).ok());
  matcher without(*g, {.max_steps = 20000, .memoize = false});
  const auto r = without.match(text);
  EXPECT_EQ(r.status, match_status::fail);
  EXPECT_EQ(r.error.code, base::errc::limit_exceeded);
}

bool spans_nest(const ast& a) {
  const auto& n = a.nodes();
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i].start > n[i].end) return false;
    if (n[i].parent == no_ast) continue;
    if (n[i].parent >= i) return false;
    const auto& p = n[n[i].parent];
    if (n[i].start < p.start || n[i].end > p.end) return false;
  }
  return true;
}

TEST(MatcherProperty, RandomGrammarsMemoAgreesAndPrefixesNeverFail) {
  std::mt19937 rng(4242);
  const std::vector<std::string> pieces = {"a", "b", " ", "ab", "ba"};
  int grammars_built = 0, accepted = 0;
  for (int gi = 0; gi < 150; ++gi) {
    builder b;
    grammar_generator gen(rng);
    auto g = b.build(gen.make(b));
    if (!g.has_value()) continue;  // e.g. a nullable loop: rejected by validation
    ++grammars_built;
    matcher with(*g);
    matcher without(*g, {.memoize = false});
    for (int i = 0; i < 40; ++i) {
      const std::string text = random_text(rng, pieces);
      for (const auto flags : {match_flags::none, match_flags::lenient, match_flags::complete,
                               match_flags::lenient | match_flags::complete}) {
        const auto x = with.match(text, flags);
        const auto y = without.match(text, flags);
        ASSERT_EQ(x.status, y.status) << text << "\n" << g->dump();
        ASSERT_EQ(x.end, y.end) << text;
        ASSERT_EQ(x.ast.dump(*g, text), y.ast.dump(*g, text)) << text << "\n" << g->dump();
        ASSERT_TRUE(spans_nest(x.ast)) << text;
      }
      if (!with.match(text, match_flags::complete).ok()) continue;
      ++accepted;
      for (std::size_t k = 0; k < text.size(); ++k) {
        const auto r = with.match(std::string_view(text.data(), k), match_flags::lenient);
        ASSERT_NE(r.status, match_status::fail) << "prefix " << k << " of \"" << text << "\"\n"
                                                << g->dump();
      }
    }
  }
  EXPECT_GT(grammars_built, 50);
  EXPECT_GT(accepted, 50);
}

TEST(MatcherLimits, DeepNestingHitsMaxDepth) {
  builder b;
  auto g = b.build(b.json_value());
  ASSERT_TRUE(g.has_value());
  const std::string text(100000, '[');
  for (const auto flags : {match_flags::none, match_flags::lenient}) {
    const auto r = match(*g, text, flags);
    EXPECT_EQ(r.status, match_status::fail);
    EXPECT_EQ(r.error.code, base::errc::limit_exceeded);
    EXPECT_NE(r.error.message.find("max_depth"), std::string::npos) << r.error.message;
    EXPECT_TRUE(r.ast.empty());
  }
  // Moderate nesting is fine.
  const std::string ok = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(match(*g, ok, match_flags::complete).ok());
}

TEST(MatcherLimits, MaxStepsNamesTheLimit) {
  builder b;
  auto g = b.build(b.zero_or_more(b.literal("a")));
  ASSERT_TRUE(g.has_value());
  matcher m(*g, {.max_steps = 50});
  const auto r = m.match(std::string(1000, 'a'));
  EXPECT_EQ(r.error.code, base::errc::limit_exceeded);
  EXPECT_NE(r.error.message.find("max_steps"), std::string::npos);
  // The matcher is usable afterwards.
  EXPECT_TRUE(m.match("aaa").ok());
}

TEST(MatcherLimits, LeftRecursionWithoutValidationDoesNotCrash) {
  builder b;
  auto e = b.rule("e", (b.ref("e") + b.literal("+")) | b.literal("1"));
  auto g = b.build(e, {.validate = false});
  ASSERT_TRUE(g.has_value());
  const auto r = match(*g, "1+1");
  EXPECT_EQ(r.status, match_status::fail);
  EXPECT_EQ(r.error.code, base::errc::limit_exceeded);
}

TEST(MatcherLimits, UnresolvedRefWithoutValidationFails) {
  builder b;
  auto g = b.build(b.literal("a") + b.ref("missing"), {.validate = false});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(match(*g, "ab").status, match_status::fail);
}

}  // namespace
}  // namespace chatpeg::peg

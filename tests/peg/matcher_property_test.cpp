// Invariants of peg::matcher checked over many generated inputs: the prefix property (every
// prefix of an accepted text is never a fail under the lenient flag), memoization does not
// change results or ASTs, limits end runaway matches with limit_exceeded instead of crashing.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {
namespace {

struct generated_grammar {
  const char* name;
  std::function<parser(builder&)> make;
  std::vector<std::string> pieces;  // inputs are random concatenations of these
};

std::vector<generated_grammar> grammars() {
  return {
      {"content+tool calls",
       [](builder& b) {
         auto call = b.literal("<t>") + b.tag(tag::tool_name, b.atomic(b.chars("[a-z]", 1, 8))) +
                     b.literal("</t>") + b.content(b.until("<t>"));
         return b.content(b.until("<t>")) + b.zero_or_more(call) + b.end();
       },
       {"x", "<", "<t>", "ab", "</t>", "q", ">", "/"}},
      {"ordered choices",
       [](builder& b) {
         return b.zero_or_more(b.content(b.literal("ab")) | b.reasoning(b.literal("ac")) |
                               b.literal("b")) +
                b.end();
       },
       {"ab", "ac", "b", "a", "c"}},
      {"json",
       [](builder& b) { return b.space() + b.tag(tag::tool_args, b.json_value()) << b.end(); },
       {"[", "]", "{", "}", "\"k\"", ":", ",", "1", "-", "0", ".5", "e3", " ", "\"\\n\"", "true",
        "null", "\"\\u00e9\"", "\"x"}},
      {"reasoning then content",
       [](builder& b) {
         return b.optional(b.literal("<think>") + b.reasoning(b.until("</think>")) +
                           b.literal("</think>"))
                << b.content(b.rest());
       },
       {"<think>", "</think>", "a", " ", "<", "</th", "\n"}},
      {"rules and classes",
       [](builder& b) {
         auto num = b.rule("num", b.chars("[0-9]", 1, 3));
         auto word = b.rule("word", b.tag(tag::tool_arg_name, b.chars("[a-z]", 1, unbounded)));
         auto pair = b.rule("pair", word + b.literal("=") + (num | b.json_string()));
         return pair + b.zero_or_more(b.literal(";") << pair) + b.end();
       },
       {"a=1", "bc=\"s\"", "; ", ";", "a", "=", "23", "\"", "4567"}},
  };
}

std::string random_text(std::mt19937& rng, const std::vector<std::string>& pieces) {
  std::uniform_int_distribution<std::size_t> count(0, 8);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::string s;
  for (std::size_t n = count(rng); n > 0; --n) s += pieces[pick(rng)];
  return s;
}

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

// Random grammars over a tiny alphabet: every node kind, nested rules, refs, tags, atomic.
class grammar_generator {
 public:
  explicit grammar_generator(std::mt19937& rng) : rng_(rng) {}

  parser make(builder& b) {
    rules_ = 0;
    return gen(b, 4) + b.end();
  }

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  parser gen(builder& b, int depth) {
    const std::size_t k = pick(depth > 0 ? 15 : 5);
    switch (k) {
      case 0:
        return b.literal(pick(2) ? "a" : "ab");
      case 1: {
        const std::uint32_t lo = static_cast<std::uint32_t>(pick(2));
        return b.chars(pick(2) ? "[a]" : "[^a]", lo, pick(2) ? unbounded : lo + 1);
      }
      case 2:
        return b.any();
      case 3:
        return b.until_one_of(pick(2) ? std::vector<std::string>{"b"}
                                      : std::vector<std::string>{"ba", " a"});
      case 4:
        return b.literal(" ") << b.literal("b");
      case 5:
        return gen(b, depth - 1) + gen(b, depth - 1);
      case 6:
        return gen(b, depth - 1) | gen(b, depth - 1);
      case 7:
        return b.optional(gen(b, depth - 1));
      case 8:
        return b.repeat(b.literal(pick(2) ? "a" : "b") + gen(b, depth - 1), 0,
                        pick(2) ? unbounded : 2);
      case 9:
        return b.negate(gen(b, depth - 1)) + b.any();
      case 10:
        return b.peek(gen(b, depth - 1)) + gen(b, depth - 1);
      case 11:
        return b.atomic(b.tag(tag::tool_name, gen(b, depth - 1)));
      case 12:
        return b.content(gen(b, depth - 1));
      case 13: {
        const std::string name = "r" + std::to_string(rules_++);
        return b.rule(name, b.reasoning(gen(b, depth - 1)));
      }
      default: {
        // A recursive rule guarded by a consuming literal (never left-recursive).
        const std::string name = "rec" + std::to_string(rules_++);
        return b.rule(name, b.literal("a") + b.optional(b.ref(name)) + gen(b, depth - 2));
      }
    }
  }

  std::mt19937& rng_;
  int rules_ = 0;
};

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

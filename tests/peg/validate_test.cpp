// Tests for peg::validate and nullable_nodes: each kind of issue is found and names its rule;
// well-formed grammars (including non-left recursion) give no issues.
#include "chatpeg/peg/validate.h"

#include <gtest/gtest.h>

#include <functional>

#include "chatpeg/peg/builder.h"

namespace chatpeg::peg {
namespace {

grammar build_unchecked(const std::function<parser(builder&)>& make) {
  builder b;
  auto g = b.build(make(b), {.validate = false});
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  return g.has_value() ? std::move(*g) : grammar{};
}

struct issue_case {
  const char* name;
  std::function<parser(builder&)> make;
  const char* message_part;  // nullptr: no issue expected
  const char* rule;          // rule the first issue names ("" = none)
};

TEST(Validate, Table) {
  const std::vector<issue_case> cases = {
      {"clean", [](builder& b) { return b.rule("r", b.literal("a") + b.until("x")); }, nullptr, ""},
      {"json rules are clean", [](builder& b) { return b.json_value(); }, nullptr, ""},
      {"recursion after input",
       [](builder& b) {
         return b.rule("list", b.literal("(") + b.optional(b.ref("list")) + b.literal(")"));
       },
       nullptr, ""},
      {"unresolved ref", [](builder& b) { return b.rule("r", b.ref("ghost")); }, "'ghost'", "r"},
      {"direct left recursion",
       [](builder& b) { return b.rule("e", (b.ref("e") + b.literal("+")) | b.literal("1")); },
       "left recursion", "e"},
      {"indirect left recursion",
       [](builder& b) {
         b.rule("a", b.ref("b") + b.literal("x"));
         return b.rule("b", b.ref("a") | b.literal("y"));
       },
       "left recursion", "b"},
      {"left recursion through nullable prefix",
       [](builder& b) {
         return b.rule("r", b.optional(b.literal("x")) + b.space() + b.ref("r") + b.literal("!"));
       },
       "left recursion", "r"},
      {"left recursion through tag and atomic",
       [](builder& b) { return b.rule("r", b.content(b.atomic(b.ref("r"))) | b.literal("1")); },
       "left recursion", "r"},
      {"nullable repetition",
       [](builder& b) { return b.rule("loop", b.zero_or_more(b.optional(b.literal("a")))); },
       "repetition", "loop"},
      {"repetition of until", [](builder& b) { return b.rule("u", b.one_or_more(b.until("x"))); },
       "repetition", "u"},
      {"repetition of space", [](builder& b) { return b.zero_or_more(b.space()); }, "repetition",
       ""},
      {"bounded repetition of nullable is fine",
       [](builder& b) { return b.repeat(b.space(), 0, 3); }, nullptr, ""},
      {"empty literal", [](builder& b) { return b.rule("e", b.add(nodes::literal{""})); },
       "empty literal", "e"},
      {"empty delimiter", [](builder& b) { return b.rule("d", b.until("")); }, "empty delimiter",
       "d"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const grammar g = build_unchecked(c.make);
    const auto issues = validate(g);
    if (!c.message_part) {
      EXPECT_TRUE(issues.empty()) << issues.front().error.message;
      continue;
    }
    ASSERT_FALSE(issues.empty());
    EXPECT_NE(issues.front().error.message.find(c.message_part), std::string::npos)
        << issues.front().error.message;
    EXPECT_EQ(issues.front().error.code, base::errc::syntax_error);
    EXPECT_EQ(issues.front().rule, c.rule);
    if (*c.rule) {
      EXPECT_NE(issues.front().error.message.find(std::string("'") + c.rule + "'"),
                std::string::npos)
          << issues.front().error.message;
    }
    // build() with validation reports the same problem.
    builder b;
    auto built = b.build(c.make(b));
    EXPECT_FALSE(built.has_value());
  }
}

TEST(Validate, NullableNodes) {
  builder b;
  auto lit = b.literal("a");
  auto opt = b.optional(lit);
  auto sp = b.space();
  auto seq_nullable = sp + opt;
  auto seq_not = sp + lit;
  auto ch = lit | sp;
  auto cls0 = b.chars("[a]", 0, 2);
  auto cls1 = b.chars("[a]", 1, 2);
  auto any = b.any();
  auto neg = b.negate(any);
  auto r = b.rule("r", seq_not);
  auto ref = b.ref("r");
  auto tagged = b.content(opt);
  auto root = b.sequence({seq_nullable, ch, cls0, cls1, neg, ref, tagged});
  auto g = b.build(root);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  const auto nullable = nullable_nodes(*g);
  EXPECT_FALSE(nullable[lit.id]);
  EXPECT_TRUE(nullable[opt.id]);
  EXPECT_TRUE(nullable[sp.id]);
  EXPECT_TRUE(nullable[seq_nullable.id]);
  EXPECT_FALSE(nullable[seq_not.id]);
  EXPECT_TRUE(nullable[ch.id]);
  EXPECT_TRUE(nullable[cls0.id]);
  EXPECT_FALSE(nullable[cls1.id]);
  EXPECT_FALSE(nullable[any.id]);
  EXPECT_TRUE(nullable[neg.id]);
  EXPECT_FALSE(nullable[r.id]);
  EXPECT_FALSE(nullable[ref.id]);
  EXPECT_TRUE(nullable[tagged.id]);
  EXPECT_FALSE(nullable[root.id]);
}

TEST(Validate, NullableThroughRecursion) {
  // r = "x" r | eps  — nullable via the second alternative, found by the fixpoint.
  builder b;
  auto r = b.rule("r", (b.literal("x") + b.ref("r")) | b.eps());
  auto g = b.build(r + b.literal("!"));
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  EXPECT_TRUE(nullable_nodes(*g)[r.id]);
}

TEST(Validate, DeepGrammarDoesNotOverflow) {
  // A long chain of nested rules is analysed iteratively.
  builder b;
  parser p = b.literal("x");
  for (int i = 0; i < 20000; ++i) p = b.rule("r" + std::to_string(i), b.optional(p));
  auto g = b.build(p + b.literal("!"), {.validate = false});
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(validate(*g).empty());
}

}  // namespace
}  // namespace chatpeg::peg

namespace chatpeg::peg {
namespace {

TEST(Validate, ForwardRefChain) {
  // r_i = r_{i+1} | "x_i", r_n = eps: nullability and first bytes flow backwards through
  // forward refs. Worklist analyses handle this in linear time (an id-order sweep per pass
  // would be quadratic and take minutes here).
  constexpr int n = 10000;
  builder b;
  parser root{};
  for (int i = 0; i < n; ++i) {
    auto r = b.rule("r" + std::to_string(i),
                    b.ref("r" + std::to_string(i + 1)) | b.literal(i % 2 ? "x" : "y"));
    if (i == 0) root = r;
  }
  b.rule("r" + std::to_string(n), b.eps());
  auto g = b.build(root + b.literal("!"));
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  EXPECT_TRUE(nullable_nodes(*g)[root.id]);
  const auto& top = std::get<nodes::choice>(g->at(std::get<nodes::rule>(g->at(root.id)).child));
  ASSERT_EQ(top.first.size(), 2u);
  EXPECT_TRUE(top.first[0].all());  // the ref alternative is nullable: never skipped
  EXPECT_TRUE(top.first[1].test('y'));
}

}  // namespace
}  // namespace chatpeg::peg

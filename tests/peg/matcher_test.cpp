// Table-driven tests of peg::matcher: every node kind with success / fail / need_more_input,
// partial-input behaviour under the lenient flag, the complete flag, and the AST each match
// produces (compared through ast::dump).
#include "chatpeg/peg/matcher.h"

#include <gtest/gtest.h>

#include <functional>

#include "chatpeg/peg/builder.h"

namespace chatpeg::peg {
namespace {

using factory = std::function<parser(builder&)>;

constexpr auto N = match_flags::none;
constexpr auto L = match_flags::lenient;
constexpr auto C = match_flags::complete;
constexpr auto LC = match_flags::lenient | match_flags::complete;
constexpr auto ok = match_status::success;
constexpr auto no = match_status::fail;
constexpr auto more = match_status::need_more_input;

struct match_case {
  const char* name;
  factory make;
  std::string input;
  match_flags flags;
  match_status status;
  std::size_t end;  // success/need_more: result end; fail: error offset
  const char* ast;  // expected ast::dump, nullptr = not checked
};

// Wraps p in a content tag so the dump shows what it consumed.
factory tagged(factory f) {
  return [f](builder& b) { return b.content(f(b)); };
}

factory lit(std::string s) {
  return [s](builder& b) { return b.literal(s); };
}

void run_cases(const std::vector<match_case>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    builder b;
    auto g = b.build(c.make(b));
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    const auto r = match(*g, c.input, c.flags);
    EXPECT_EQ(match_status_name(r.status), match_status_name(c.status)) << r.error.to_string();
    if (r.status == match_status::fail) {
      EXPECT_EQ(r.error.where.offset, c.end) << r.error.to_string();
      EXPECT_TRUE(r.ast.empty());
    } else {
      EXPECT_EQ(r.end, c.end);
    }
    if (c.ast) {
      EXPECT_EQ(r.ast.dump(*g, c.input), c.ast);
    }
  }
}

TEST(Matcher, Leaves) {
  run_cases({
      {"eps empty", [](builder& b) { return b.eps(); }, "", N, ok, 0, ""},
      {"eps leaves input", [](builder& b) { return b.eps(); }, "x", N, ok, 0, ""},
      {"eps complete", [](builder& b) { return b.eps(); }, "x", C, no, 0, nullptr},
      {"start at 0", [](builder& b) { return b.start() + b.literal("a"); }, "a", N, ok, 1, ""},
      {"start later", [](builder& b) { return b.literal("a") + b.start(); }, "a", N, no, 1,
       nullptr},
      {"end at end", [](builder& b) { return b.literal("a") + b.end(); }, "a", N, ok, 1, ""},
      {"end before end", [](builder& b) { return b.literal("a") + b.end(); }, "ab", N, no, 1,
       nullptr},
      {"end lenient at eof", [](builder& b) { return b.literal("a") + b.end(); }, "a", L, ok, 1,
       ""},
      {"literal", tagged(lit("<tool_call>")), "<tool_call>x", N, ok, 11,
       "content [0,11) \"<tool_call>\"\n"},
      {"literal cut lenient", tagged(lit("<tool_call>")), "<tool_", L, more, 6,
       "content [0,6) partial \"<tool_\"\n"},
      {"literal cut strict", tagged(lit("<tool_call>")), "<tool_", N, no, 0, nullptr},
      {"literal empty rest lenient", lit("abc"), "", L, more, 0, ""},
      {"literal empty rest strict", lit("abc"), "", N, no, 0, nullptr},
      {"literal mismatch lenient", lit("<tool_call>"), "<tox", L, no, 0, nullptr},
      {"literal mismatch", lit("abc"), "abd", N, no, 0, nullptr},
      {"any ascii", tagged([](builder& b) { return b.any(); }), "xy", N, ok, 1,
       "content [0,1) \"x\"\n"},
      {"any 2-byte", tagged([](builder& b) { return b.any(); }), "\xC3\xA9!", N, ok, 2,
       "content [0,2) \"\xC3\xA9\"\n"},
      {"any invalid byte", tagged([](builder& b) { return b.any(); }), "\xFFx", N, ok, 1,
       "content [0,1) \"\xEF\xBF\xBD\"\n"},
      {"any eof", [](builder& b) { return b.any(); }, "", N, no, 0, nullptr},
      {"any eof lenient", [](builder& b) { return b.any(); }, "", L, more, 0, nullptr},
      {"space", [](builder& b) { return b.space() + b.literal("a"); }, " \t\r\n a", N, ok, 6, ""},
      {"space none", [](builder& b) { return b.space() + b.literal("a"); }, "a", N, ok, 1, ""},
      {"space eof lenient", [](builder& b) { return b.space() + b.literal("a"); }, "  ", L, more, 2,
       ""},
      {"space eof strict", [](builder& b) { return b.space() + b.literal("a"); }, "  ", N, no, 2,
       nullptr},
  });
}

TEST(Matcher, CharClass) {
  auto word = tagged([](builder& b) { return b.chars("[a-z]", 1, unbounded); });
  auto two_three = tagged([](builder& b) { return b.chars("[a-z]", 2, 3); });
  auto not_x = tagged([](builder& b) { return b.chars("[^x]", 1, unbounded); });
  auto greek = tagged([](builder& b) { return b.chars("[\\u03B1-\\u03C9]", 1, unbounded); });
  auto euro = tagged([](builder& b) { return b.chars("[\\u20AC]", 1, unbounded); });
  run_cases({
      {"run", word, "abc1", N, ok, 3, "content [0,3) \"abc\"\n"},
      {"run at eof strict", word, "abc", N, ok, 3, "content [0,3) \"abc\"\n"},
      {"run at eof lenient", word, "abc", L, more, 3, "content [0,3) partial \"abc\"\n"},
      {"run none", word, "1", N, no, 0, nullptr},
      {"run none lenient at eof", word, "", L, more, 0, "content [0,0) partial \"\"\n"},
      {"min not reached", two_three, "a1", N, no, 1, nullptr},
      {"max stops", two_three, "abcd", N, ok, 3, "content [0,3) \"abc\"\n"},
      {"max reached at eof lenient", two_three, "abc", L, ok, 3, "content [0,3) \"abc\"\n"},
      {"below min at eof lenient", two_three, "a", L, more, 1, nullptr},
      {"negated with utf8", not_x,
       "\xC3\xA9\xE2\x82\xAC"
       "ax",
       N, ok, 6, nullptr},
      {"negated takes invalid bytes", not_x,
       "a\xFF"
       "bx",
       N, ok, 3,
       "content [0,3) \"a\xEF\xBF\xBD"
       "b\"\n"},
      {"non-ascii range", greek, "\xCE\xB1\xCE\xB2z", N, ok, 4, nullptr},
      {"non-ascii range miss", greek, "z", N, no, 0, nullptr},
      // An incomplete UTF-8 sequence at the end waits for more input only while some
      // completion of it can be in the class.
      {"ascii class ends at an incomplete sequence lenient", word, "ab\xC5", L, ok, 2,
       "content [0,2) \"ab\"\n"},
      {"negated class waits on an incomplete sequence", not_x, "a\xC5", L, more, 2, nullptr},
      {"lead byte in range waits", greek, "\xCE\xB1\xCE", L, more, 3, nullptr},
      {"lead byte out of range ends the run", greek, "\xCE\xB1\xE2", L, ok, 2, nullptr},
      {"continuation byte narrows the range: in", euro, "\xE2\x82\xAC\xE2\x82", L, more, 5,
       nullptr},
      {"continuation byte narrows the range: out", euro, "\xE2\x82\xAC\xE2\x80", L, ok, 3, nullptr},
      {"single char", [](builder& b) { return b.chars("[0-9]") + b.chars("[a-z]"); }, "7q", N, ok,
       2, ""},
      {"single char eof lenient", [](builder& b) { return b.chars("[0-9]") + b.chars("[a-z]"); },
       "7", L, more, 1, ""},
  });
}

TEST(Matcher, Until) {
  auto one = tagged([](builder& b) { return b.until("</t>"); });
  auto several = tagged([](builder& b) { return b.until_one_of({"<b>", "<a>", "[x]"}); });
  auto rest = tagged([](builder& b) { return b.rest(); });
  // A longer delimiter that starts first but is cut by the end of the input must not lose to a
  // shorter one found later (the final text would end at the longer one).
  auto nested = tagged([](builder& b) { return b.until_one_of({"\n</p>\n", "</p>"}); });
  run_cases({
      {"longer earlier delimiter cut lenient", nested, "pwd\n</p>", L, more, 3,
       "content [0,3) partial \"pwd\"\n"},
      {"longer earlier delimiter cut strict", nested, "pwd\n</p>", N, ok, 4,
       "content [0,4) \"pwd\\n\"\n"},
      {"longer earlier delimiter whole", nested, "pwd\n</p>\n", L, ok, 3,
       "content [0,3) \"pwd\"\n"},
      {"longer earlier delimiter mismatch", nested, "pwd\n</p>x", L, ok, 4,
       "content [0,4) \"pwd\\n\"\n"},
      {"found", one, "abc</t>", N, ok, 3, "content [0,3) \"abc\"\n"},
      {"found at start", one, "</t>", N, ok, 0, "content [0,0) \"\"\n"},
      {"false start", one, "a</x</t>", N, ok, 4, "content [0,4) \"a</x\"\n"},
      {"missing strict", one, "abc", N, ok, 3, "content [0,3) \"abc\"\n"},
      {"missing lenient", one, "abc", L, more, 3, "content [0,3) partial \"abc\"\n"},
      {"partial delimiter lenient", one, "abc</", L, more, 3, "content [0,3) partial \"abc\"\n"},
      {"partial delimiter strict", one, "abc</", N, ok, 5, "content [0,5) \"abc</\"\n"},
      {"earliest wins", several, "x[x]<a>y<b>", N, ok, 1, "content [0,1) \"x\"\n"},
      {"earliest wins 2", several, "xy<a>[x]", N, ok, 2, "content [0,2) \"xy\"\n"},
      {"one of partial", several, "hello[", L, more, 5, "content [0,5) partial \"hello\"\n"},
      {"one of partial 2", several, "hello<", L, more, 5, "content [0,5) partial \"hello\"\n"},
      {"one of none", several, "hello", L, more, 5, "content [0,5) partial \"hello\"\n"},
      {"rest strict", rest, "all of it", N, ok, 9, "content [0,9) \"all of it\"\n"},
      {"rest lenient", rest, "all of it", L, more, 9, "content [0,9) partial \"all of it\"\n"},
      {"then delimiter",
       [](builder& b) { return b.content(b.until("</t>")) + b.literal("</t>") + b.end(); },
       "ab</t>", N, ok, 6, "content [0,2) \"ab\"\n"},
      {"then delimiter cut",
       [](builder& b) { return b.content(b.until("</t>")) + b.literal("</t>") + b.end(); }, "ab</",
       L, more, 2, "content [0,2) partial \"ab\"\n"},
  });
}

TEST(Matcher, Composition) {
  auto ab_ac = [](builder& b) { return b.content(b.literal("ab")) | b.reasoning(b.literal("ac")); };
  auto reps = [](builder& b) { return b.one_or_more(b.content(b.literal("ab"))); };
  auto two_three = [](builder& b) { return b.repeat(b.literal("a"), 2, 3); };
  run_cases({
      {"sequence", [](builder& b) { return b.literal("a") + b.literal("b"); }, "ab", N, ok, 2, ""},
      {"sequence fail", [](builder& b) { return b.literal("a") + b.literal("b"); }, "ax", N, no, 1,
       nullptr},
      {"sequence cut", [](builder& b) { return b.literal("a") + b.literal("b"); }, "a", L, more, 1,
       ""},
      {"shift", [](builder& b) { return b.literal("a") << b.literal("b"); }, "a \n b", N, ok, 5,
       ""},
      {"choice first", ab_ac, "ab", N, ok, 2, "content [0,2) \"ab\"\n"},
      {"choice second drops first ast", ab_ac, "ac", N, ok, 2, "reasoning [0,2) \"ac\"\n"},
      {"choice fail", ab_ac, "ad", N, no, 0, nullptr},
      {"choice need_more stops", ab_ac, "a", L, more, 1, "content [0,1) partial \"a\"\n"},
      {"choice ordered",
       [](builder& b) { return b.content(b.literal("a")) | b.content(b.literal("ab")); }, "ab", N,
       ok, 1, "content [0,1) \"a\"\n"},
      {"repetition", reps, "ababx", N, ok, 4, "content [0,2) \"ab\"\ncontent [2,4) \"ab\"\n"},
      // At the end of input another iteration may begin: it shows as an empty partial node.
      {"repetition lenient at eof", reps, "abab", L, more, 4,
       "content [0,2) \"ab\"\ncontent [2,4) \"ab\"\ncontent [4,4) partial \"\"\n"},
      {"repetition lenient cut", reps, "aba", L, more, 3,
       "content [0,2) \"ab\"\ncontent [2,3) partial \"a\"\n"},
      {"repetition none", reps, "x", N, no, 0, nullptr},
      {"repetition min", two_three, "a", N, no, 1, nullptr},
      {"repetition min lenient", two_three, "a", L, more, 1, nullptr},
      {"repetition max", two_three, "aaaa", N, ok, 3, nullptr},
      {"repetition max lenient", two_three, "aaa", L, ok, 3, nullptr},
      {"optional absent", [](builder& b) { return b.optional(b.literal("a")) + b.literal("b"); },
       "b", N, ok, 1, nullptr},
      {"peek", [](builder& b) { return b.peek(b.content(b.literal("a"))) + b.any(); }, "a", N, ok,
       1, ""},
      {"peek fail", [](builder& b) { return b.peek(b.literal("a")) + b.any(); }, "b", N, no, 0,
       nullptr},
      {"peek lenient", [](builder& b) { return b.peek(b.literal("ab")) + b.any(); }, "a", L, more,
       0, nullptr},
      {"negate", [](builder& b) { return b.negate(b.literal("a")) + b.content(b.any()); }, "b", N,
       ok, 1, "content [0,1) \"b\"\n"},
      {"negate fail", [](builder& b) { return b.negate(b.literal("a")) + b.any(); }, "a", N, no, 0,
       nullptr},
      {"negate lenient", [](builder& b) { return b.negate(b.literal("ab")) + b.any(); }, "a", L,
       more, 0, nullptr},
      // "Else one byte of content": a half-received marker stays out of the content span.
      {"negate keeps marker prefix out",
       [](builder& b) {
         return b.content(b.zero_or_more(b.negate(b.literal("<tool_call>")) + b.any())) +
                b.literal("<tool_call>");
       },
       "hi <tool_", L, more, 3, "content [0,3) partial \"hi \"\n"},
      {"negate eof lenient", [](builder& b) { return b.negate(b.literal("a")) + b.any(); }, "", L,
       more, 0, nullptr},
  });
}

TEST(Matcher, TagsRulesAtomic) {
  auto name = [](builder& b) {
    return b.tag(tag::tool, b.atomic(b.tag(tag::tool_name, b.literal("get_weather"))) +
                                b.literal("(") + b.tag(tag::tool_args, b.until(")")) +
                                b.literal(")"));
  };
  run_cases({
      {"rule", [](builder& b) { return b.rule("r", b.content(b.literal("abc"))); }, "abc", N, ok, 3,
       "r [0,3) \"abc\"\n  content [0,3) \"abc\"\n"},
      {"recursive rule",
       [](builder& b) {
         return b.rule("list", b.literal("[") + b.optional(b.ref("list")) + b.literal("]"));
       },
       "[[]]", N, ok, 4, "list [0,4) \"[[]]\"\n  list [1,3) \"[]\"\n"},
      {"recursive rule partial",
       [](builder& b) {
         return b.rule("list", b.literal("[") + b.optional(b.ref("list")) + b.literal("]"));
       },
       "[[", L, more, 2,
       "list [0,2) partial \"[[\"\n  list [1,2) partial \"[\"\n    list [2,2) partial \"\"\n"},
      {"atomic hides partial", name, "get_wea", L, more, 7, "tool [0,7) partial \"get_wea\"\n"},
      {"atomic whole", name, "get_weather(x", L, more, 13,
       "tool [0,13) partial \"get_weather(x\"\n  tool-name [0,11) \"get_weather\"\n"
       "  tool-args [12,13) partial \"x\"\n"},
      {"atomic complete", name, "get_weather(x)", N, ok, 14,
       "tool [0,14) \"get_weather(x)\"\n  tool-name [0,11) \"get_weather\"\n"
       "  tool-args [12,13) \"x\"\n"},
      {"nested partial flags",
       [](builder& b) {
         return b.tag(tag::tool, b.tag(tag::tool_open, b.literal("<c>")) +
                                     b.tag(tag::tool_args, b.literal("xyz")));
       },
       "<c>x", L, more, 4,
       "tool [0,4) partial \"<c>x\"\n  tool-open [0,3) \"<c>\"\n"
       "  tool-args [3,4) partial \"x\"\n"},
      {"schema passthrough",
       [](builder& b) { return b.schema("s", "{}", false, b.content(b.literal("x"))); }, "x", N, ok,
       1, "content [0,1) \"x\"\n"},
      {"gbnf passthrough", [](builder& b) { return b.gbnf("\"x\"", b.literal("x")); }, "x", N, ok,
       1, ""},
      {"user tag", [](builder& b) { return b.tag(b.user_tag("custom"), b.literal("x")); }, "x", N,
       ok, 1, "custom [0,1) \"x\"\n"},
      // Partial input through the pass-through kinds: the child decides, the AST is kept.
      {"schema partial",
       [](builder& b) { return b.schema("s", "{}", false, b.content(b.literal("xyz"))); }, "xy", L,
       more, 2, "content [0,2) partial \"xy\"\n"},
      {"schema partial strict",
       [](builder& b) { return b.schema("s", "{}", false, b.content(b.literal("xyz"))); }, "xy", N,
       no, 0, nullptr},
      {"gbnf partial", [](builder& b) { return b.content(b.gbnf("\"xyz\"", b.literal("xyz"))); },
       "x", L, more, 1, "content [0,1) partial \"x\"\n"},
      {"gbnf partial strict", [](builder& b) { return b.gbnf("\"xyz\"", b.literal("xyz")); }, "x",
       N, no, 0, nullptr},
      {"ref partial",
       [](builder& b) {
         b.rule("r", b.content(b.literal("abc")));
         return b.literal("<") + b.ref("r");
       },
       "<a", L, more, 2, "r [1,2) partial \"a\"\n  content [1,2) partial \"a\"\n"},
      {"tag around cut literal at eof", [](builder& b) { return b.content(b.literal("ab")); }, "",
       L, more, 0, "content [0,0) partial \"\"\n"},
  });
}

// Kinds that consume nothing decide without input: lenient never turns them into
// need_more_input, except `end`, which succeeds at the end (more input would not change that
// the text so far is complete).
TEST(Matcher, EmptyKindsUnderLenient) {
  run_cases({
      {"eps lenient", [](builder& b) { return b.content(b.eps()); }, "", L, ok, 0,
       "content [0,0) \"\"\n"},
      {"start lenient", [](builder& b) { return b.start(); }, "", L, ok, 0, ""},
      {"start then literal cut", [](builder& b) { return b.start() + b.literal("ab"); }, "a", L,
       more, 1, ""},
      {"end lenient empty", [](builder& b) { return b.end(); }, "", L, ok, 0, ""},
      {"end lenient leftover", [](builder& b) { return b.end(); }, "x", L, no, 0, nullptr},
  });
}

TEST(Matcher, FirstByteSkipping) {
  // Alternatives that cannot start with the next byte are not tried. Results are those of
  // trying them, except that an alternative that can never succeed here no longer reports a
  // spurious need_more_input through a lookahead (it would fail on any continuation).
  auto spurious = [](builder& b) {
    return (b.negate(b.literal("bc")) + b.literal("ab")) | b.content(b.literal("b"));
  };
  run_cases({
      {"skip to matching alternative", spurious, "b", L, ok, 1, "content [0,1) \"b\"\n"},
      {"eof is never skipped", spurious, "", L, more, 0, ""},
      {"digits", [](builder& b) { return b.literal("x") | b.content(b.chars("[0-9]", 1, 3)); },
       "42", N, ok, 2, "content [0,2) \"42\"\n"},
  });
}

TEST(Matcher, CompleteFlag) {
  run_cases({
      {"complete ok", lit("ab"), "ab", C, ok, 2, ""},
      {"complete leftover", lit("ab"), "abc", C, no, 2, nullptr},
      {"no complete leftover", lit("ab"), "abc", N, ok, 2, ""},
      {"lenient complete need_more", lit("abc"), "ab", LC, more, 2, ""},
      {"lenient complete leftover", lit("ab"), "abc", LC, no, 2, nullptr},
  });
  builder b;
  auto g = b.build(b.literal("ab"));
  ASSERT_TRUE(g.has_value());
  const auto r = match(*g, "abc", C);
  EXPECT_EQ(r.error.code, base::errc::no_match);
  EXPECT_EQ(r.error.message, "unexpected input");
  EXPECT_NE(r.error.expected.find("end of input"), std::string::npos);
}

TEST(Matcher, FailReportsFurthestAndExpected) {
  builder b;
  auto root =
      b.literal("let ") + (b.literal("x") | b.literal("y") | b.chars("[0-9]")) + b.literal(";");
  auto g = b.build(root);
  ASSERT_TRUE(g.has_value());
  const auto r = match(*g, "let z;");
  ASSERT_EQ(r.status, match_status::fail);
  EXPECT_EQ(r.error.code, base::errc::no_match);
  EXPECT_EQ(r.error.message, "no match");
  EXPECT_EQ(r.error.where.offset, 4u);
  EXPECT_EQ(r.error.where.line, 1u);
  EXPECT_EQ(r.error.where.column, 5u);
  EXPECT_EQ(r.error.expected, "\"x\", \"y\", [0-9]");
}

TEST(Matcher, ExpectedListIsBounded) {
  builder b;
  std::vector<parser> alts;
  for (int i = 0; i < 40; ++i) alts.push_back(b.literal("k" + std::to_string(i)));
  auto g = b.build(b.choice(alts));
  ASSERT_TRUE(g.has_value());
  matcher m(*g, {.max_expected = 3});
  const auto r = m.match("zz");
  ASSERT_EQ(r.status, match_status::fail);
  EXPECT_EQ(r.error.expected, "\"k0\", \"k1\", \"k2\", ...");
}

TEST(Matcher, MatcherIsReusable) {
  builder b;
  auto g = b.build(b.content(b.until("</x>")) + b.literal("</x>"));
  ASSERT_TRUE(g.has_value());
  matcher m(*g);
  for (int i = 0; i < 3; ++i) {
    auto r1 = m.match("hello</x>");
    ASSERT_EQ(r1.status, match_status::success);
    EXPECT_EQ(r1.ast.dump(*g, "hello</x>"), "content [0,5) \"hello\"\n");
    auto r2 = m.match("nope");
    EXPECT_EQ(r2.status, match_status::fail);
    auto r3 = m.match("par</", L);
    EXPECT_EQ(r3.status, match_status::need_more_input);
    EXPECT_EQ(r3.end, 3u);
  }
}

TEST(Matcher, MatchFromNode) {
  builder b;
  auto inner = b.rule("inner", b.literal("x"));
  auto g = b.build(b.literal("a") + inner);
  ASSERT_TRUE(g.has_value());
  matcher m(*g);
  EXPECT_EQ(m.match_from(*g->find_rule("inner"), "x").status, match_status::success);
  EXPECT_EQ(m.match_from(9999, "x").error.code, base::errc::invalid_argument);
  EXPECT_EQ(&m.get_grammar(), &*g);
}

TEST(Matcher, AstLinks) {
  builder b;
  auto g = b.build(b.tag(tag::tool, b.tag(tag::tool_name, b.literal("n")) +
                                        b.tag(tag::tool_args, b.literal("a"))) +
                   b.content(b.literal("c")));
  ASSERT_TRUE(g.has_value());
  const auto r = match(*g, "nac");
  ASSERT_TRUE(r.ok());
  const auto& n = r.ast.nodes();
  ASSERT_EQ(n.size(), 4u);
  EXPECT_EQ(r.ast.first_root(), 0u);
  EXPECT_EQ(n[0].first_child, 1u);
  EXPECT_EQ(n[1].next_sibling, 2u);
  EXPECT_EQ(n[2].next_sibling, no_ast);
  EXPECT_EQ(n[0].next_sibling, 3u);
  EXPECT_EQ(n[1].parent, 0u);
  EXPECT_EQ(n[3].parent, no_ast);
  EXPECT_EQ(n[3].tag, tag::content);
  EXPECT_TRUE(std::holds_alternative<nodes::tagged>(g->at(n[1].origin)));
  EXPECT_EQ(n[1].rule, no_node);
}

TEST(Matcher, DelimiterInsideJsonStringDoesNotEndCall) {
  // The JSON rule consumes the string first, so "</call>" inside it is content of the value.
  const std::string input = R"(hi<call>{"s": "</call>"}</call>)";
  {
    builder b;
    auto call = b.literal("<call>")
                << b.tag(tag::tool_args, b.json_value()) << b.literal("</call>");
    auto g = b.build(b.content(b.until("<call>")) + b.zero_or_more(call) + b.end());
    ASSERT_TRUE(g.has_value());
    const auto r = match(*g, input);
    ASSERT_TRUE(r.ok()) << r.error.to_string();
    bool found = false;
    for (const auto& n : r.ast.nodes()) {
      if (n.tag == tag::tool_args) {
        EXPECT_EQ(r.ast.text(n, input), R"({"s": "</call>"})");
        found = true;
      }
    }
    EXPECT_TRUE(found);
  }
  {
    // Contrast: an until-based argument stops at the first delimiter and the grammar fails.
    builder b;
    auto call =
        b.literal("<call>") + b.tag(tag::tool_args, b.until("</call>")) + b.literal("</call>");
    auto g = b.build(b.content(b.until("<call>")) + b.zero_or_more(call) + b.end());
    ASSERT_TRUE(g.has_value());
    EXPECT_EQ(match(*g, input).status, match_status::fail);
  }
}

}  // namespace
}  // namespace chatpeg::peg

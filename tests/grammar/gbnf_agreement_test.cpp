// Agreement between the PEG matcher and the GBNF its grammar exports to. For a table of PEG
// grammars: listed accepted strings pass both (PEG with the complete flag, recognizer on the
// exported GBNF), listed rejected strings fail both; then a property over every string of up
// to a few tokens of a small alphabet (and random token sequences): PEG-accepted ⇒
// GBNF-accepted always, and equality for grammars where PEG and CFG semantics coincide
// (no ordered-choice prefix shadowing, no greedy repetition eating what follows, no
// lookahead). Export is also checked to be identical across two builds.
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/gbnf_export.h"
#include "chatpeg/peg/matcher.h"
#include "peg/test_grammars.h"

namespace chatpeg::grammar {
namespace {

using peg::builder;
using peg::parser;

struct agreement_case {
  const char* name;
  std::function<parser(builder&)> make;
  std::vector<std::string> accepted;  // PEG (complete) and GBNF accept
  std::vector<std::string> rejected;  // both reject
  std::vector<std::string> alphabet;  // tokens for the exhaustive property
  std::size_t max_tokens = 5;
  bool exact = true;  // PEG and GBNF languages coincide
};
void PrintTo(const agreement_case& c, std::ostream* os) {
  *os << c.name;
}

parser tool_call_grammar(builder& b) {
  auto name = b.literal("\"get_weather\"") | b.literal("\"search\"");
  auto call =
      b.rule("tool_call", b.literal("<tool_call>")
                              << b.literal("{") << b.literal("\"name\"") << b.literal(":") << name
                              << b.literal(",") << b.literal("\"arguments\"") << b.literal(":")
                              << b.json_object() << b.literal("}") << b.literal("</tool_call>"));
  return b.content(b.until("<tool_call>")) + b.zero_or_more(call + b.space()) + b.end();
}

const std::vector<agreement_case>& cases() {
  static const std::vector<agreement_case> table = {
      {"literal",
       [](builder& b) { return b.literal("abc"); },
       {"abc"},
       {"", "ab", "abcd", "abd"},
       {"a", "b", "c"},
       5},
      {"choice_shadowing",
       [](builder& b) { return (b.literal("a") | b.literal("ab")) + b.literal("c"); },
       {"ac"},
       {"bc", "a", "abcc"},
       {"a", "b", "c"},
       4,
       false},
      {"choice_order_complete",
       [](builder& b) { return b.literal("ab") | b.literal("abc"); },
       {"ab"},
       {"a", "abcd", ""},
       {"a", "b", "c"},
       4,
       false},
      {"repetition_then_literal",
       [](builder& b) { return b.zero_or_more(b.literal("ab")) + b.literal("a"); },
       {"a", "aba", "ababa"},
       {"", "ab", "abab", "aab"},
       {"a", "b"},
       7},
      {"greedy_class_eats_suffix",
       [](builder& b) { return b.chars("[ab]", 0, peg::unbounded) + b.literal("b"); },
       {},
       {"a", "c", ""},
       {"a", "b", "c"},
       5,
       false},
      {"optional_then_same",
       [](builder& b) { return b.optional(b.literal("a")) + b.literal("a"); },
       {"aa"},
       {"", "aaa", "b"},
       {"a", "b"},
       4,
       false},
      {"bounded_repetition",
       [](builder& b) { return b.repeat(b.literal("ab"), 1, 3); },
       {"ab", "abab", "ababab"},
       {"", "a", "abababab", "aba"},
       {"a", "b"},
       8},
      {"class_bounds",
       [](builder& b) { return b.chars("[a-c]", 2, 3) + b.chars("[^a]", 0, peg::unbounded); },
       {"ab", "abc", "abcd", "aabdd"},
       {"a", "abca", "dd"},
       {"a", "b", "c", "d"},
       5},
      {"unicode_class",
       [](builder& b) { return b.chars("[^\\x00-\\x7F]", 1, peg::unbounded); },
       {"\xC3\xA9", "\xE4\xB8\xAD\xC3\xA9"},
       {"", "a",
        "\xC3\xA9"
        "a"},
       {"\xC3\xA9", "a", "\xE4\xB8\xAD"},
       4},
      {"any_then_literal",
       [](builder& b) { return b.any() + b.literal("x"); },
       {"ax", "xx", "\xE4\xB8\xADx"},
       {"x", "axx", ""},
       {"x", "y", "\xC3\xA9"},
       4},
      {"lookahead_dropped",
       [](builder& b) { return b.negate(b.literal("a")) + b.any(); },
       {"b"},
       {"", "bb"},
       {"a", "b"},
       3,
       false},
      {"space_shift",
       [](builder& b) { return b.literal("a") << b.literal("b"); },
       {"ab", "a b", "a \n\t b"},
       {"a", "b", " ab", "ab "},
       {"a", "b", " ", "\n"},
       5},
      {"until_one",
       [](builder& b) { return b.until("</a>") + b.literal("</a>"); },
       {"</a>", "x</a>", "<</a>", "</</a>"},
       {"", "x", "</a></a>", "</a"},
       {"<", "/", "a", ">", "x"},
       6},
      {"until_self_overlap",
       [](builder& b) { return b.until("abab") + b.literal("abab"); },
       {"abab", "aabab", "babab"},
       {"ab", "abababab"},
       {"a", "b"},
       9,
       false},
      {"until_two",
       [](builder& b) {
         return b.until_one_of({"ab", "ba"}) + (b.literal("ab") | b.literal("ba")) + b.rest();
       },
       {"ab", "cab", "ccbacc", "aab"},
       {"", "c", "aa"},
       {"a", "b", "c"},
       6},
      {"until_three",
       [](builder& b) {
         return b.until_one_of({"x", "yz", "zzz"}) + (b.literal("x") | b.end());
       },
       {"", "x", "yyx", "zzy"},
       {"yz", "zzz", "xx"},
       {"x", "y", "z"},
       6},
      {"nested_rules",
       [](builder& b) {
         auto item = b.rule("item", b.literal("x") | b.ref("list"));
         return b.rule("list", b.literal("[") +
                                   b.optional(item + b.zero_or_more(b.literal(",") + item)) +
                                   b.literal("]"));
       },
       {"[]", "[x]", "[x,[x,[]]]"},
       {"[", "[x,]", "[,x]", "x"},
       {"[", "]", "x", ","},
       6},
      {"json_value",
       [](builder& b) { return b.json_value(); },
       {"1", "-0.5e+3", "[1, \"a\", {\"k\": null}]", "\"\\u00e9\\n\"", "true"},
       {"01", "[1,]", "\"\\q\"", "tru", "1.", "{\"a\"}"},
       {"[", "]", "1", "0", ",", " ", "\"", "."},
       4},
      {"json_object",
       [](builder& b) { return b.json_object(); },
       {"{}", "{ \"a\" : [ ] }", "{\"a\":1,\"b\":{\"c\":false}}"},
       {"{,}", "{\"a\":}", "[]"},
       {"{", "}", "\"a\"", ":", "1", ","},
       5},
      {"json_string_escapes",
       [](builder& b) { return b.json_string(); },
       {"\"\"", "\"a\\\"b\"", "\"\\u0041\\\\\""},
       {"\"", "\"\\x\"", "\"a\nb\""},
       {"\"", "\\", "u", "0", "a", "n"},
       6},
      {"gbnf_node",
       [](builder& b) {
         return b.literal("n=") + b.gbnf("[0-9]+", b.chars("[0-9]", 1, peg::unbounded));
       },
       {"n=1", "n=123"},
       {"n=", "n=a", "1"},
       {"n", "=", "1", "a"},
       5},
      {"tool_call",
       tool_call_grammar,
       {"hello", "<tool_call>{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}</tool_call>",
        "I'll check. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>\n"
        "<tool_call>{\"name\":\"search\",\"arguments\":{\"q\":[1,2]}}</tool_call>"},
       {"<tool_call>{\"name\": \"other\", \"arguments\": {}}</tool_call>",
        "<tool_call>{\"name\": \"search\"}</tool_call>",
        "<tool_call>{\"name\": \"search\", \"arguments\": {}}</tool_call> trailing"},
       {"<tool_call>", "</tool_call>", "{", "}", "\"name\"", ":", "\"search\"", ",",
        "\"arguments\"", " ", "x"},
       4},
  };
  return table;
}

struct compiled_case {
  peg::grammar peg;
  std::shared_ptr<const gbnf_grammar> gbnf;
  std::string text;
};

std::optional<compiled_case> compile(const agreement_case& c) {
  builder b;
  auto root = c.make(b);
  auto g = b.build(root);
  EXPECT_TRUE(g.has_value()) << c.name << ": " << g.error().to_string();
  if (!g) return std::nullopt;
  auto text = peg::export_gbnf(*g);
  EXPECT_TRUE(text.has_value()) << c.name << ": " << text.error().to_string();
  if (!text) return std::nullopt;
  auto gbnf = parse_gbnf(*text);
  EXPECT_TRUE(gbnf.has_value()) << c.name << ": " << gbnf.error().to_string() << "\n" << *text;
  if (!gbnf) return std::nullopt;
  return compiled_case{std::move(*g), *gbnf, *text};
}

bool peg_accepts(const peg::grammar& g, const std::string& s) {
  return peg::match(g, s, peg::match_flags::complete).ok();
}

bool gbnf_accepts(const gbnf_grammar& g, const std::string& s) {
  auto r = recognize(g, s);
  EXPECT_TRUE(r.has_value()) << r.error().to_string();
  return r.has_value() && r->accepted;
}

class gbnf_agreement : public ::testing::TestWithParam<agreement_case> {};

TEST_P(gbnf_agreement, listed_strings) {
  const auto& c = GetParam();
  auto compiled = compile(c);
  ASSERT_TRUE(compiled);
  for (const auto& s : c.accepted) {
    EXPECT_TRUE(peg_accepts(compiled->peg, s)) << "PEG should accept '" << s << "'";
    EXPECT_TRUE(gbnf_accepts(*compiled->gbnf, s)) << "GBNF should accept '" << s << "'\n"
                                                  << compiled->text;
  }
  for (const auto& s : c.rejected) {
    EXPECT_FALSE(peg_accepts(compiled->peg, s)) << "PEG should reject '" << s << "'";
    EXPECT_FALSE(gbnf_accepts(*compiled->gbnf, s)) << "GBNF should reject '" << s << "'\n"
                                                   << compiled->text;
  }
}

TEST_P(gbnf_agreement, peg_accepted_implies_gbnf_accepted) {
  const auto& c = GetParam();
  auto compiled = compile(c);
  ASSERT_TRUE(compiled);
  std::size_t peg_yes = 0;
  std::size_t differ = 0;
  auto check = [&](const std::string& s) {
    const bool p = peg_accepts(compiled->peg, s);
    const bool g = gbnf_accepts(*compiled->gbnf, s);
    peg_yes += p ? 1 : 0;
    differ += p != g ? 1 : 0;
    if (p) {
      EXPECT_TRUE(g) << "PEG accepts but GBNF rejects '" << s << "'\n" << compiled->text;
    }
    if (c.exact) {
      EXPECT_EQ(p, g) << "languages differ on '" << s << "'\n" << compiled->text;
    }
  };
  // Exhaustive over up to max_tokens tokens.
  std::vector<std::string> level{""};
  check("");
  for (std::size_t n = 1; n <= c.max_tokens; ++n) {
    std::vector<std::string> next;
    for (const auto& s : level) {
      for (const auto& t : c.alphabet) {
        next.push_back(s + t);
        check(next.back());
      }
    }
    level = std::move(next);
  }
  // Random longer sequences (fixed seed: reproducible), plus the listed accepted strings
  // with tokens spliced in.
  std::mt19937 rng(12345);
  for (int i = 0; i < 300; ++i) {
    std::string s;
    if (!c.accepted.empty() && i % 2 == 0) s = c.accepted[rng() % c.accepted.size()];
    const std::size_t extra = rng() % 6;
    for (std::size_t k = 0; k < extra; ++k) {
      const auto& t = c.alphabet[rng() % c.alphabet.size()];
      const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
      // Insert only at code point boundaries.
      std::size_t pos = at;
      while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
      s.insert(pos, t);
    }
    check(s);
  }
  if (!c.exact) {
    // Non-exact cases in the table are there because the languages do differ somewhere.
    EXPECT_GT(differ, 0u) << c.name << " is marked inexact but agreed on every sample";
  }
  if (!c.accepted.empty()) {
    EXPECT_GT(peg_yes, 0u);
  }
}

TEST_P(gbnf_agreement, export_is_deterministic) {
  const auto& c = GetParam();
  auto first = compile(c);
  auto second = compile(c);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->text, second->text);
}

// The grammars of the PEG matcher test suite (tests/peg/test_grammars.h: the named grammars
// and the random-grammar generator): every random input the PEG accepts is accepted by the
// recognizer on the exported GBNF; for the named grammars a sample of PEG-rejected inputs is
// rejected by the GBNF too (the export may only be looser where a lookahead or ordered choice
// decides, so most rejections must agree).
TEST(gbnf_agreement_suite, peg_test_grammars) {
  std::mt19937 rng(2024);
  auto check = [&](const char* name, const std::function<parser(builder&)>& make,
                   const std::vector<std::string>& pieces, bool sample_rejections) {
    SCOPED_TRACE(name);
    builder b;
    auto g = b.build(make(b));
    if (!g && !sample_rejections) return;  // a random grammar validate() refuses
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    auto text = peg::export_gbnf(*g);
    ASSERT_TRUE(text.has_value()) << text.error().to_string();
    auto gbnf = parse_gbnf(*text);
    ASSERT_TRUE(gbnf.has_value()) << gbnf.error().to_string() << "\n" << *text;
    std::size_t peg_no = 0, both_no = 0;
    for (int i = 0; i < 400; ++i) {
      const std::string s = peg::test_support::random_text(rng, pieces);
      const bool p = peg_accepts(*g, s);
      const bool q = gbnf_accepts(**gbnf, s);
      if (p) {
        EXPECT_TRUE(q) << "PEG accepts but GBNF rejects '" << s << "'\n" << *text;
      } else {
        ++peg_no;
        both_no += q ? 0 : 1;
      }
    }
    if (sample_rejections && peg_no >= 20) {
      EXPECT_GE(both_no * 2, peg_no) << "GBNF rejects only " << both_no << " of " << peg_no;
    }
  };
  for (const auto& named : peg::test_support::grammars()) {
    check(named.name, named.make, named.pieces, true);
  }
  for (int k = 0; k < 40; ++k) {
    std::mt19937 grng(static_cast<unsigned>(7000 + k));
    peg::test_support::grammar_generator gen(grng);
    const std::string name = "random grammar " + std::to_string(k);
    check(
        name.c_str(), [&](builder& b) { return gen.make(b); },
        {"a", "b", "ab", " ", "ba", " a", "x"}, false);
  }
}

INSTANTIATE_TEST_SUITE_P(table, gbnf_agreement, ::testing::ValuesIn(cases()),
                         [](const auto& tc) { return std::string(tc.param.name); });

}  // namespace
}  // namespace chatpeg::grammar

// Tests of the Earley GBNF recognizer: accept/reject with byte offsets and expectations,
// nullable and ambiguous grammars, repetition bounds, prefix mode, UTF-8 classes, invalid
// UTF-8 input, limits, and properties checked against direct deciders by enumeration.
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <regex>
#include <string>

#include "chatpeg/grammar/gbnf.h"

namespace chatpeg::grammar {
namespace {

// The recognizer decides any context-free GBNF (left recursion, large counts, empty classes),
// so these grammars are read without llama.cpp's loader limits (gbnf_loader_rules_test.cpp).
std::shared_ptr<const gbnf_grammar> load(const std::string& text) {
  auto g = parse_gbnf(text, {.llama_loader = false});
  EXPECT_TRUE(g.has_value()) << (g.has_value() ? "" : g.error().to_string()) << "\n" << text;
  return g.has_value() ? *g : nullptr;
}

struct rec_case {
  const char* name;
  std::string grammar;
  std::string input;
  bool accepted;
  std::size_t fail_offset = 0;
  const char* expected = "";  // substring of the expectation when rejected
  bool prefix = false;
};
void PrintTo(const rec_case& c, std::ostream* os) {
  *os << c.name;
}

class gbnf_recognizer_table : public ::testing::TestWithParam<rec_case> {};

TEST_P(gbnf_recognizer_table, decides) {
  const auto& c = GetParam();
  auto g = load(c.grammar);
  ASSERT_TRUE(g);
  auto r = recognize(*g, c.input, {.allow_prefix = c.prefix});
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->accepted, c.accepted) << "input: " << c.input;
  if (!c.accepted && !r->accepted) {
    EXPECT_EQ(r->fail_offset, c.fail_offset) << "expected: " << r->expected;
    EXPECT_NE(r->expected.find(c.expected), std::string::npos) << r->expected;
  }
}

const std::string json_gbnf = R"(# JSON (RFC 8259)
root   ::= ws value ws
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( ws "," ws member )* )? ws "}"
member ::= string ws ":" ws value
array  ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
string ::= "\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws     ::= [ \t\n\r]*
)";

const std::string nullable_gbnf =
    "root ::= a b c\na ::= \"\" | \"x\"\nb ::= c c\nc ::= \"\" | \"y\"\n";

INSTANTIATE_TEST_SUITE_P(
    table, gbnf_recognizer_table,
    ::testing::Values(
        rec_case{"literal_ok", "root ::= \"abc\"", "abc", true},
        rec_case{"literal_wrong_char", "root ::= \"abc\"", "abd", false, 2, "\"c\""},
        rec_case{"literal_short", "root ::= \"abc\"", "ab", false, 2, "\"c\""},
        rec_case{"literal_long", "root ::= \"abc\"", "abcd", false, 3, "end of input"},
        rec_case{"empty_accepts_empty", "root ::= \"\"", "", true},
        rec_case{"empty_rejects_char", "root ::= \"\"", "a", false, 0, "end of input"},
        rec_case{"nullable_empty", nullable_gbnf, "", true},
        rec_case{"nullable_x", nullable_gbnf, "x", true},
        rec_case{"nullable_xyyy", nullable_gbnf, "xyyy", true},
        rec_case{"nullable_yyy", nullable_gbnf, "yyy", true},
        rec_case{"nullable_too_many", nullable_gbnf, "yyyy", false, 3, "end of input"},
        rec_case{"nullable_order", nullable_gbnf, "yx", false, 1, "\"y\""},
        rec_case{"nullable_chain", "root ::= a a \"z\" a\na ::= b\nb ::= c\nc ::= \"\"", "z", true},
        rec_case{"nullable_recursive", "root ::= a \"z\"\na ::= a a | \"\" | \"q\"", "qqz", true},
        rec_case{"ambiguous_left", "root ::= e\ne ::= e \"+\" e | \"1\"", "1+1+1+1", true},
        rec_case{"ambiguous_reject", "root ::= e\ne ::= e \"+\" e | \"1\"", "1++1", false, 2,
                 "\"1\""},
        rec_case{"right_recursion", "root ::= x\nx ::= \"a\" x | \"a\"", "aaaaaa", true},
        rec_case{"bounds_low", "root ::= \"a\"{2,4}", "a", false, 1, "\"a\""},
        rec_case{"bounds_2", "root ::= \"a\"{2,4}", "aa", true},
        rec_case{"bounds_4", "root ::= \"a\"{2,4}", "aaaa", true},
        rec_case{"bounds_high", "root ::= \"a\"{2,4}", "aaaaa", false, 4, "end of input"},
        rec_case{"bounds_exact", "root ::= \"ab\"{3}", "ababab", true},
        rec_case{"bounds_exact_short", "root ::= \"ab\"{3}", "abab", false, 4, "\"a\""},
        rec_case{"bounds_open", "root ::= \"a\"{2,} \"b\"", "aaaaab", true},
        rec_case{"bounds_open_low", "root ::= \"a\"{2,} \"b\"", "ab", false, 1, "\"a\""},
        rec_case{"bounds_zero", "root ::= \"a\"{0} \"b\"", "b", true},
        rec_case{"bounds_group", "root ::= (\"a\" | \"bc\"){1,3}", "bcabc", true},
        rec_case{"bounds_group_over", "root ::= (\"a\" | \"bc\"){1,3}", "bcabca", false, 5,
                 "end of input"},
        rec_case{"star_of_nullable", "root ::= (\"a\"?)* \"b\"", "aab", true},
        rec_case{"class_negated", "root ::= [^\"\\\\]+", "h\xC3\xA9llo", true},
        rec_case{"class_negated_reject", "root ::= [^\"\\\\]+", "ab\"", false, 2, "[^\"\\\\]"},
        rec_case{"class_cjk", "root ::= [\\u4e00-\\u9fff]+", "\xE4\xB8\xAD\xE6\x96\x87", true},
        rec_case{"class_cjk_reject", "root ::= [\\u4e00-\\u9fff]+",
                 "\xE4\xB8\xAD"
                 "a",
                 false, 3, "[\xE4\xB8\x80-\xE9\xBF\xBF]"},
        rec_case{"class_astral", "root ::= [\\U0001F600-\\U0001F64F]", "\xF0\x9F\x98\x80", true},
        rec_case{"any_newline", "root ::= . . .", "\n\xF0\x9F\x98\x80z", true},
        rec_case{"any_expected", "root ::= \"a\" .", "a", false, 1, "any character"},
        rec_case{"empty_class", "root ::= [] | \"a\"", "", false, 0, "\"a\""},
        rec_case{"json_object", json_gbnf,
                 R"({"a": [1, 2.5e-3, true, null], "b": {"c": "\u00e9"}})", true},
        rec_case{"json_trailing_comma", json_gbnf, R"({"a": 1,})", false, 8, "\"\\\"\""},
        rec_case{"json_bad_escape", json_gbnf, R"(["\q"])", false, 3, "[\"/\\\\bfnrt]"},
        rec_case{"json_leading_zero", json_gbnf, "[01]", false, 2, "\"]\""},
        rec_case{"prefix_json", json_gbnf, R"({"name": "get_weather", "arguments": {"ci)", true, 0,
                 "", true},
        rec_case{"prefix_json_bad", json_gbnf, R"({"name"})", false, 7, "\":\"", true},
        rec_case{"prefix_empty", "root ::= \"abc\"", "", true, 0, "", true},
        rec_case{"prefix_whole", "root ::= \"abc\"", "abc", true, 0, "", true},
        rec_case{"prefix_over", "root ::= \"abc\"", "abcd", false, 3, "end of input", true},
        rec_case{"prefix_dead_end", "root ::= \"a\" loop | \"b\"\nloop ::= \"x\" loop", "ax", false,
                 0, "\"b\"", true},
        rec_case{"prefix_utf8_tail", "root ::= \"\xC3\xA9\"", "\xC3", true, 0, "", true},
        rec_case{"prefix_utf8_tail_wrong", "root ::= \"a\"", "\xC3", false, 0, "\"a\"", true},
        rec_case{"prefix_utf8_tail_class", "root ::= [\\u4e00-\\u9fff]", "\xE4\xB8", true, 0, "",
                 true},
        rec_case{"prefix_utf8_tail_class_out", "root ::= [\\u4e00-\\u9fff]", "\xE3\x80", false, 0,
                 "", true},
        rec_case{"reject_before_invalid_utf8", "root ::= \"x\" .*", "a\xFF", false, 0, "\"x\""}),
    [](const auto& tc) { return std::string(tc.param.name); });

TEST(gbnf_recognizer, invalid_utf8_is_an_error_with_offset) {
  auto g = load("root ::= .*");
  for (const auto& [input, offset] :
       std::vector<std::pair<std::string, std::size_t>>{{"ab\xFF"
                                                         "c",
                                                         2},
                                                        {"a\xC3(", 1},
                                                        {"\xED\xA0\x80", 0},
                                                        {"ok\xE4\xB8", 2}}) {
    auto r = recognize(*g, input);
    ASSERT_FALSE(r.has_value()) << input;
    EXPECT_EQ(r.error().code, base::errc::invalid_argument);
    EXPECT_EQ(r.error().where.offset, offset);
    EXPECT_NE(r.error().message.find("UTF-8"), std::string::npos);
  }
}

TEST(gbnf_recognizer, max_items_is_a_limit_error) {
  auto g = load(json_gbnf);
  const std::string input = "[" + std::string(2000, '1') + "]";
  auto r = recognize(*g, input, {.max_items = 500});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
  EXPECT_TRUE(recognize(*g, input).has_value());
}

// Nested repetitions make a highly ambiguous grammar: a completion revisits O(n) parents whose
// items mostly exist already. max_items counts those attempts too, so the work stays bounded
// (fuzz finding gbnf_check: `[^\\]++++++++*****...` timed out). Here: 132,821 distinct items
// but 2,642,570 additions; counting only distinct items, the 1,000,000 budget did not stop it.
TEST(gbnf_recognizer, max_items_bounds_ambiguous_completions) {
  auto g = load("root ::= [^\\\\]++++++++++");
  const std::string input(100, 'a');
  auto r = recognize(*g, input, {.max_items = 1000000});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded);
  auto ok = recognize(*g, input);
  ASSERT_TRUE(ok.has_value()) << ok.error().to_string();
  EXPECT_TRUE(ok->accepted);
}

TEST(gbnf_recognizer, long_and_deep_inputs) {
  auto g = load(json_gbnf);
  std::string text = "\"";
  for (int i = 0; i < 65536 / 8; ++i) text += "abc\\n\xC3\xA9 ";
  text += "\"";
  auto r = recognize(*g, text);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->accepted);
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  r = recognize(*g, deep);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->accepted);
  r = recognize(*g, deep.substr(0, 9999));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->accepted);
  EXPECT_EQ(r->fail_offset, 9999u);
}

// Item counts grow linearly with the input (a quadratic recognizer would exceed the bound):
// left recursion by construction, right recursion through Leo's optimization.
TEST(gbnf_recognizer, linear_item_counts) {
  const std::size_t n = 20000;
  for (const char* grammar :
       {"root ::= x\nx ::= \"a\" x | \"\"", "root ::= x \"b\"\nx ::= \"a\" x | \"a\"",
        "root ::= x\nx ::= \"\" | x \"a\"", "root ::= \"a\"*", "root ::= (\"a\" | \"b\")+ \"a\"?",
        "root ::= s0\ns0 ::= \"\" | [^<] s0 | \"<\" s1\ns1 ::= \"\" | [^/<] s0 | \"<\" s1",
        "root ::= \"a\"{0,30000}"}) {
    auto g = load(grammar);
    std::string input(n, 'a');
    if (std::string(grammar).find("\"b\"\n") != std::string::npos) input += "b";
    auto r = recognize(*g, input, {.max_items = 20 * n});
    ASSERT_TRUE(r.has_value()) << grammar << ": " << r.error().to_string();
    EXPECT_TRUE(r->accepted) << grammar;
  }
}

TEST(gbnf_recognizer, grammar_is_reusable_and_shared) {
  auto g = load("root ::= [a-c]+");
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(recognize(*g, "abcabc")->accepted);
    EXPECT_FALSE(recognize(*g, "abd")->accepted);
  }
}

// Enumerates every string over an alphabet up to a length and compares the recognizer (whole
// input and prefix mode) with direct deciders.
void enumerate(const std::string& alphabet, std::size_t max_len,
               const std::function<void(const std::string&)>& f) {
  std::string s;
  std::function<void()> rec = [&] {
    f(s);
    if (s.size() == max_len) return;
    for (char c : alphabet) {
      s.push_back(c);
      rec();
      s.pop_back();
    }
  };
  rec();
}

TEST(gbnf_recognizer_property, balanced_parentheses) {
  for (const char* grammar :
       {"root ::= (\"(\" root \")\")*", "root ::= \"\" | root \"(\" root \")\"",
        "root ::= x*\nx ::= \"(\" x* \")\""}) {
    auto g = load(grammar);
    enumerate("()", 10, [&](const std::string& s) {
      int depth = 0;
      bool never_negative = true;
      std::size_t first_bad = s.size();
      for (std::size_t i = 0; i < s.size(); ++i) {
        depth += s[i] == '(' ? 1 : -1;
        if (depth < 0 && never_negative) {
          never_negative = false;
          first_bad = i;
        }
      }
      auto whole = recognize(*g, s);
      ASSERT_TRUE(whole.has_value());
      EXPECT_EQ(whole->accepted, never_negative && depth == 0) << grammar << " on " << s;
      if (!whole->accepted) {
        EXPECT_EQ(whole->fail_offset, first_bad) << grammar << " on " << s;
      }
      auto prefix = recognize(*g, s, {.allow_prefix = true});
      EXPECT_EQ(prefix->accepted, never_negative) << grammar << " prefix " << s;
    });
  }
}

TEST(gbnf_recognizer_property, bounded_repetition_counts) {
  auto g = load("root ::= \"a\"{2,4} (\"b\" | \"c\"){0,2} \"a\"?");
  const std::regex direct("a{2,4}[bc]{0,2}a?");
  enumerate("abc", 8, [&](const std::string& s) {
    const bool ok = std::regex_match(s, direct);
    auto r = recognize(*g, s);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->accepted, ok) << s;
  });
}

}  // namespace
}  // namespace chatpeg::grammar

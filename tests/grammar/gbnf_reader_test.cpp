// Tests of the GBNF reader: valid grammars in every syntax form llama.cpp accepts, and
// malformed grammars with the exact line:column, error code and expectation reported.
#include <gtest/gtest.h>

#include <iterator>
#include <ostream>
#include <random>
#include <string>

#include "chatpeg/grammar/gbnf.h"

namespace chatpeg::grammar {
namespace {

struct valid_case {
  const char* name;
  std::string text;
  std::size_t rules;
};
void PrintTo(const valid_case& c, std::ostream* os) {
  *os << c.name;
}

class gbnf_reader_valid : public ::testing::TestWithParam<valid_case> {};

TEST_P(gbnf_reader_valid, parses) {
  const auto& c = GetParam();
  auto g = parse_gbnf(c.text);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  EXPECT_EQ(gbnf_rule_count(**g), c.rules);
}

INSTANTIATE_TEST_SUITE_P(
    table, gbnf_reader_valid,
    ::testing::Values(
        valid_case{"literal", "root ::= \"a\"", 1}, valid_case{"empty_literal", "root ::= \"\"", 1},
        valid_case{"empty_body", "root ::=\n", 1},
        valid_case{"alternatives", "root ::= \"a\" | \"b\" | x\nx ::= [0-9]", 2},
        valid_case{"comments", "# leading\nroot ::= x # trailing\n# between\nx ::= \"x\"\n", 2},
        valid_case{"newline_after_bar", "root ::= \"a\" |\n  \"b\"\n", 1},
        valid_case{"newline_after_def", "root ::=\n  \"a\"\n", 1},
        valid_case{"newline_in_group", "root ::= (\n  \"a\"\n  | \"b\"\n)\n", 1},
        valid_case{"crlf", "root ::= x\r\nx ::= \"y\"\r\n", 2},
        valid_case{"escapes", R"(root ::= "\n\r\t\\\"\[\]\x41\u00e9\U0001F600")", 1},
        valid_case{"class_escapes", R"(root ::= [^\]\\\x00-\x1F"] [\u0100-\uFFFF])", 1},
        valid_case{"class_dash_last", "root ::= [a-]", 1}, valid_case{"any", "root ::= . .*", 1},
        valid_case{"tokens", "root ::= <[12]> !<[3]>* \"a\"", 1},
        valid_case{"defined_twice_keeps_the_last", "root ::= x\nx ::= \"a\"\nx ::= \"b\"", 2},
        valid_case{"postfix", "root ::= \"a\"* \"b\"+ \"c\"? (\"d\" \"e\")*", 1},
        valid_case{"braces", "root ::= \"a\"{2} \"b\"{1,} \"c\"{0,3} \"d\"{ 2 , 4 }", 1},
        valid_case{"stacked_postfix", "root ::= \"a\"*?", 1},
        valid_case{"forward_ref", "root ::= later\nlater ::= \"x\"", 2},
        valid_case{"recursion", "root ::= \"(\" root \")\" | \"\"", 1},
        valid_case{"names", "root ::= a-b1\na-b1 ::= \"x\"", 2},
        valid_case{"utf8_literal", "root ::= \"h\xC3\xA9llo \xE2\x9C\x93\"", 1}),
    [](const auto& tc) { return std::string(tc.param.name); });

struct invalid_case {
  const char* name;
  std::string text;
  base::errc code;
  std::uint32_t line;
  std::uint32_t column;
  const char* message_part;
};
void PrintTo(const invalid_case& c, std::ostream* os) {
  *os << c.name;
}

class gbnf_reader_invalid : public ::testing::TestWithParam<invalid_case> {};

TEST_P(gbnf_reader_invalid, reports_where) {
  const auto& c = GetParam();
  auto g = parse_gbnf(c.text);
  ASSERT_FALSE(g.has_value()) << c.text;
  const auto& e = g.error();
  EXPECT_EQ(e.code, c.code) << e.to_string();
  EXPECT_EQ(e.where.line, c.line) << e.to_string();
  if (c.column != 0) {
    EXPECT_EQ(e.where.column, c.column) << e.to_string();
  }
  EXPECT_NE(e.message.find(c.message_part), std::string::npos) << e.to_string();
  EXPECT_NE(e.where.offset, base::npos);
  if (c.code == base::errc::syntax_error) {
    EXPECT_FALSE(e.expected.empty()) << e.to_string();
  }
}

const auto syn = base::errc::syntax_error;
const auto lim = base::errc::limit_exceeded;

INSTANTIATE_TEST_SUITE_P(
    table, gbnf_reader_invalid,
    ::testing::Values(
        invalid_case{"unterminated_literal", "root ::= \"abc", syn, 1, 10, "unterminated string"},
        invalid_case{"unterminated_class", "root ::= [a-z", syn, 1, 10, "unterminated character"},
        invalid_case{"missing_assign", "root = \"a\"", syn, 1, 6, "'::='"},
        invalid_case{"missing_name", "::= \"a\"", syn, 1, 1, "rule name"},
        invalid_case{"undefined_rule", "root ::= \"a\" foo", syn, 1, 14, "undefined rule 'foo'"},
        invalid_case{"undefined_second_line", "root ::= x\nx ::= y", syn, 2, 7, "'y'"},
        invalid_case{"no_root", "foo ::= \"a\"\n", syn, 2, 1, "no 'root' rule"},
        invalid_case{"empty_grammar", "", syn, 1, 1, "no 'root' rule"},
        invalid_case{"unknown_escape", "root ::= \"\\q\"", syn, 1, 11, "unknown escape"},
        invalid_case{"escaped_dash", "root ::= [a\\-z]", syn, 1, 12, "unknown escape"},
        invalid_case{"token_by_text", "root ::= <think>", syn, 1, 10, "vocabulary"},
        invalid_case{"token_unclosed", "root ::= <[12]", syn, 1, 15, "'>'"},
        invalid_case{"short_hex", "root ::= \"\\x4\"", syn, 1, 14, "hex digits"},
        invalid_case{"postfix_first", "root ::= *", syn, 1, 10, "must follow"},
        invalid_case{"braces_reversed", "root ::= \"a\"{3,1}", syn, 1, 13, "n < m"},
        invalid_case{"braces_no_number", "root ::= \"a\"{x}", syn, 1, 14, "number"},
        invalid_case{"braces_unclosed", "root ::= \"a\"{1,2", syn, 1, 17, "'}'"},
        invalid_case{"unterminated_group", "root ::= (\"a\"", syn, 1, 14, "unterminated group"},
        invalid_case{"stray_paren", "root ::= \"a\" )", syn, 1, 14, "unexpected ')'"},
        invalid_case{"two_rules_one_line", "root ::= \"a\" b ::= \"c\"", syn, 1, 16,
                     "unexpected ':'"},
        invalid_case{"reversed_range", "root ::= [z-a]", syn, 1, 11, "reversed"},
        invalid_case{"invalid_utf8", "root ::= \"\xFF\"", syn, 1, 11, "UTF-8"},
        invalid_case{"multiline_position", "root ::= x\n\nx ::= \"a\" |\n  \"b\" ]", syn, 4, 7,
                     "unexpected ']'"},
        invalid_case{"nesting",
                     "root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')'), lim, 1,
                     266, "nested deeper"},
        invalid_case{"hostile_nesting", "root ::= " + std::string(200000, '('), lim, 1, 266,
                     "nested deeper"},
        invalid_case{"huge_count", "root ::= \"a\"{99999999}", lim, 1, 14, "repetition count"}),
    [](const auto& tc) { return std::string(tc.param.name); });

TEST(gbnf_reader, without_loader_limits) {
  // llama.cpp reads [] as the empty string, so does the reader by default; without its
  // rules [] is a class that matches no character.
  for (const bool loader : {true, false}) {
    auto e = parse_gbnf("root ::= [] | \"a\"", {.llama_loader = loader});
    ASSERT_TRUE(e.has_value());
    auto r = recognize(**e, "");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->accepted, loader);
  }
  auto g =
      parse_gbnf("root ::= \"a\"{900000} \"b\"{900000} \"c\"{900000} \"d\"{900000} \"e\"{900000}",
                 {.llama_loader = false});
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code, base::errc::limit_exceeded);
  EXPECT_NE(g.error().message.find("symbols"), std::string::npos) << g.error().to_string();
}

TEST(gbnf_reader, expansion_limit_reported_not_allocated) {
  // Repetitions of groups refer to the group's rule, so only counts multiply into symbols.
  EXPECT_TRUE(parse_gbnf("root ::= (\"a\"{1000}){1000}", {.max_symbols = 100000}).has_value());
  auto g = parse_gbnf("root ::= \"a\"{100001}", {.max_symbols = 100000, .llama_loader = false});
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code, base::errc::limit_exceeded);
}

TEST(gbnf_reader, custom_root_name) {
  EXPECT_TRUE(parse_gbnf("start ::= \"a\"", {.root = "start"}).has_value());
  auto g = parse_gbnf("root ::= \"a\"", {.root = "start"});
  ASSERT_FALSE(g.has_value());
  EXPECT_NE(g.error().message.find("'start'"), std::string::npos);
}

TEST(gbnf_reader, max_rules) {
  auto g = parse_gbnf("root ::= a\na ::= b\nb ::= \"x\"", {.max_rules = 2});
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code, base::errc::limit_exceeded);
  EXPECT_EQ(g.error().where.line, 3u);
}

TEST(gbnf_reader, error_string_has_line_column_and_expectation) {
  auto g = parse_gbnf("root ::= \"a\"\nx ::= (\"b\"\n");
  ASSERT_FALSE(g.has_value());
  const std::string s = g.error().to_string();
  EXPECT_NE(s.find("3:1"), std::string::npos) << s;
  EXPECT_NE(s.find("expected"), std::string::npos) << s;
}

}  // namespace
}  // namespace chatpeg::grammar

namespace chatpeg::grammar {
namespace {

// Hostile input: random GBNF-like text never crashes the reader; errors always point inside
// the text with a line and column, and grammars that parse can be run.
TEST(gbnf_reader_property, random_text_is_handled) {
  const std::string pieces[] = {
      "root", " ::= ", "::=", "(", ")", "[", "]",  "\"", "\\", "|", "*", "+",    "?",       "{",
      "}",    ",",     ".",   "-", "^", "a", "x1", " ",  "\n", "#", "2", "\\x4", "\\u00e9", "\xC3"};
  std::mt19937 rng(7);
  std::size_t parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = i % 2 == 0 ? "root ::= " : "";
    const std::size_t n = rng() % 24;
    for (std::size_t k = 0; k < n; ++k) text += pieces[rng() % std::size(pieces)];
    auto g = parse_gbnf(text);
    if (!g) {
      const auto& w = g.error().where;
      ASSERT_NE(w.offset, base::npos) << text;
      ASSERT_LE(w.offset, text.size()) << text;
      ASSERT_GE(w.line, 1u) << text;
      ASSERT_GE(w.column, 1u) << text;
      continue;
    }
    ++parsed;
    for (const char* input : {"", "a", "aa", "x1", "\xC3\xA9"}) {
      auto r = recognize(**g, input, {.max_items = 100000});
      if (r) {
        ASSERT_LE(r->fail_offset, std::string_view(input).size());
      }
    }
  }
  EXPECT_GT(parsed, 100u);
}

// An escape beyond U+10FFFF loads, as in llama.cpp's loader, with a warning: no text holds it.
TEST(gbnf_reader, code_point_beyond_unicode_loads_and_warns) {
  auto g = parse_gbnf("root ::= \"\\U00110000\" | \"a\"");
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  const auto& warnings = gbnf_warnings(**g);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].where.line, 1u);
  EXPECT_EQ(warnings[0].where.column, 11u);
  EXPECT_NE(warnings[0].message.find("never matches"), std::string::npos) << warnings[0].message;
  auto a = recognize(**g, "a");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->accepted);
}

}  // namespace
}  // namespace chatpeg::grammar

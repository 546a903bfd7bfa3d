// llama.cpp's grammar loader rules in the GBNF reader (gbnf_loader_rules.cpp): each rule with
// forms the loader accepts and forms it refuses, the refusal naming the rule, the line:column
// and the numbers. The counting follows llama.cpp: a repetition's count (the maximum when
// bounded, else the minimum) times the rules its element stands for — 1 for a literal, class,
// `.` or rule name; for a group every rule id created while reading it, including n-m for a
// nested {m,n}, one per * + ?, and rule names mentioned there for the first time — must stay
// below 2000, and stacked repetitions multiply.
#include <gtest/gtest.h>

#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "chatpeg/grammar/gbnf.h"
#include "support/gbnf_oracle.h"

namespace chatpeg::grammar {
namespace {

struct loader_case {
  const char* name;
  std::string text;
  bool loads;
  std::uint32_t line = 0;  // of the refusal
  std::uint32_t column = 0;
  const char* message_part = "";
};
void PrintTo(const loader_case& c, std::ostream* os) {
  *os << c.name;
}

class gbnf_loader_rules : public ::testing::TestWithParam<loader_case> {};

TEST_P(gbnf_loader_rules, accepts_or_refuses_with_where) {
  const auto& c = GetParam();
  auto g = parse_gbnf(c.text);
  if (c.loads) {
    EXPECT_TRUE(g.has_value()) << g.error().to_string();
    // Without the loader rules the same text is read too (they only refuse).
    EXPECT_TRUE(parse_gbnf(c.text, {.llama_loader = false}).has_value());
    return;
  }
  ASSERT_FALSE(g.has_value()) << c.text;
  const auto& e = g.error();
  EXPECT_EQ(e.where.line, c.line) << e.to_string();
  EXPECT_EQ(e.where.column, c.column) << e.to_string();
  EXPECT_NE(e.message.find(c.message_part), std::string::npos) << e.to_string();
  EXPECT_FALSE(e.expected.empty()) << e.to_string();
  // Beyond syntax, only the loader refuses it: the grammar itself is well-formed.
  if (e.code != base::errc::syntax_error) {
    EXPECT_TRUE(parse_gbnf(c.text, {.llama_loader = false}).has_value()) << c.text;
  }
}

const std::string ws16 = "[ \\t]{0,16}";

std::vector<loader_case> loader_cases() {
  return {
      // Counts: up to 2000 each; a count of 2000 on one element makes 2000 rules: refused.
      loader_case{"count_1999", "root ::= \"a\"{0,1999}", true},
      loader_case{"count_2000", "root ::= \"a\"{0,2000}", false, 1, 13, "makes 2000"},
      loader_case{"min_above_limit", "root ::= \"a\"{2001,}", false, 1, 13, "above 2000"},
      loader_case{"max_above_limit", "root ::= \"a\"{1,2001}", false, 1, 13, "above 2000"},
      loader_case{"min_1999_unbounded", "root ::= \"a\"{1999,}", true},
      loader_case{"unbounded_forms", "root ::= (\"a\" [b]{0,100})* (\"c\")+ (\"d\")?", true},
      // A group stands for the rules made inside it: 1 + 16 for a nested {0,16}.
      loader_case{"group_of_run_under", "root ::= (\",\" " + ws16 + " \"x\"){0,117}", true},
      loader_case{"group_of_run_over", "root ::= (\",\" " + ws16 + " \"x\"){0,118}", false, 1, 31,
                  "stands for 17 rules makes 2006"},
      loader_case{"named_rule_is_one", "root ::= item{0,1999}\nitem ::= \",\" " + ws16 + " \"x\"",
                  true},
      // Rule names first mentioned inside the group count; ones mentioned before do not.
      loader_case{"first_mention_counts",
                  "root ::= (a b c){0,500}\na ::= \"a\"\nb ::= \"b\"\n"
                  "c ::= \"c\"",
                  false, 1, 17, "stands for 4 rules"},
      loader_case{"earlier_mention_is_free",
                  "a ::= \"a\"\nb ::= \"b\"\nc ::= \"c\"\nroot ::= (a b c){0,1999}", true},
      // Stacked repetitions multiply; * + ? count 1.
      loader_case{"stacked_multiply", "root ::= \"a\"{40}{50}", false, 1, 17, "makes 2000"},
      loader_case{"stacked_under", "root ::= \"a\"{40}{49}*?", true},
      // Every sequence counts on its own: alternatives and later elements restart at 1.
      loader_case{"alternatives_restart", "root ::= \"a\"{1500} | \"b\"{1500}", true},
      loader_case{"nested_rule_reports_its_name",
                  "root ::= x\nx ::= \"[\" (\"y\" [0-9]{0,9}){0,200} \"]\"", false, 2, 27,
                  "rule 'x'"},
      // Empty classes: llama.cpp reads [] and [^] as the empty string; repeated, as nothing.
      loader_case{"empty_class", "root ::= \"a\" []", true},
      loader_case{"empty_negated_class", "root ::= [^]", true},
      loader_case{"repeated_empty_class", "root ::= \"a\" []+", false, 1, 16,
                  "after an empty literal or class"},
      loader_case{"repeated_empty_literal", "root ::= \"a\" \"\"*", false, 1, 16,
                  "after an empty literal"},
      loader_case{"empty_literal_alone", "root ::= \"\" | \"a\"", true},
      loader_case{"never_matching_class", "root ::= [^\\x00-\\U0010FFFF] | \"a\"", true},
      loader_case{"code_point_beyond_unicode", "root ::= \"\\U00110000\" | \"a\"", true},
      // Left recursion as llama.cpp's loader finds it: through the references an
      // alternative begins with, past a reference only when its rule has an empty
      // alternative of its own (x? x* and x{0,n} make such rules; x+ and x{m,n} write their
      // copies in place).
      loader_case{"direct_left_recursion", "root ::= root \"a\" | \"b\"", false, 1, 1,
                  "left recursion: rule 'root'"},
      loader_case{"indirect_left_recursion", "root ::= x\nx ::= y \"a\" | \"b\"\ny ::= x \"c\"",
                  false, 2, 1, "(x -> y -> x)"},
      loader_case{"left_recursion_after_nullable", "root ::= x\nx ::= [a]? x \"b\" | \"c\"", false,
                  2, 1, "rule 'x'"},
      loader_case{"left_recursion_after_star", "root ::= x\nx ::= [a]* x \"b\" | \"c\"", false, 2,
                  1, "rule 'x'"},
      loader_case{"left_recursion_after_plus_of_empty",
                  "root ::= x\nx ::= e+ x \"b\" | \"c\"\ne ::= \"a\" | \"\"", false, 2, 1,
                  "rule 'x'"},
      loader_case{"left_recursion_after_copies_of_empty",
                  "root ::= x\nx ::= e{2,3} x \"b\" | \"c\"\ne ::= \"\" | \"a\"", false, 2, 1,
                  "rule 'x'"},
      loader_case{"left_recursion_after_empty_group",
                  "root ::= x\nx ::= (\"a\" | ) x \"b\" | \"c\"", false, 2, 1, "rule 'x'"},
      // Nullable only through other rules: the loader does not look past it (the sampler
      // may loop on some: gbnf_warnings).
      loader_case{"nullable_rule_without_empty_alternative",
                  "root ::= n root \"a\" | \"b\"\nn ::= m\nm ::= \"\"", true},
      loader_case{"group_of_optional", "root ::= x\nx ::= (\"a\"?) x \"b\" | \"c\"", true},
      loader_case{"star_of_nullable", "root ::= (\"a\"?)* \"b\"", true},
      loader_case{"plus_of_nullable_sequence",
                  "root ::= (call? ws)+\ncall ::= \"c\"\nws ::= [ \\t]*", true},
      loader_case{"repetition_of_empty_alternative", "root ::= e* \"b\"\ne ::= \"a\" | \"\"", false,
                  1, 1, "rule 'root'"},
      loader_case{"right_recursion_loads", "root ::= \"a\" root | \"\"", true},
      loader_case{"recursion_after_a_terminal", "root ::= x\nx ::= \"(\" x \")\" | \"z\"", true},
      loader_case{"unproductive_left_recursion", "root ::= \"a\" | x\nx ::= x \"b\"", false, 2, 1,
                  "rule 'x'"},
      // Syntax as llama.cpp reads it.
      loader_case{"escaped_dash", "root ::= [a\\-z]", false, 1, 12, "unknown escape"},
      loader_case{"token_ids", "root ::= <[12]> !<[3]>* \"a\"", true},
      loader_case{"token_text", "root ::= <think> \"a\"", false, 1, 10, "vocabulary"},
      loader_case{"defined_twice", "root ::= x\nx ::= \"a\"\nx ::= \"b\"", true},
      loader_case{"defined_twice_last_counts", "root ::= x\nx ::= \"a\"\nx ::= x \"b\"", false, 3,
                  1, "left recursion"},
      loader_case{"defined_twice_first_forgotten", "root ::= x\nx ::= (x \"a\")\nx ::= \"b\"",
                  true}};
}

INSTANTIATE_TEST_SUITE_P(table, gbnf_loader_rules, ::testing::ValuesIn(loader_cases()),
                         [](const auto& tc) { return std::string(tc.param.name); });

// Grammars llama.cpp loads whose sampler can expand a cycle of nullable prefixes without end
// (a reference on the cycle followed by more to read): a warning naming the rule and where;
// cycles whose references end their alternatives (the sampler's stack comes back the same)
// do not warn.
struct warning_case {
  const char* name;
  std::string text;
  bool warns;
  std::uint32_t line = 0;
  const char* rule = "";
};

std::vector<warning_case> warning_cases() {
  return {
      {"nullable_prefix_then_more", "root ::= n root \"a\" | \"b\"\nn ::= m\nm ::= \"\"", true, 1,
       "rule 'root'"},
      {"group_of_optional_then_more", "root ::= x\nx ::= (\"a\"?) x \"b\" | \"c\"", true, 2,
       "rule 'x'"},
      {"through_two_rules", "root ::= x\nx ::= n y | \"c\"\ny ::= n x \"d\"\nn ::= (\"a\"?)", true,
       3, "(y -> x -> y)"},
      {"tail_recursion", "root ::= x\nx ::= n x | \"c\"\nn ::= m\nm ::= \"\" | \"a\"", false},
      {"star_of_nullable", "root ::= (\"a\"?)* \"b\"", false},
      {"plus_of_nullable_sequence", "root ::= (call? ws)+\ncall ::= \"c\"\nws ::= [ \\t]*", false},
      {"right_recursion", "root ::= \"a\" root | \"\"", false},
      {"unreached_loop", "root ::= \"a\" x\nx ::= n x \"b\" | \"c\"\nn ::= (\"d\"?)", true, 2,
       "rule 'x'"},
  };
}

TEST(gbnf_loader_rules_warnings, sampler_loops_warn) {
  for (const auto& r : warning_cases()) {
    SCOPED_TRACE(r.name);
    auto g = parse_gbnf(r.text);
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    const auto& warnings = gbnf_warnings(**g);
    ASSERT_EQ(warnings.size(), r.warns ? 1u : 0u);
    if (!r.warns) continue;
    EXPECT_EQ(warnings[0].where.line, r.line);
    EXPECT_NE(warnings[0].message.find(r.rule), std::string::npos) << warnings[0].message;
    // Without the loader rules the reader does not look for them.
    auto plain = parse_gbnf(r.text, {.llama_loader = false});
    ASSERT_TRUE(plain.has_value());
    EXPECT_TRUE(gbnf_warnings(**plain).empty());
  }
}

// llama.cpp's own loader (CHATPEG_GBNF_ORACLE, tests/support/gbnf_oracle.h) agrees with the
// reader on every grammar above: it loads what the reader reads, refuses what the reader
// refuses; a grammar the reader warns about loads there, or never finishes loading when the
// loop is reached from the start (a load that must time out).
TEST(gbnf_loader_rules_oracle, llama_cpp_agrees) {
  testing::gbnf_oracle oracle;
  if (!oracle.present()) {
    oracle.report(std::cout);
    GTEST_SKIP() << "CHATPEG_GBNF_ORACLE is not set";
  }
  int agreed = 0, total = 0;
  for (const auto& c : loader_cases()) {
    SCOPED_TRACE(c.name);
    const auto v = oracle.judge(c.text);
    ++total;
    auto g = parse_gbnf(c.text);
    const bool loops = g.has_value() && !gbnf_warnings(**g).empty();
    const bool ok = c.loads ? v == testing::oracle_verdict::loads ||
                                  (loops && v == testing::oracle_verdict::timeout)
                            : v == testing::oracle_verdict::refuses;
    EXPECT_TRUE(ok) << c.text;
    agreed += ok ? 1 : 0;
  }
  for (const auto& c : warning_cases()) {
    SCOPED_TRACE(c.name);
    const auto v = oracle.judge(c.text);
    ++total;
    const bool ok =
        c.warns ? v != testing::oracle_verdict::refuses : v == testing::oracle_verdict::loads;
    EXPECT_TRUE(ok) << c.text;
    agreed += ok ? 1 : 0;
  }
  std::cout << "gbnf_oracle: llama.cpp agrees on " << agreed << "/" << total << " grammars\n";
}

// Repetition counts beyond the loader's own: the refusal comes before any expansion.
TEST(gbnf_loader_rules_limits, huge_counts_are_refused_cheaply) {
  auto g = parse_gbnf("root ::= (\"a\"{0,1000}){0,1000}");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code, base::errc::limit_exceeded);
  EXPECT_NE(g.error().message.find("1001 rules"), std::string::npos) << g.error().to_string();
}

// Left recursion over a long chain is found without deep recursion.
TEST(gbnf_loader_rules_limits, long_left_recursive_chain) {
  std::string text = "root ::= r0\n";
  for (int i = 0; i < 50000; ++i) {
    text += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " \"x\" | \"y\"\n";
  }
  text += "r50000 ::= r0 \"z\"\n";
  auto g = parse_gbnf(text);
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code, base::errc::unsupported);
  EXPECT_NE(g.error().message.find("left recursion"), std::string::npos);
}

}  // namespace
}  // namespace chatpeg::grammar

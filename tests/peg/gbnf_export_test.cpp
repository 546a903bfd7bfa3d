// Tests of peg::export_gbnf: the exact GBNF text for small grammars (escaping, precedence,
// repetition forms, rule naming, wrappers, dropped lookahead, until automata, raw gbnf
// nodes, lazy start) and determinism. Re-parsing the output and checking the languages it
// accepts is done with the GBNF recognizer in tests/grammar/gbnf_export_check_test.cpp.
#include "chatpeg/peg/gbnf_export.h"

#include <gtest/gtest.h>

#include <functional>
#include <ostream>

#include "chatpeg/peg/builder.h"

namespace chatpeg::peg {
namespace {

std::string export_of(const std::function<parser(builder&)>& make) {
  builder b;
  auto root = make(b);
  auto g = b.build(root);
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  if (!g) return "";
  auto text = export_gbnf(*g);
  EXPECT_TRUE(text.has_value()) << text.error().to_string();
  return text ? *text : "";
}

struct export_case {
  const char* name;
  std::function<parser(builder&)> make;
  std::string expected;
};
void PrintTo(const export_case& c, std::ostream* os) {
  *os << c.name;
}

class gbnf_export_table : public ::testing::TestWithParam<export_case> {};

TEST_P(gbnf_export_table, text) {
  EXPECT_EQ(export_of(GetParam().make), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    table, gbnf_export_table,
    ::testing::Values(
        export_case{"literal", [](builder& b) { return b.literal("hi"); }, "root ::= \"hi\"\n"},
        export_case{"escapes",
                    [](builder& b) { return b.literal("a\"b\\c\n\t\r\x01\x7F\xC3\xA9"); },
                    "root ::= \"a\\\"b\\\\c\\n\\t\\r\\x01\\x7F\xC3\xA9\"\n"},
        export_case{"sequence_choice",
                    [](builder& b) { return b.literal("a") + (b.literal("b") | b.literal("c")); },
                    "root ::= \"a\" ( \"b\" | \"c\" )\n"},
        export_case{"top_choice", [](builder& b) { return b.literal("a") | b.literal("b"); },
                    "root ::= \"a\" | \"b\"\n"},
        export_case{"choice_with_empty", [](builder& b) { return b.literal("a") | b.eps(); },
                    "root ::= \"a\" | \"\"\n"},
        export_case{"repetitions",
                    [](builder& b) {
                      return b.zero_or_more(b.literal("ab")) + b.one_or_more(b.literal("c")) +
                             b.repeat(b.literal("x"), 2, 3) + b.repeat(b.literal("w"), 2, 2) +
                             b.repeat(b.literal("v"), 3, unbounded) +
                             b.optional(b.literal("y") + b.literal("z"));
                    },
                    "root ::= \"ab\"* \"c\"+ \"x\"{2,3} \"w\"{2} \"v\"{3,} ( \"y\" \"z\" )?\n"},
        export_case{
            "nested_repetition",
            [](builder& b) { return b.one_or_more(b.optional(b.literal("a")) + b.literal("b")); },
            "root ::= ( \"a\"? \"b\" )+\n"},
        export_case{"char_classes",
                    [](builder& b) {
                      return b.chars("[a-zA-Z_]") + b.chars("[^\"\\\\]", 0, unbounded) +
                             b.chars("[0-9]", 2, 4) + b.chars("[-^\\]]") + b.chars("[ab]");
                    },
                    "root ::= [A-Z_a-z] [^\"\\\\]* run-1 [\\x2D\\]\\x5E] [ab]\n"
                    "run-1 ::= [0-9]{2,4}\n"},
        // llama.cpp's loader counts the rules a repeated group stands for (16 for each inline
        // {0,16}): a bounded count applies to a rule name, and a bounded run is one rule
        // however often it is used.
        export_case{"bounded_run_is_one_rule",
                    [](builder& b) {
                      auto ws = [&] { return b.chars("[ \\t]", 0, 16); };
                      return ws() + b.literal("a") + ws() + b.optional(ws() + b.literal("b"));
                    },
                    "root ::= run-1 \"a\" run-1 ( run-1 \"b\" )?\nrun-1 ::= [\\t ]{0,16}\n"},
        export_case{"bounded_group_is_a_rule",
                    [](builder& b) {
                      auto item = b.literal(",") + b.chars("[ ]", 0, 16) + b.literal("x");
                      return b.literal("[") + b.repeat(item, 0, 200) + b.literal("]");
                    },
                    "root ::= \"[\" rep-2{0,200} \"]\"\n"
                    "run-1 ::= [ ]{0,16}\n"
                    "rep-2 ::= \",\" run-1 \"x\"\n"},
        export_case{"bounded_element_stays_inline",
                    [](builder& b) {
                      return b.repeat(b.literal("ab"), 0, 5) + b.repeat(b.any(), 3, 3) +
                             b.repeat(b.rule("r", b.literal("x") | b.literal("y")), 1, 4);
                    },
                    "root ::= \"ab\"{0,5} .{3} r{1,4}\nr ::= \"x\" | \"y\"\n"},
        export_case{"counts_above_the_loader_limit_are_loosened",
                    [](builder& b) {
                      return b.repeat(b.literal("x"), 2500, 3000) +
                             b.repeat(b.literal("y"), 0, 2000) + b.repeat(b.literal("z"), 0, 1999);
                    },
                    "root ::= \"x\"{1999,} \"y\"* \"z\"{0,1999}\n"},
        export_case{"empty_class_matches_nothing",
                    [](builder& b) { return b.chars(std::vector<char_range>{}) | b.literal("a"); },
                    "root ::= [^\\x00-\\U0010FFFF] | \"a\"\n"},
        export_case{"leaves",
                    [](builder& b) {
                      return b.start() + b.any() + b.space() + b.eps() + b.literal("x") + b.end();
                    },
                    "root ::= . [ \\t\\n\\r]* \"x\"\n"},
        export_case{"empty", [](builder& b) { return b.start() + b.end(); }, "root ::= \"\"\n"},
        export_case{
            "lookahead_dropped",
            [](builder& b) { return b.negate(b.literal("<")) + b.any() + b.peek(b.literal("x")); },
            "root ::= .\n"},
        export_case{"wrappers_unwrap",
                    [](builder& b) {
                      return b.content(b.atomic(b.literal("a"))) +
                             b.tag(tag::tool_name, b.literal("b"));
                    },
                    "root ::= \"a\" \"b\"\n"},
        export_case{"rules_in_discovery_order",
                    [](builder& b) {
                      auto item = b.rule("list_item", b.literal("x") | b.ref("list"));
                      b.rule("list", b.literal("[") + b.zero_or_more(item) + b.literal("]"));
                      return b.ref("list") + b.rule("root", b.literal("!"));
                    },
                    "root ::= list root-2\n"
                    "list ::= \"[\" list-item* \"]\"\n"
                    "list-item ::= \"x\" | list\n"
                    "root-2 ::= \"!\"\n"},
        export_case{"rule_name_clash",
                    [](builder& b) {
                      return b.rule("a_b", b.literal("1")) + b.rule("a-b", b.literal("2")) +
                             b.rule("a.b", b.literal("3"));
                    },
                    "root ::= a-b a-b-2 a-b-3\na-b ::= \"1\"\na-b-2 ::= \"2\"\na-b-3 ::= \"3\"\n"},
        export_case{"until_single_chars",
                    [](builder& b) {
                      return b.until_one_of({"a", "\n"}) + b.literal("a");
                    },
                    "root ::= [^\\na]* \"a\"\n"},
        export_case{"rest", [](builder& b) { return b.literal("x") + b.rest(); },
                    "root ::= \"x\" .*\n"},
        export_case{"until_automaton", [](builder& b) { return b.until("ab") + b.literal("ab"); },
                    "root ::= until-1-0 \"ab\"\n"
                    "until-1-0 ::= [^a] until-1-0 | \"a\" until-1-1 | \"\"\n"
                    "until-1-1 ::= [^ab] until-1-0 | \"a\" until-1-1 | \"\"\n"},
        export_case{"until_shared",
                    [](builder& b) {
                      return b.until("<>") + b.literal("<>") + b.until("<>") + b.until("ab");
                    },
                    "root ::= until-1-0 \"<>\" until-1-0 until-2-0\n"
                    "until-1-0 ::= [^<] until-1-0 | \"<\" until-1-1 | \"\"\n"
                    "until-1-1 ::= [^<>] until-1-0 | \"<\" until-1-1 | \"\"\n"
                    "until-2-0 ::= [^a] until-2-0 | \"a\" until-2-1 | \"\"\n"
                    "until-2-1 ::= [^ab] until-2-0 | \"a\" until-2-1 | \"\"\n"},
        export_case{"gbnf_node",
                    [](builder& b) {
                      return b.literal("x") +
                             b.gbnf("[0-9]+ | \"n\"",
                                    b.chars("[0-9]", 1, unbounded) | b.literal("n"));
                    },
                    "root ::= \"x\" gbnf-1\ngbnf-1 ::= [0-9]+ | \"n\"\n"}),
    [](const auto& tc) { return std::string(tc.param.name); });

// The rule root is named after the until rule's generated names never clash with user rules.
TEST(gbnf_export, generated_names_avoid_user_rules) {
  const std::string text = export_of([](builder& b) {
    return b.rule("until-1-0", b.literal("u")) + b.until("ab") + b.rule("gbnf-2", b.literal("g"));
  });
  EXPECT_EQ(text.find("until-1-0 ::= [^a]"), std::string::npos) << text;
  EXPECT_NE(text.find("until-2-0 ::= [^a]"), std::string::npos) << text;
}

TEST(gbnf_export, deterministic_across_builds) {
  auto make = [](builder& b) {
    auto call = b.rule("tool_call", b.literal("<tool_call>")
                                        << b.json_value() << b.literal("</tool_call>"));
    return b.content(b.until("<tool_call>")) + b.optional(call) + b.end();
  };
  const std::string first = export_of(make);
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first, export_of(make));
  EXPECT_EQ(first.rfind("root ::= ", 0), 0u);
}

TEST(gbnf_export, lazy_from_exports_only_the_part_after_the_trigger) {
  builder b;
  auto call = b.rule("call", b.literal("<call>") + b.json_number() + b.literal("</call>"));
  auto root = b.content(b.until("<call>")) + b.optional(call);
  auto g = b.build(root);
  ASSERT_TRUE(g.has_value());
  auto text = export_gbnf(*g, {.lazy_from = *g->find_rule("call")});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->rfind("root ::= call\ncall ::= \"<call>\" json-number \"</call>\"\n", 0), 0u)
      << *text;
  EXPECT_EQ(text->find("until"), std::string::npos) << *text;
}

TEST(gbnf_export, errors) {
  builder b;
  auto g = b.build(b.literal("\xFF"));
  ASSERT_TRUE(g.has_value());
  auto text = export_gbnf(*g);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, base::errc::unsupported);
  EXPECT_FALSE(export_gbnf(*g, {.lazy_from = 12345}).has_value());
}

}  // namespace
}  // namespace chatpeg::peg

// Tests for peg::builder: operator flattening, leaves, char class syntax, rules and refs,
// add() for deserializers, JSON rules and the tables build() precomputes.
#include "chatpeg/peg/builder.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace chatpeg::peg {
namespace {

template <class T>
const T& node_as(const grammar& g, node_id id) {
  const T* p = std::get_if<T>(&g.at(id));
  EXPECT_NE(p, nullptr) << "node #" << id << " is " << node_kind_name(g.at(id));
  static const T empty{};
  return p ? *p : empty;
}

TEST(Builder, SequenceFlattens) {
  builder b;
  auto x = b.literal("a") + b.literal("b") + b.literal("c");
  auto g = b.build(x);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  EXPECT_EQ(node_as<nodes::sequence>(*g, g->root()).children.size(), 3u);
}

TEST(Builder, ChoiceFlattens) {
  builder b;
  auto x = b.literal("a") | b.literal("b") | b.literal("c");
  auto g = b.build(x);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(node_as<nodes::choice>(*g, g->root()).children.size(), 3u);
}

TEST(Builder, ShiftInsertsSpace) {
  builder b;
  auto x = b.literal("a") << b.literal("b");
  auto g = b.build(x);
  ASSERT_TRUE(g.has_value());
  const auto& s = node_as<nodes::sequence>(*g, g->root());
  ASSERT_EQ(s.children.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<nodes::space>(g->at(s.children[1])));
}

TEST(Builder, CompoundAssignment) {
  builder b;
  auto x = b.literal("a");
  x += b.literal("b");
  auto y = b.literal("c");
  y |= b.literal("d");
  auto g = b.build(x + y);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(node_as<nodes::sequence>(*g, g->root()).children.size(), 3u);
}

TEST(Builder, EmptyLiteralIsEpsilon) {
  builder b;
  auto g = b.build(b.literal(""));
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(std::holds_alternative<nodes::epsilon>(g->at(g->root())));
}

struct class_case {
  const char* text;
  bool negated;
  std::vector<std::pair<char32_t, char32_t>> ranges;  // after sort + merge
};

TEST(Builder, CharClassSyntax) {
  const std::vector<class_case> cases = {
      {"[a-z]", false, {{'a', 'z'}}},
      {"[z-za-y]", false, {{'a', 'z'}}},
      {"[^\"\\\\\\x00-\\x1f]", true, {{0, 0x1f}, {'"', '"'}, {'\\', '\\'}}},
      {"[\\n\\t\\r]", false, {{'\t', '\n'}, {'\r', '\r'}}},
      {"[\\]\\[\\-]", false, {{'-', '-'}, {'[', '['}, {']', ']'}}},
      {"[\\]\\[\\\\]", false, {{'[', ']'}}},
      {"[a-]", false, {{'-', '-'}, {'a', 'a'}}},
      {"[\\u00e9-\\u00ff]", false, {{0xE9, 0xFF}}},
      {"[\\U0001F600]", false, {{0x1F600, 0x1F600}}},
      {"[é]", false, {{0xE9, 0xE9}}},
      {"[^]", true, {}},
  };
  for (const auto& c : cases) {
    builder b;
    auto g = b.build(b.chars(c.text));
    ASSERT_TRUE(g.has_value()) << c.text << ": " << g.error().to_string();
    const auto& cc = node_as<nodes::char_class>(*g, g->root());
    EXPECT_EQ(cc.negated, c.negated) << c.text;
    EXPECT_EQ(cc.ranges, c.ranges) << c.text;
  }
}

TEST(Builder, CharClassAsciiTable) {
  builder b;
  auto g = b.build(b.chars("[^a-c]"));
  ASSERT_TRUE(g.has_value());
  const auto& cc = node_as<nodes::char_class>(*g, g->root());
  EXPECT_FALSE(cc.ascii.test('a'));
  EXPECT_FALSE(cc.ascii.test('c'));
  EXPECT_TRUE(cc.ascii.test('d'));
  EXPECT_TRUE(cc.ascii.test(0));
}

TEST(Builder, MalformedCharClassFailsAtBuild) {
  for (const char* text : {"a-z", "[a-z", "[z-a]", "[\\q]", "[\\x4]", "[\\xZZ]", "[a]]", "[\\"}) {
    builder b;
    auto p = b.chars(text);
    auto g = b.build(p);
    ASSERT_FALSE(g.has_value()) << text;
    EXPECT_EQ(g.error().code, base::errc::syntax_error);
  }
}

TEST(Builder, UntilFirstBytes) {
  builder b;
  auto g = b.build(b.until_one_of({"<a>", "[b]", "<c>"}));
  ASSERT_TRUE(g.has_value());
  const auto& u = node_as<nodes::until>(*g, g->root());
  EXPECT_TRUE(u.first_bytes.test('<'));
  EXPECT_TRUE(u.first_bytes.test('['));
  EXPECT_EQ(u.first_bytes.count(), 2u);
}

// until_start_of(p): one delimiter per byte p's match can start with, through optional
// parts, alternatives and refs resolved at build(); a lookahead adds none.
TEST(Builder, UntilStartOfStopsWhereTheNodeCouldStart) {
  struct row {
    const char* name;
    std::function<parser(builder&)> target;
    std::string bytes;  // the first bytes, in byte order
  };
  const std::vector<row> rows = {
      {"literal", [](builder& b) { return b.literal("{\"a\""); }, "{"},
      {"alternatives",
       [](builder& b) {
         return b.choice({b.literal("[x"), b.literal("{y"), b.literal("<z")});
       },
       "<[{"},
      {"optional whitespace first",
       [](builder& b) { return b.optional(b.chars("[ \n]")) + b.literal("{"); }, "\n {"},
      {"through a ref defined later", [](builder& b) { return b.ref("call"); }, "("},
      {"a lookahead consumes nothing",
       [](builder& b) { return b.negate(b.literal("x")) + b.literal("y"); }, "y"},
      {"non-ASCII start", [](builder& b) { return b.literal("\xE2\x9C\x85"); }, "\xE2"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    builder b;
    auto root = b.until_start_of(r.target(b));
    b.rule("call", b.literal("(") + b.literal(")"));
    auto g = b.build(root);
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    const auto& u = node_as<nodes::until>(*g, g->root());
    std::string got;
    for (std::size_t c = 0; c < 256; ++c) {
      if (u.first_bytes.test(c)) got += static_cast<char>(c);
    }
    EXPECT_EQ(got, r.bytes);
    EXPECT_EQ(u.delimiters.size(), r.bytes.size());
    EXPECT_EQ(u.start_of, no_node);
  }
}

TEST(Builder, UntilStartOfAParserOfAnotherBuilderIsAnError) {
  builder other;
  auto foreign = other.literal("{");
  builder b;
  auto g = b.build(b.until_start_of(foreign));
  ASSERT_FALSE(g.has_value());
  EXPECT_NE(g.error().message.find("until_start_of"), std::string::npos) << g.error().message;
}

TEST(Builder, RestIsUntilWithoutDelimiters) {
  builder b;
  auto g = b.build(b.rest());
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(node_as<nodes::until>(*g, g->root()).delimiters.empty());
}

TEST(Builder, RefResolvesForwardAndBackward) {
  builder b;
  auto later = b.ref("later");
  b.rule("earlier", b.literal("x"));
  auto root = later + b.ref("earlier");
  b.rule("later", b.literal("y"));
  auto g = b.build(root);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  const auto& s = node_as<nodes::sequence>(*g, g->root());
  EXPECT_EQ(node_as<nodes::ref>(*g, s.children[0]).target, *g->find_rule("later"));
  EXPECT_EQ(node_as<nodes::ref>(*g, s.children[1]).target, *g->find_rule("earlier"));
  EXPECT_EQ(g->rules().size(), 2u);
  EXPECT_FALSE(g->find_rule("missing").has_value());
}

TEST(Builder, UnresolvedRefNamesIt) {
  builder b;
  auto g = b.build(b.literal("a") + b.ref("nowhere"));
  ASSERT_FALSE(g.has_value());
  EXPECT_NE(g.error().message.find("nowhere"), std::string::npos) << g.error().message;
}

TEST(Builder, DuplicateRuleIsError) {
  builder b;
  auto a = b.rule("r", b.literal("a"));
  auto c = b.rule("r", b.literal("c"));
  auto g = b.build(a | c);
  ASSERT_FALSE(g.has_value());
  EXPECT_NE(g.error().message.find("'r'"), std::string::npos) << g.error().message;
}

TEST(Builder, UserTagsAreInterned) {
  builder b;
  const auto t1 = b.user_tag("my-tag");
  const auto t2 = b.user_tag("other");
  EXPECT_EQ(b.user_tag("my-tag"), t1);
  EXPECT_EQ(b.user_tag("content"), tag::content);
  EXPECT_EQ(static_cast<int>(t1), static_cast<int>(tag::first_user));
  auto g = b.build(b.tag(t1, b.literal("a")) + b.tag(t2, b.literal("b")));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->tag_name(t1), "my-tag");
  EXPECT_EQ(g->tag_name(t2), "other");
  EXPECT_EQ(g->tag_name(tag::tool_arg_name), "tool-arg-name");
  EXPECT_EQ(g->find_tag("other"), t2);
  EXPECT_EQ(g->find_tag("tool-args"), tag::tool_args);
  EXPECT_FALSE(g->find_tag("nope").has_value());
}

TEST(Builder, AddReproducesIdsAndRegistersRules) {
  // What a deserializer does: add nodes in id order, then build.
  builder b;
  EXPECT_EQ(b.add(nodes::literal{"x"}).id, 0u);
  EXPECT_EQ(b.add(nodes::rule{"r", 0}).id, 1u);
  EXPECT_EQ(b.add(nodes::ref{"r", no_node}).id, 2u);
  auto root = b.add(nodes::sequence{{2, 0}});
  auto g = b.build(root);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  EXPECT_EQ(g->find_rule("r"), 1u);
  EXPECT_EQ(node_as<nodes::ref>(*g, 2).target, 1u);
}

TEST(Builder, AddWithDanglingChildIsError) {
  builder b;
  auto root = b.add(nodes::sequence{{5, 7}});
  auto g = b.build(root);
  ASSERT_FALSE(g.has_value());
}

TEST(Builder, JsonRulesDefinedOnce) {
  builder b;
  auto v1 = b.json_value();
  auto v2 = b.json_value();
  EXPECT_EQ(v1.id, v2.id);
  auto s = b.json_string();
  auto g = b.build(v1 + s);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  for (const char* name :
       {"json-value", "json-object", "json-array", "json-string", "json-string-content",
        "json-number", "json-integer", "json-true", "json-false", "json-null", "json-bool"}) {
    EXPECT_TRUE(g->find_rule(name).has_value()) << name;
  }
}

TEST(Builder, JsonStringContentUsesOneUnboundedRun) {
  builder b;
  auto g = b.build(b.json_string_content());
  ASSERT_TRUE(g.has_value());
  bool found = false;
  for (const auto& n : g->nodes()) {
    if (const auto* c = std::get_if<nodes::char_class>(&n)) {
      if (c->negated && c->min == 1 && c->max == unbounded) found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(Builder, RepeatMinAboveMaxIsError) {
  builder b;
  auto g = b.build(b.repeat(b.literal("a"), 3, 2));
  EXPECT_FALSE(g.has_value());
}

TEST(Builder, InvalidHandleIsError) {
  builder b;
  auto g = b.build(b.literal("a") + parser{});
  EXPECT_FALSE(g.has_value());
}

TEST(Builder, ValidationRunsByDefaultAndCanBeSkipped) {
  {
    builder b;
    auto g = b.build(b.zero_or_more(b.until("x")));
    EXPECT_FALSE(g.has_value());
  }
  {
    builder b;
    auto g = b.build(b.zero_or_more(b.until("x")), {.validate = false});
    EXPECT_TRUE(g.has_value());
  }
}

TEST(Builder, DumpListsNodes) {
  builder b;
  auto hi = b.literal("hi");
  auto word = b.chars("[a-z]", 1, unbounded);
  auto g = b.build(b.rule("greeting", hi + word));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->dump(),
            "root 3\n"
            "#0 literal \"hi\"\n"
            "#1 char_class [a-z]{1,}\n"
            "#2 sequence [0, 1]\n"
            "#3 rule greeting 2\n");
}

}  // namespace
}  // namespace chatpeg::peg

namespace chatpeg::peg {
namespace {

TEST(Builder, ChoiceFirstByteTables) {
  builder b;
  auto a = b.literal("ab");
  auto cls = b.chars("[0-9]", 1, unbounded);
  auto nullable = b.optional(b.literal("z"));
  auto via_ref = b.ref("r");
  b.rule("r", b.space() + b.literal("q"));
  auto g = b.build(b.choice({a, cls, nullable, via_ref}));
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  const auto& ch = node_as<nodes::choice>(*g, g->root());
  ASSERT_EQ(ch.first.size(), 4u);
  EXPECT_EQ(ch.first[0].count(), 1u);
  EXPECT_TRUE(ch.first[0].test('a'));
  EXPECT_EQ(ch.first[1].count(), 10u);
  EXPECT_TRUE(ch.first[1].test('5'));
  EXPECT_TRUE(ch.first[2].all());  // can match empty: never skipped
  EXPECT_TRUE(ch.first[3].test('q'));
  EXPECT_TRUE(ch.first[3].test(' '));
  EXPECT_TRUE(ch.first[3].test('\n'));
  EXPECT_FALSE(ch.first[3].test('x'));
}

TEST(Builder, ChoiceFirstByteTablesNonAscii) {
  builder b;
  auto g = b.build(b.chars("[\\u00e9]") | b.chars("[^a]") | b.literal("x"));
  ASSERT_TRUE(g.has_value());
  const auto& ch = node_as<nodes::choice>(*g, g->root());
  EXPECT_TRUE(ch.first[0].test(0xC3));
  EXPECT_FALSE(ch.first[0].test('e'));
  EXPECT_TRUE(ch.first[1].test(0xFF));
  EXPECT_FALSE(ch.first[1].test('a'));
}

}  // namespace
}  // namespace chatpeg::peg

// peg::ast: text() is valid UTF-8 (invalid bytes → U+FFFD; an unfinished trailing sequence of
// a partial node is held back), raw() gives the bytes, dump() is stable. Includes a 4-byte
// code point cut at every position for any / char_class / until.
#include <gtest/gtest.h>

#include <functional>

#include "chatpeg/base/utf8.h"
#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {
namespace {

const std::string grin = "\xF0\x9F\x98\x80";  // U+1F600

struct cut_kind {
  const char* name;
  std::function<parser(builder&)> make;  // the tagged part, after a literal "a"
};

std::vector<cut_kind> kinds() {
  return {
      {"any", [](builder& b) { return b.content(b.any()); }},
      {"char_class", [](builder& b) { return b.content(b.chars("[^<]", 1, unbounded)); }},
      {"until", [](builder& b) { return b.content(b.until("<")); }},
  };
}

TEST(Ast, FourByteSequenceCutAtEveryPosition) {
  for (const auto& k : kinds()) {
    builder b;
    auto g = b.build(b.literal("a") + k.make(b));
    ASSERT_TRUE(g.has_value());
    for (std::size_t cut = 1; cut < 4; ++cut) {
      SCOPED_TRACE(std::string(k.name) + " cut " + std::to_string(cut));
      const std::string input = "a" + grin.substr(0, cut);
      // Lenient: the code point may still complete. The node is partial and its text holds
      // the unfinished bytes back.
      const auto r = match(*g, input, match_flags::lenient);
      ASSERT_EQ(r.status, match_status::need_more_input);
      EXPECT_EQ(r.end, input.size());
      ASSERT_EQ(r.ast.nodes().size(), 1u);
      const auto& n = r.ast.nodes()[0];
      EXPECT_TRUE(n.partial);
      EXPECT_EQ(r.ast.text(n, input), "");
      EXPECT_EQ(r.ast.raw(n, input), grin.substr(0, cut));
      // Strict: the cut sequence is one invalid unit.
      const auto s = match(*g, input);
      ASSERT_EQ(s.status, match_status::success) << s.error.to_string();
      EXPECT_EQ(s.end, input.size());
      ASSERT_EQ(s.ast.nodes().size(), 1u);
      EXPECT_FALSE(s.ast.nodes()[0].partial);
      EXPECT_EQ(s.ast.text(s.ast.nodes()[0], input), "\xEF\xBF\xBD");
    }
    // Whole code point.
    const std::string input = "a" + grin;
    const auto s = match(*g, input);
    ASSERT_EQ(s.status, match_status::success);
    EXPECT_EQ(s.ast.text(s.ast.nodes()[0], input), grin);
    const auto l = match(*g, input + "<", match_flags::lenient);
    if (l.status == match_status::success) {
      EXPECT_EQ(l.ast.text(l.ast.nodes()[0], input + "<"), grin);
    }
  }
}

TEST(Ast, PartialTextHoldsBackOnlyTheTail) {
  builder b;
  auto g = b.build(b.content(b.until("</c>")));
  ASSERT_TRUE(g.has_value());
  const std::string input = "h\xC3\xA9llo " + grin.substr(0, 2);
  const auto r = match(*g, input, match_flags::lenient);
  ASSERT_EQ(r.status, match_status::need_more_input);
  EXPECT_EQ(r.ast.text(r.ast.nodes()[0], input), "h\xC3\xA9llo ");
  EXPECT_TRUE(base::is_valid_utf8(r.ast.text(r.ast.nodes()[0], input)));
}

TEST(Ast, InvalidBytesBecomeReplacementCharacter) {
  builder b;
  auto g = b.build(b.content(b.rest()));
  ASSERT_TRUE(g.has_value());
  const std::string input =
      "a\xFF"
      "b\xC0\xAF"
      "c\xED\xA0\x80";
  for (const auto flags : {match_flags::none, match_flags::lenient}) {
    const auto r = match(*g, input, flags);
    ASSERT_NE(r.status, match_status::fail);
    const std::string text = r.ast.text(r.ast.nodes()[0], input);
    EXPECT_TRUE(base::is_valid_utf8(text));
    EXPECT_EQ(text, base::sanitize_utf8(input));
    EXPECT_NE(text.find("\xEF\xBF\xBD"), std::string::npos);
  }
}

TEST(Ast, NonPartialNodeEndingMidSequenceIsReplaced) {
  // A complete node that ends inside a multi-byte sequence (the grammar cut it there) does not
  // hold anything back: the fragment becomes U+FFFD.
  builder b;
  auto g = b.build(b.content(b.literal("x\xC3")) + b.rest());
  ASSERT_TRUE(g.has_value());
  const std::string input = "x\xC3\xA9";
  const auto r = match(*g, input);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.ast.text(r.ast.nodes()[0], input), "x\xEF\xBF\xBD");
}

TEST(Ast, RawClampsToInput) {
  ast a;
  ast_node n;
  n.start = 2;
  n.end = 10;
  EXPECT_EQ(a.raw(n, "abcd"), "cd");
  n.start = 7;
  EXPECT_EQ(a.raw(n, "abcd"), "");
}

TEST(Ast, DumpIsIndentedAndEscaped) {
  builder b;
  auto g = b.build(b.rule("msg", b.reasoning(b.literal("a\nb")) +
                                     b.tag(tag::tool, b.tag(tag::tool_name, b.literal("f")))));
  ASSERT_TRUE(g.has_value());
  const std::string input = "a\nbf";
  const auto r = match(*g, input);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.ast.dump(*g, input),
            "msg [0,4) \"a\\nbf\"\n"
            "  reasoning [0,3) \"a\\nb\"\n"
            "  tool [3,4) \"f\"\n"
            "    tool-name [3,4) \"f\"\n");
}

TEST(Ast, StatusNames) {
  EXPECT_EQ(match_status_name(match_status::success), "success");
  EXPECT_EQ(match_status_name(match_status::fail), "fail");
  EXPECT_EQ(match_status_name(match_status::need_more_input), "need_more_input");
}

}  // namespace
}  // namespace chatpeg::peg

// Checks peg::export_gbnf output with the GBNF reader and recognizer: exported text parses,
// and until() automata are exact — checked by brute force over every string up to length 7
// on a small alphabet against a direct "contains a delimiter" test (multi-delimiter and
// overlapping cases such as delimiter "aab" on input "aaab" included).
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "chatpeg/grammar/gbnf.h"
#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/gbnf_export.h"

namespace chatpeg::grammar {
namespace {

std::shared_ptr<const gbnf_grammar> exported(const std::function<peg::parser(peg::builder&)>& f,
                                             std::string* text_out = nullptr) {
  peg::builder b;
  auto root = f(b);
  auto g = b.build(root);
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  if (!g) return nullptr;
  auto text = peg::export_gbnf(*g);
  EXPECT_TRUE(text.has_value()) << text.error().to_string();
  if (!text) return nullptr;
  if (text_out) *text_out = *text;
  auto gbnf = parse_gbnf(*text);
  EXPECT_TRUE(gbnf.has_value()) << gbnf.error().to_string() << "\n" << *text;
  return gbnf ? *gbnf : nullptr;
}

// Every concatenation of up to max_len tokens (tokens are whole code points here).
void for_each_string(const std::vector<std::string>& alphabet, std::size_t max_len,
                     const std::function<void(const std::string&)>& f) {
  std::vector<std::string> level{""};
  f("");
  for (std::size_t len = 1; len <= max_len; ++len) {
    std::vector<std::string> next;
    next.reserve(level.size() * alphabet.size());
    for (const auto& s : level) {
      for (const auto& c : alphabet) {
        next.push_back(s + c);
        f(next.back());
      }
    }
    level = std::move(next);
  }
}

struct until_case {
  const char* name;
  std::vector<std::string> delimiters;
  std::vector<std::string> alphabet;
};
void PrintTo(const until_case& c, std::ostream* os) {
  *os << c.name;
}

class gbnf_export_until_exact : public ::testing::TestWithParam<until_case> {};

TEST_P(gbnf_export_until_exact, matches_direct_check) {
  const auto& c = GetParam();
  std::string text;
  auto g = exported([&](peg::builder& b) { return b.until_one_of(c.delimiters); }, &text);
  ASSERT_TRUE(g);
  std::size_t accepted = 0;
  for_each_string(c.alphabet, 7, [&](const std::string& s) {
    bool contains = false;
    for (const auto& d : c.delimiters) contains = contains || s.find(d) != std::string::npos;
    auto r = recognize(*g, s);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->accepted, !contains) << "input '" << s << "'\n" << text;
    accepted += r->accepted ? 1 : 0;
    // Prefix mode: every string is a prefix of an accepted one iff it is accepted itself
    // (the language is closed under prefixes).
    auto p = recognize(*g, s, {.allow_prefix = true});
    EXPECT_EQ(p->accepted, !contains) << "prefix '" << s << "'";
  });
  EXPECT_GT(accepted, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    table, gbnf_export_until_exact,
    ::testing::Values(until_case{"single_char", {"a"}, {"a", "b", "c"}},
                      until_case{"two_chars", {"ab"}, {"a", "b", "c"}},
                      until_case{"overlap_aab", {"aab"}, {"a", "b"}},
                      until_case{"self_overlap_abab", {"abab"}, {"a", "b", "c"}},
                      until_case{"repeat_aaa", {"aaa"}, {"a", "b"}},
                      until_case{"two_delims", {"ab", "ba"}, {"a", "b", "c"}},
                      until_case{"prefix_delims", {"ab", "abc"}, {"a", "b", "c"}},
                      until_case{"suffix_delims", {"bc", "abc"}, {"a", "b", "c"}},
                      until_case{"three_delims", {"aab", "bab", "c"}, {"a", "b", "c"}},
                      until_case{"mixed_lengths", {"b", "aca", "aab"}, {"a", "b", "c"}},
                      until_case{"tag_like", {"</t>"}, {"<", "t", "/", ">"}},
                      until_case{"utf8",
                                 {"\xC3\xA9\xC3\xA9",
                                  "\xE4\xB8\xAD"
                                  "a"},
                                 {"\xC3\xA9", "a", "\xE4\xB8\xAD"}}),
    [](const auto& tc) { return std::string(tc.param.name); });

TEST(gbnf_export_check, aab_on_aaab_is_exact) {
  // PEG until("aab") + "aab" accepts "aaab" (until stops before the occurrence at 1).
  auto g = exported([](peg::builder& b) { return b.until("aab") + b.literal("aab"); });
  ASSERT_TRUE(g);
  EXPECT_TRUE(recognize(*g, "aaab")->accepted);
  EXPECT_TRUE(recognize(*g, "xyaab")->accepted);
  EXPECT_FALSE(recognize(*g, "aabaab")->accepted);
}

TEST(gbnf_export_check, exported_json_parses_and_recognizes) {
  std::string text;
  auto g = exported(
      [](peg::builder& b) {
        auto call = b.rule("tool_call", b.literal("<tool_call>")
                                            << b.json_value() << b.literal("</tool_call>"));
        return b.content(b.until("<tool_call>")) + b.zero_or_more(call + b.space()) + b.end();
      },
      &text);
  ASSERT_TRUE(g);
  EXPECT_TRUE(
      recognize(*g, "hello <tool_call> {\"a\": [1, 2.5, \"\\u00e9\"]} </tool_call>")->accepted)
      << text;
  auto r = recognize(*g, "hi <tool_call>{\"a\" 1}</tool_call>");
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->accepted);
  EXPECT_EQ(r->fail_offset, 19u);
}

}  // namespace
}  // namespace chatpeg::grammar

// peg::matcher::match_growing over JSON-string loop plans: in growing mode the plan scan records
// the last boundary between whole iterations (plain bytes, complete escapes) and the next call
// resumes there. Every call must equal a fresh match() with the plan (and the node-by-node
// match with loop_plans off): long strings with simple, \u and invalid escapes, UTF-8 (valid,
// invalid, cut anywhere), escapes and hex digits cut by the end of input, strings that close
// and go on; every prefix and fixed chunk sizes 1..7, all flag combinations.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {
namespace {

using enum match_flags;
constexpr match_flags all_flags[] = {none, lenient, complete, lenient | complete};

std::string describe(const grammar& g, std::string_view input, const match_result& r) {
  return std::string(match_status_name(r.status)) + " [" + std::to_string(r.start) + "," +
         std::to_string(r.end) + ") " + r.error.to_string() + "\n" + r.ast.dump(g, input);
}

// Root shapes around a schema-like string value: the string last (need_more_input while it
// streams), inside an object that goes on, and two strings in a row.
std::vector<grammar> plan_grammars() {
  std::vector<grammar> out;
  for (int k = 0; k < 3; ++k) {
    builder b;
    parser root = k == 0   ? b.literal("{\"c\": ") + b.tag(tag::tool_args, b.json_string())
                  : k == 1 ? b.literal("<a>") + b.tag(tag::tool_args, b.json_value()) +
                                 b.literal("</a>") + b.end()
                           : b.tag(tag::tool_name, b.json_string()) + b.space() +
                                 b.tag(tag::tool_args, b.json_string()) + b.rest();
    auto g = b.build(root);
    EXPECT_TRUE(g.has_value()) << g.error().to_string();
    EXPECT_FALSE(g->loop_plans().empty());
    out.push_back(std::move(*g));
  }
  return out;
}

std::string long_body() {
  std::string s;
  for (int i = 0; i < 2; ++i) {
    s += "line " + std::to_string(i) + " caf\xC3\xA9 \\\"q\\\" \\u00e9\\uD83D\\uDE00 \xE2\x82\xAC";
    s += "\xF0\x9F\x98\x80 tab\\t slash\\/ back\\\\ \\n";
  }
  return s;
}

// (grammar index in plan_grammars(), text)
std::vector<std::pair<std::size_t, std::string>> plan_texts() {
  const std::string body = long_body();
  return {
      {0, "{\"c\": \"" + body},
      {0, "{\"c\": \"" + body + "\""},
      {0, "{\"c\": \"" + body + "\\x bad escape"},
      {0, "{\"c\": \"" + body + "\\u12G4 bad hex"},
      {0, "{\"c\": \"" + body + "\\u12\xC3\xA9 hex then UTF-8"},
      {0, "{\"c\": \"" + body + "\xC3 invalid \xFF\xFE UTF-8 \xE2\x82"},
      {0, "{\"c\": \"" + body + "raw\ncontrol"},
      {1, "<a>{\"x\": \"" + body + "\", \"y\": [\"" + body + "\", 1]}</a>"},
      {2, "\"" + body + "\" \"" + body + "\\u0041\" tail"},
  };
}

// Every call of a growing matcher at `cuts` equals a fresh match (plans on and off).
void check(const grammar& g, const std::string& text, const std::vector<std::size_t>& cuts,
           match_flags flags, const matcher_options& o, const std::string& where) {
  matcher grow(g, o);
  matcher fresh(g, o);
  matcher_options off = o;
  off.loop_plans = false;
  matcher nodes(g, off);
  for (const std::size_t k : cuts) {
    const std::string_view prefix(text.data(), k);
    const std::string a = describe(g, prefix, grow.match_growing(prefix, flags));
    const std::string e = describe(g, prefix, fresh.match(prefix, flags));
    ASSERT_EQ(a, e) << where << " prefix " << k << " of \"" << text << "\"";
    const std::string n = describe(g, prefix, nodes.match(prefix, flags));
    ASSERT_EQ(a, n) << where << " (node by node) prefix " << k;
  }
}

TEST(MatcherGrowingPlan, EveryPrefixAndChunkSizeMatchesAFreshMatch) {
  const auto grammars = plan_grammars();
  const auto texts = plan_texts();
  const std::vector<matcher_options> options = {
      {.growing_cache_span = 1}, {}, {.memoize = false, .growing_cache_span = 5}};
  for (const auto& [gi, text] : texts) {
    for (const auto flags : all_flags) {
      for (std::size_t oi = 0; oi < options.size(); ++oi) {
        for (std::size_t chunk = 1; chunk <= 7; ++chunk) {
          std::vector<std::size_t> cuts;
          for (std::size_t k = 0; k < text.size(); k += chunk) cuts.push_back(k);
          cuts.push_back(text.size());
          check(grammars[gi], text, cuts, flags, options[oi],
                "grammar " + std::to_string(gi) + " flags " +
                    std::to_string(static_cast<int>(flags)) + " options " + std::to_string(oi) +
                    " chunk " + std::to_string(chunk));
        }
      }
    }
  }
}

// Escapes and UTF-8 sequences cut by the end of input at every position, then completed by
// the next call (a cached boundary must never sit inside them).
TEST(MatcherGrowingPlan, EscapesAndUtf8CutAtEveryPositionResume) {
  const auto grammars = plan_grammars();
  const std::string lead = "{\"c\": \"" + std::string(40, 'x');
  const std::vector<std::string> tails = {"\\n",
                                          "\\u00e9",
                                          "\\uD83D\\uDE00",
                                          "\xC3\xA9",
                                          "\xF0\x9F\x98\x80",
                                          "\\u12\xE2\x82\xAC",
                                          "\\\\\\\"\\/",
                                          "\\q",
                                          "\xE2\x82"};
  for (const auto& t : tails) {
    const std::string text = lead + t + t + "y\"";
    for (std::size_t cut = lead.size(); cut <= text.size(); ++cut) {
      for (const auto flags : {none, lenient, lenient | complete}) {
        check(grammars[0], text, {lead.size() - 3, cut, text.size()}, flags,
              {.growing_cache_span = 1}, "tail cut at " + std::to_string(cut));
      }
    }
  }
}

}  // namespace
}  // namespace chatpeg::peg

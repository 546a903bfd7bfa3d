// peg::matcher::match_growing: matching a growing input gives exactly what a fresh match()
// of the same input gives (status, span, error, AST), whatever the feeding pattern, flags and
// cache thresholds. Property tests over the shared hand-written and random grammars, a JSON
// tool-call grammar with long strings, plus table tests for the places where resuming is
// delicate: delimiters and UTF-8 sequences cut across feeds, lookahead at the end of input,
// flags changing mid-stream and inputs that do not extend the previous one.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"
#include "peg/test_grammars.h"

namespace chatpeg::peg {
namespace {

constexpr auto N = match_flags::none;
constexpr auto L = match_flags::lenient;
constexpr auto C = match_flags::complete;
constexpr auto LC = match_flags::lenient | match_flags::complete;

// Compares a growing result with a fresh one; returns a description of the first difference.
std::string difference(const grammar& g, std::string_view input, const match_result& a,
                       const match_result& e) {
  if (a.status != e.status) {
    return "status " + std::string(match_status_name(a.status)) + " vs " +
           std::string(match_status_name(e.status)) + " (" + e.error.to_string() + ")";
  }
  if (a.start != e.start || a.end != e.end) {
    return "span [" + std::to_string(a.start) + "," + std::to_string(a.end) + ") vs [" +
           std::to_string(e.start) + "," + std::to_string(e.end) + ")";
  }
  if (a.error.code != e.error.code || a.error.where.offset != e.error.where.offset ||
      a.error.message != e.error.message || a.error.expected != e.error.expected) {
    return "error " + a.error.to_string() + " vs " + e.error.to_string();
  }
  const std::string da = a.ast.dump(g, input), de = e.ast.dump(g, input);
  if (da != de) return "AST\n" + da + "vs\n" + de;
  const auto& na = a.ast.nodes();
  const auto& ne = e.ast.nodes();
  for (std::size_t i = 0; i < na.size(); ++i) {
    if (na[i].origin != ne[i].origin || na[i].parent != ne[i].parent ||
        na[i].first_child != ne[i].first_child || na[i].next_sibling != ne[i].next_sibling) {
      return "AST links differ at node " + std::to_string(i);
    }
  }
  return {};
}

// Feeds `text` through match_growing at the given cut points (ascending, last = size) and
// compares every call with a fresh match of the same prefix.
void check_feeds(const grammar& g, const std::string& text, const std::vector<std::size_t>& cuts,
                 match_flags flags, matcher_options options, const std::string& where) {
  matcher grow(g, options);
  matcher fresh(g, options);
  for (const std::size_t k : cuts) {
    const std::string_view prefix(text.data(), k);
    const auto a = grow.match_growing(prefix, flags);
    const auto e = fresh.match(prefix, flags);
    const std::string diff = difference(g, prefix, a, e);
    ASSERT_TRUE(diff.empty()) << where << "\nprefix " << k << " of \"" << text << "\": " << diff
                              << "\n"
                              << g.dump();
  }
  // The stream ends: the same input again under other flags (finish() uses complete), which
  // must drop what depended on the old flags at the end of input.
  const std::string_view last(text.data(), cuts.empty() ? 0 : cuts.back());
  for (const auto f : {C, N, flags}) {
    const std::string diff = difference(g, last, grow.match_growing(last, f), fresh.match(last, f));
    ASSERT_TRUE(diff.empty()) << where << "\nfinal flags " << static_cast<int>(f) << " on \""
                              << last << "\": " << diff;
  }
}

std::vector<std::size_t> every_prefix(std::size_t n) {
  std::vector<std::size_t> cuts;
  for (std::size_t k = 0; k <= n; ++k) cuts.push_back(k);
  return cuts;
}

std::vector<std::size_t> random_chunks(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<std::size_t> step(1, 9);
  std::vector<std::size_t> cuts;
  for (std::size_t k = 0; k < n; k += step(rng)) cuts.push_back(k);
  cuts.push_back(n);
  return cuts;
}

// Option sets: cache everything (span 1) and the default threshold, with memo on and off.
std::vector<matcher_options> option_sets() {
  return {{.memoize = true, .growing_cache_span = 1},
          {.memoize = false, .growing_cache_span = 1},
          {.memoize = true},
          {.memoize = false, .growing_cache_span = 3}};
}

// An empty input may be a view without data (fuzz findings stream_session: the growing state
// copied from a null pointer, a literal compared with one: undefined behaviour that UBSan
// reports); matching it, growing from it, and
// from a short input whose first bytes then change (not an extension: matched afresh), gives
// what a fresh match gives.
TEST(MatcherGrowing, FromAnEmptyViewAndAfterARewrite) {
  builder b;
  auto g = b.build(b.content(b.until("<x>")) +
                   b.optional(b.literal("<x>") + b.content(b.until("</x>"))));
  ASSERT_TRUE(g.has_value());
  matcher m(*g);
  auto empty = m.match_growing(std::string_view{}, match_flags::lenient);
  EXPECT_NE(empty.status, match_status::fail);
  // A literal against no data at all (fuzz finding: memcmp from null in match_literal).
  builder lb;
  auto lit = lb.build(lb.literal("<x>") + lb.end());
  ASSERT_TRUE(lit.has_value());
  matcher ml(*lit);
  EXPECT_EQ(ml.match(std::string_view{}, match_flags::lenient).status,
            match_status::need_more_input);
  EXPECT_EQ(ml.match(std::string_view{}, match_flags::complete).status, match_status::fail);
  for (const std::string_view text : {"ab", "ab<x", "ab<x>cd", "zz<x>cd"}) {
    auto grown = m.match_growing(text, match_flags::lenient);
    matcher fresh_m(*g);
    auto fresh = fresh_m.match(text, match_flags::lenient);
    EXPECT_EQ(grown.status, fresh.status) << text;
    EXPECT_EQ(grown.end, fresh.end) << text;
    EXPECT_EQ(grown.ast.nodes().size(), fresh.ast.nodes().size()) << text;
  }
}

TEST(MatcherGrowing, NamedGrammarsEverySplitMatchesAFreshMatch) {
  std::mt19937 rng(2017);
  for (const auto& gg : test_support::grammars()) {
    builder b;
    auto g = b.build(gg.make(b));
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    for (int i = 0; i < 40; ++i) {
      // Longer texts than the other property tests, so the caches get something to reuse.
      const std::string text = test_support::random_text(rng, gg.pieces) +
                               test_support::random_text(rng, gg.pieces) +
                               test_support::random_text(rng, gg.pieces);
      for (const auto flags : {L, LC, N, C}) {
        for (const auto& o : option_sets()) {
          const std::string where =
              std::string(gg.name) + " span " + std::to_string(o.growing_cache_span) + " memo " +
              std::to_string(o.memoize) + " flags " + std::to_string(static_cast<int>(flags));
          check_feeds(*g, text, every_prefix(text.size()), flags, o, where);
          check_feeds(*g, text, random_chunks(rng, text.size()), flags, o, where);
        }
      }
    }
  }
}

TEST(MatcherGrowing, RandomGrammarsEverySplitMatchesAFreshMatch) {
  std::mt19937 rng(99);
  const std::vector<std::string> pieces = {"a", "b", " ", "ab", "ba", "aaaa", "bbb"};
  int built = 0;
  for (int gi = 0; gi < 80; ++gi) {
    builder b;
    test_support::grammar_generator gen(rng);
    auto g = b.build(gen.make(b));
    if (!g.has_value()) continue;
    ++built;
    for (int i = 0; i < 12; ++i) {
      const std::string text =
          test_support::random_text(rng, pieces) + test_support::random_text(rng, pieces);
      for (const auto flags : {L, LC, N}) {
        for (const auto& o : option_sets()) {
          check_feeds(*g, text, every_prefix(text.size()), flags, o, "random grammar");
          check_feeds(*g, text, random_chunks(rng, text.size()), flags, o, "random grammar");
        }
      }
    }
  }
  EXPECT_GT(built, 25);
}

// A Qwen3-style JSON tool call with long strings: the default thresholds cache scans.
grammar tool_call_grammar() {
  builder b;
  auto call = b.literal("{") << b.literal("\"name\"") << b.literal(":")
                             << b.tag(tag::tool_name, b.json_string()) << b.literal(",")
                             << b.literal("\"arguments\"") << b.literal(":")
                             << b.tag(tag::tool_args, b.json_value()) << b.literal("}");
  auto root = b.content(b.until("<tool_call>")) +
              b.zero_or_more(b.literal("<tool_call>")
                             << b.tag(tag::tool, call) << b.literal("</tool_call>") << b.space()) +
              b.end();
  auto g = b.build(root);
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  return std::move(*g);
}

TEST(MatcherGrowing, JsonToolCallsWithLongStrings) {
  const grammar g = tool_call_grammar();
  std::string body;
  for (int i = 0; i < 12; ++i) body += "line " + std::to_string(i) + " caf\xC3\xA9 \\\"q\\\"\\n";
  const std::vector<std::string> texts = {
      "Let me write it. <tool_call>\n{\"name\": \"write\", \"arguments\": {\"content\": \"" + body +
          "\", \"n\": [1, 2.5e3, true, null, {\"k\": \"" + body + "\"}]}}\n</tool_call>",
      "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"b\","
      "\"arguments\":{\"x\":\"" +
          body + "\"}}</tool_call>",
      "no call at all, just a long answer: " + body + body + " <tool_ca",
      "broken <tool_call>{\"name\": \"w\", \"arguments\": {\"c\": \"" + body + "\" oops}}",
  };
  std::mt19937 rng(5);
  for (const auto& text : texts) {
    for (const auto flags : {L, LC}) {
      for (const auto& o : option_sets()) {
        check_feeds(g, text, every_prefix(text.size()), flags, o, "json tool call");
        check_feeds(g, text, random_chunks(rng, text.size()), flags, o, "json tool call");
      }
    }
  }
}

struct feed_case {
  const char* name;
  std::vector<std::string> chunks;
  match_flags flags;
};

void run_table(const grammar& g, const std::vector<feed_case>& cases) {
  for (const auto& c : cases) {
    for (const auto& o : option_sets()) {
      std::string text;
      std::vector<std::size_t> cuts;
      for (const auto& chunk : c.chunks) {
        text += chunk;
        cuts.push_back(text.size());
      }
      check_feeds(g, text, cuts, c.flags, o, c.name);
    }
  }
}

TEST(MatcherGrowing, UntilResumesWithDelimitersCutAcrossFeeds) {
  builder b;
  auto g = b.build(b.content(b.until_one_of({"</tool_call>", "<|im_end|>", "<x"})) +
                   b.optional(b.literal("</tool_call>") + b.reasoning(b.until("<"))));
  ASSERT_TRUE(g.has_value());
  const std::string filler(70, 'a');
  run_table(*g,
            {
                {"cut in the middle", {filler, "</tool", "_call>", "zz"}, L},
                {"one byte at a time", {filler, "<", "/", "t", "o", "o", "l", "_"}, L},
                {"false start then real", {filler, "</tool_ca", "X", filler, "</tool_call>"}, L},
                {"second delimiter", {filler, "<|im_", "end|>", "more"}, L},
                {"short delimiter", {filler + "<", "x", filler}, L},
                {"prefix of two delimiters", {filler, "<", "|", "x"}, L},
                {"complete flag", {filler, "</tool", "_call>", filler}, C},
                {"lenient then complete", {filler, "</tool_c"}, LC},
            });
  // The held-back delimiter prefix: the content stops before it.
  matcher m(*g, {.growing_cache_span = 1});
  const std::string text = filler + "</tool";
  const auto r = m.match_growing(filler, L);
  EXPECT_EQ(r.end, filler.size());
  const auto r2 = m.match_growing(text, L);
  EXPECT_EQ(r2.status, match_status::need_more_input);
  EXPECT_EQ(r2.end, filler.size());
}

TEST(MatcherGrowing, Utf8CutAcrossFeeds) {
  builder b;
  auto g = b.build(b.content(b.chars("[^<]", 0, unbounded)) + b.optional(b.literal("<") + b.any()) +
                   b.end());
  ASSERT_TRUE(g.has_value());
  const std::string filler(40, 'x');
  run_table(*g, {
                    {"e-acute split", {filler, "caf\xC3", "\xA9 ok"}, L},
                    {"euro split twice", {filler, "\xE2", "\x82", "\xAC", "!"}, L},
                    {"emoji split", {filler, "\xF0\x9F", "\x98", "\x80<\xF0", "\x9F\x98\x80"}, L},
                    {"invalid continuation", {filler, "\xE2\x82", "a"}, L},
                    {"strict flag sees incomplete", {filler, "\xE2\x82", "\xAC"}, N},
                    {"complete flag", {filler, "\xC3", "\xA9"}, C},
                });
}

TEST(MatcherGrowing, LookaheadAtEndOfInput) {
  builder b;
  // Content runs until a "<" that starts "<call>"; a lone "<" is content.
  auto item = b.negate(b.literal("<call>")) + b.any();
  auto g = b.build(b.content(b.zero_or_more(item)) +
                   b.optional(b.peek(b.literal("<call>")) + b.literal("<call>") +
                              b.tag(tag::tool_name, b.chars("[a-z]", 1, unbounded))) +
                   b.end());
  ASSERT_TRUE(g.has_value());
  const std::string filler(50, 'y');
  run_table(*g, {
                    {"marker cut", {filler, "<ca", "ll>", "abc"}, L},
                    {"false marker", {filler, "<ca", "t>", "abc", "<call>zz"}, L},
                    {"lone bracket", {filler, "<", "", "x"}, L},
                    {"at every byte", {"<", "c", "a", "l", "l", ">", "q"}, L},
                    {"complete", {filler, "<ca", "ll>", "abc"}, C},
                });
}

TEST(MatcherGrowing, InputThatDoesNotExtendThePreviousStartsOver) {
  builder b;
  auto g = b.build(b.content(b.until("<t>")) + b.optional(b.literal("<t>") + b.rest()));
  ASSERT_TRUE(g.has_value());
  matcher m(*g, {.growing_cache_span = 1});
  matcher fresh(*g);
  const std::vector<std::string> inputs = {
      std::string(40, 'a') + "<t",  std::string(40, 'a') + "<t>b",  // grows
      std::string(40, 'a') + "<x",                                  // rewritten end
      std::string(10, 'a'),                                         // shorter
      std::string(10, 'a') + "<t>",                                 // grows again
  };
  for (const auto& in : inputs) {
    const auto a = m.match_growing(in, L);
    EXPECT_EQ(difference(*g, in, a, fresh.match(in, L)), "") << in;
  }
  // A plain match in between drops the growing state; reset_growing starts a new stream.
  EXPECT_TRUE(m.match("zz", C).ok());
  const std::string next = std::string(40, 'b') + "<t>c";
  EXPECT_EQ(difference(*g, next, m.match_growing(next, L), fresh.match(next, L)), "");
  m.reset_growing();
  const std::string other = std::string(40, 'c');
  EXPECT_EQ(difference(*g, other, m.match_growing(other, L), fresh.match(other, L)), "");
}

TEST(MatcherGrowing, FailsReportTheFreshError) {
  builder b;
  auto g =
      b.build(b.literal("{") + b.tag(tag::tool_args, b.json_value()) + b.literal("}") + b.end());
  ASSERT_TRUE(g.has_value());
  const std::string text = "{[1, 2, \"" + std::string(64, 's') + "\", tru, 4]}";
  for (const auto& o : option_sets()) {
    check_feeds(*g, text, every_prefix(text.size()), L, o, "fail mid-stream");
  }
  matcher m(*g);
  const auto r = m.match_growing(text, L);
  EXPECT_EQ(r.status, match_status::fail);
  EXPECT_EQ(r.error.where.offset, text.find("tru,"));  // where "true" was expected
}

TEST(MatcherGrowing, LimitsApplyPerCall) {
  builder b;
  auto g = b.build(b.zero_or_more(b.literal("a")));
  ASSERT_TRUE(g.has_value());
  matcher m(*g, {.max_steps = 200, .growing_cache_span = 1});
  std::string text;
  for (int i = 0; i < 50; ++i) {
    text += std::string(20, 'a');
    const auto r = m.match_growing(text, L);
    ASSERT_EQ(r.status, match_status::need_more_input) << i << r.error.to_string();
  }
  // A fresh match of the whole text exceeds the limit.
  EXPECT_EQ(m.match(text, L).error.code, base::errc::limit_exceeded);
}

// The work per call stays bounded on the shapes that grow in a stream: a JSON string with
// escapes and a content loop of "not a marker, then any character". max_steps bounds the node
// visits of one call; a whole-text match needs far more.
TEST(MatcherGrowing, WorkPerCallDoesNotGrowWithTheInput) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"json string", "{\"c\": \""},
      {"content loop", ""},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    builder gb;
    auto root = k == 0 ? gb.literal("{\"c\": ") + gb.tag(tag::tool_args, gb.json_string())
                       : gb.content(gb.zero_or_more(gb.negate(gb.literal("</think>")) + gb.any()));
    auto g = gb.build(root);
    ASSERT_TRUE(g.has_value());
    matcher m(*g, {.max_steps = 400});
    std::string text = cases[k].second;
    const std::string unit = "ab\\n c\\\"d \xC3\xA9 ";
    while (text.size() < 8000) {
      text += unit;
      for (std::size_t cut = text.size() - unit.size() + 1; cut <= text.size(); cut += 4) {
        const auto r = m.match_growing(std::string_view(text.data(), cut), L);
        ASSERT_EQ(r.status, match_status::need_more_input)
            << cases[k].first << " at " << cut << ": " << r.error.to_string();
      }
    }
    // A whole-text match of the content loop needs far more visits. The JSON string body is a
    // loop_plan scan in a plain match (a few visits whatever its length), so it is checked
    // with the plan switched off.
    matcher whole(*g, {.max_steps = 400, .loop_plans = false});
    EXPECT_EQ(whole.match(text, L).error.code, base::errc::limit_exceeded) << cases[k].first;
  }
}

// Many AST nodes: every call extends the loop's recorded progress, whose old AST copy becomes
// garbage, so the arena is compacted repeatedly; rule entries (items) are relocated with it.
TEST(MatcherGrowing, LongLoopWithManyAstNodesSurvivesArenaCompaction) {
  builder b;
  auto item =
      b.rule("item", b.tag(tag::tool_name, b.chars("[a-z]", 1, unbounded)) +
                         b.optional(b.tag(tag::tool_args, b.json_number())) + b.literal(";"));
  auto g = b.build(b.zero_or_more(item) + b.content(b.rest()));
  ASSERT_TRUE(g.has_value());
  std::string text;
  for (int i = 0; i < 800; ++i) text += (i % 3 ? "ab" : "xyz") + std::to_string(i % 7) + ";";
  for (const auto& o : {matcher_options{.growing_cache_span = 1}, matcher_options{}}) {
    matcher grow(*g, o);
    matcher fresh(*g, o);
    std::size_t calls = 0;
    for (std::size_t k = 0; k <= text.size();
         k = k == text.size() ? k + 1 : std::min(k + 3, text.size())) {
      const std::string_view prefix(text.data(), k);
      const auto a = grow.match_growing(prefix, L);
      if (++calls % 61 == 0 || k == text.size()) {
        const std::string diff = difference(*g, prefix, a, fresh.match(prefix, L));
        ASSERT_TRUE(diff.empty()) << "prefix " << k << ": " << diff;
      }
    }
    const auto done = grow.match_growing(text, C);
    EXPECT_EQ(difference(*g, text, done, fresh.match(text, C)), "");
    EXPECT_EQ(done.ast.nodes().size(), 800u * 4u + 1u);  // item, name, args, number; content
  }
}

}  // namespace
}  // namespace chatpeg::peg

namespace chatpeg::peg {
namespace {

// Fuzz finding (peg_match): a bounded run of a negated class after an earlier alternative that
// scanned the same bytes ended one code point early when grown through prefixes 0, 4, 8, 10.
TEST(MatcherGrowing, FuzzBoundedClassRunAfterChoiceMatchesAFreshMatch) {
  builder b;
  auto first =
      b.atomic(b.choice({b.chars("[\\x00-\\x7F]", 1, unbounded) + b.json_value(),
                         b.atomic(b.tag(tag::tool_arg_value, b.chars("[\\x00-\\x7F]", 0, 2)))}));
  auto tail =
      b.optional(b.atomic(b.choice({b.chars("[^\"\\\\]", 1, 2), b.json_string() + b.rest()})));
  auto g = b.build(first + b.chars("[\\x00-\\x7F]", 1, unbounded) + tail);
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  const std::string text = "]iu\x01\xD3\x9DsH\xC8h";
  for (const auto flags : {N, L, C, LC}) {
    for (const std::uint32_t span : {1u, 32u}) {
      check_feeds(*g, text, {0, 4, 8, 10}, flags, {.growing_cache_span = span}, "fuzz 1");
      check_feeds(*g, text, every_prefix(text.size()), flags, {.growing_cache_span = span},
                  "fuzz 1 every prefix");
    }
  }
}

}  // namespace
}  // namespace chatpeg::peg

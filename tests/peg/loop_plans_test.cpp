// Loop plans (src/peg/loop_plans.cpp + matcher_scan.cpp match_escaped_text): which loops
// build() recognizes, that a recognized loop is a few node visits however long and
// escape-dense the text, and — the property that matters — that the scan gives exactly the
// node-by-node result (status, end, AST, error) on random escape-laden inputs, every prefix
// under lenient, cut UTF-8 and cut escapes, for the JSON string and a look-alike shape.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {
namespace {

using factory = std::function<parser(builder&)>;

std::size_t planned_loops(const grammar& g) {
  std::size_t n = 0;
  for (const auto& node : g.nodes()) {
    const auto* rep = std::get_if<nodes::repetition>(&node);
    if (rep && rep->plan != no_plan) ++n;
  }
  return n;
}

grammar build(const factory& f) {
  builder b;
  auto g = b.build(f(b));
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  return g ? std::move(*g) : grammar{};
}

// '...' strings with %-escapes: %n %q %% and %x followed by two digits.
parser percent_string(builder& b) {
  auto plain = b.chars("[^'%\\x00-\\x1F]", 1, unbounded);
  auto escape = b.literal("%") + (b.chars("[nq%]") | (b.literal("x") + b.chars("[0-9]", 2, 2)));
  return b.literal("'") + b.content(b.zero_or_more(plain | escape)) + b.literal("'");
}

TEST(LoopPlans, Recognized) {
  const grammar json = build([](builder& b) { return b.json_string() + b.json_value(); });
  EXPECT_EQ(planned_loops(json), 1u);
  ASSERT_EQ(json.loop_plans().size(), 1u);
  const auto& p = json.loop_plans()[0];
  EXPECT_EQ(p.escape, '\\');
  EXPECT_EQ(p.unicode, 'u');
  EXPECT_EQ(p.hex_count, 4u);
  EXPECT_TRUE(p.bytes['a'] & loop_plan::plain);
  EXPECT_FALSE(p.bytes['"'] & loop_plan::plain);
  EXPECT_FALSE(p.bytes['\n'] & loop_plan::plain);
  EXPECT_TRUE(p.bytes['n'] & loop_plan::simple);
  EXPECT_TRUE(p.bytes['F'] & loop_plan::hex);
  const auto rule = json.find_rule("json-string-content");
  ASSERT_TRUE(rule.has_value());
  const auto& body = std::get<nodes::rule>(json.at(*rule));
  EXPECT_NE(std::get<nodes::repetition>(json.at(body.child)).plan, no_plan);

  EXPECT_EQ(planned_loops(build(percent_string)), 1u);
}

TEST(LoopPlans, NearMissesAreNotPlanned) {
  const std::vector<std::pair<const char*, factory>> misses = {
      {"bounded",
       [](builder& b) {
         return b.repeat(
             b.chars("[^\"\\\\]", 1, unbounded) |
                 (b.literal("\\") + (b.chars("[n]") | (b.literal("u") + b.chars("[0-9]", 4, 4)))),
             0, 5);
       }},
      {"plain not a run",
       [](builder& b) {
         return b.zero_or_more(
             b.chars("[^\"\\\\]") |
             (b.literal("\\") + (b.chars("[n]") | (b.literal("u") + b.chars("[0-9]", 4, 4)))));
       }},
      {"tagged escape",
       [](builder& b) {
         return b.zero_or_more(
             b.chars("[^\"\\\\]", 1, unbounded) |
             b.content(b.literal("\\") +
                       (b.chars("[n]") | (b.literal("u") + b.chars("[0-9]", 4, 4)))));
       }},
      {"two-byte escape literal",
       [](builder& b) {
         return b.zero_or_more(
             b.chars("[^\"\\\\]", 1, unbounded) |
             (b.literal("\\\\") + (b.chars("[n]") | (b.literal("u") + b.chars("[0-9]", 4, 4)))));
       }},
      {"non-ASCII plain range",
       [](builder& b) {
         return b.zero_or_more(
             b.chars("[^\"\\\\\\u00e9]", 1, unbounded) |
             (b.literal("\\") + (b.chars("[n]") | (b.literal("u") + b.chars("[0-9]", 4, 4)))));
       }},
      {"escape byte is plain",
       [](builder& b) {
         return b.zero_or_more(
             b.chars("[^\"]", 1, unbounded) |
             (b.literal("\\") + (b.chars("[n]") | (b.literal("u") + b.chars("[0-9]", 4, 4)))));
       }},
  };
  for (const auto& [name, f] : misses) {
    SCOPED_TRACE(name);
    EXPECT_EQ(planned_loops(build(f)), 0u);
  }
}

TEST(LoopPlans, EscapeDenseStringIsFewVisits) {
  const grammar g = build([](builder& b) { return b.json_string(); });
  std::string body;
  while (body.size() < 64 * 1024) body += "ab\\n\\\"c\\u00e9\xC3\xA9\\\\";
  const std::string input = "\"" + body + "\"";
  matcher fast(g, {.max_steps = 100});
  EXPECT_TRUE(fast.match(input, match_flags::complete).ok());
  matcher slow(g, {.max_steps = 100, .loop_plans = false});
  EXPECT_EQ(slow.match(input, match_flags::complete).error.code, base::errc::limit_exceeded);
}

std::string outcome(matcher& m, const grammar& g, const std::string& input, match_flags flags) {
  const auto r = m.match(input, flags);
  return std::string(match_status_name(r.status)) + " " + std::to_string(r.end) + "\n" +
         r.ast.dump(g, input) + r.error.to_string();
}

void expect_same(const grammar& g, const std::vector<std::string>& pieces, unsigned seed) {
  matcher fast(g);
  matcher slow(g, {.loop_plans = false});
  std::mt19937 rng(seed);
  const match_flags all[] = {match_flags::none, match_flags::lenient, match_flags::complete,
                             match_flags::lenient | match_flags::complete};
  for (int i = 0; i < 3000; ++i) {
    std::string s = pieces[0];
    const std::size_t n = rng() % 12;
    for (std::size_t k = 0; k < n; ++k) s += pieces[1 + rng() % (pieces.size() - 1)];
    if (rng() % 2) s += pieces[0];
    if (rng() % 3 == 0) s = s.substr(0, rng() % (s.size() + 1));  // cut anywhere
    for (const auto flags : all) {
      ASSERT_EQ(outcome(fast, g, s, flags), outcome(slow, g, s, flags))
          << "input: '" << s << "' flags " << static_cast<int>(flags);
    }
  }
}

TEST(LoopPlans, SameResultsAsNodeByNode) {
  const grammar json = build([](builder& b) {
    return b.tag(tag::tool_args, b.json_string()) + b.optional(b.literal(",") + b.json_value());
  });
  expect_same(json, {"\"",   "a",          "bc",      "\\",      "\\n",
                     "\\\"", "\\u",        "\\u00",   "\\u00e9", "\\uZZ",
                     "\\x",  "\xC3\xA9",   "\xC3",    "\xA9",    "\xF0\x9F\x98\x80",
                     "\xFF", "\n",         "\x01",    "1",       "\\/",
                     "u",    "\\\xC3\xA9", "\\u0\xC3"},
              1);
  // Long plain runs (the unrolled scan crosses its 4-byte steps) between invalid and cut
  // sequences, which the plan's table takes as plain bytes.
  expect_same(
      json,
      {"\"", "abcdefghijklmnop", "abcdefghi", "abc", "\x80", "\xE0\x80", "\xED\xA0", "\xF4\x90",
       "\xC0\xAF", "\xE2\x82", "\\n", "\\u00e9", "\xC3\xA9xyz12345", "\n", "\\"},
      3);
  expect_same(build(percent_string),
              {"'", "a", "%", "%n", "%q", "%%", "%x", "%x1", "%x12", "%xa", "\xC3\xA9", "\xE2\x82",
               "\t", "\\", "x", "12"},
              2);
}

TEST(LoopPlans, EveryPrefixUnderLenient) {
  const grammar g = build([](builder& b) { return b.json_value(); });
  const std::string text =
      "{\"a\": \"x\\\"y\\\\z\\u00e9\\n\xF0\x9F\x98\x80 end\", \"b\": [\"\\t\"]}";
  matcher fast(g);
  matcher slow(g, {.loop_plans = false});
  for (std::size_t n = 0; n <= text.size(); ++n) {
    const std::string prefix = text.substr(0, n);
    const auto flags = match_flags::lenient | match_flags::complete;
    EXPECT_EQ(outcome(fast, g, prefix, flags), outcome(slow, g, prefix, flags)) << prefix;
    EXPECT_NE(fast.match(prefix, flags).status, match_status::fail) << prefix;
  }
}

}  // namespace
}  // namespace chatpeg::peg

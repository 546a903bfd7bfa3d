// The matcher's work counters (match_result::scanned_bytes, node_visits) and what they show:
// a growing match costs the new bytes plus a bounded look-behind, for every scan kind — an
// `until` with no delimiter (the rest of the input), with one-byte and longer delimiters, a
// character-class run, a JSON string — so 64 KB fed 4 bytes at a time reads each byte a
// bounded number of times. A fresh match reads the input once; a rescan per feed would read
// it ~8000 times.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {
namespace {

struct work_case {
  const char* name;
  std::function<parser(builder&)> make;
  std::string unit;  // repeated to make the input
  std::string prefix = "";
  bool reads_input = true;  // false: the grammar takes the rest of the input unread
};
void PrintTo(const work_case& c, std::ostream* os) {
  *os << c.name;
}

class matcher_work : public ::testing::TestWithParam<work_case> {};

TEST_P(matcher_work, growing_reads_each_byte_a_bounded_number_of_times) {
  const auto& c = GetParam();
  builder b;
  auto g = b.build(c.make(b));
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  std::string input = c.prefix;
  while (input.size() < c.prefix.size() + 64 * 1024) input += c.unit;
  matcher m(*g);
  std::uint64_t scanned = 0, visits = 0;
  for (std::size_t n = c.prefix.size() + 4; n <= input.size(); n += 4) {
    const auto r = m.match_growing(std::string_view(input).substr(0, n), match_flags::lenient);
    ASSERT_NE(r.status, match_status::fail) << r.error.to_string();
    scanned += r.scanned_bytes;
    visits += r.node_visits;
  }
  const double per_byte = double(scanned) / double(input.size());
  EXPECT_LE(per_byte, 8.0) << scanned << " bytes scanned for " << input.size();
  EXPECT_LE(double(visits) / double(input.size()), 8.0) << visits << " visits";
  // A fresh match reads the input about once.
  const auto fresh = match(*g, input, match_flags::lenient);
  if (c.reads_input) EXPECT_GE(fresh.scanned_bytes, input.size() - c.prefix.size());
  EXPECT_LE(fresh.scanned_bytes, 3 * input.size());
}

INSTANTIATE_TEST_SUITE_P(
    table, matcher_work,
    ::testing::Values(
        work_case{"until_nothing", [](builder& b) { return b.rest(); }, "text <b> ", "", false},
        work_case{"until_one_byte", [](builder& b) { return b.until("\x01") + b.literal("\x01"); },
                  "text <b> "},
        work_case{"until_marker",
                  [](builder& b) { return b.until("</think>") + b.literal("</think>"); },
                  "a </ b </thin c "},
        work_case{"until_two_markers",
                  [](builder& b) {
                    return b.until_one_of({"<tool_call>", "\n<|im_end|>"}) + b.rest();
                  },
                  "a <tool b\n<|im c "},
        work_case{"class_run", [](builder& b) { return b.chars("[a-z ]", 0, unbounded); },
                  "abc def "},
        work_case{"json_string",
                  [](builder& b) { return b.literal("\"") + b.json_string_content(); },
                  "ab \\\" \\u00e9 c", "\""},
        work_case{"reasoning_then_content",
                  [](builder& b) {
                    auto think = b.literal("<think>") + b.until("</think>") + b.literal("</think>");
                    return b.optional(think) + b.rest();
                  },
                  "deep thought < ", "<think>"}),
    [](const auto& tc) { return std::string(tc.param.name); });

TEST(matcher_work_counts, one_match) {
  builder b;
  auto g = b.build(b.literal("abc") + b.chars("[0-9]", 1, unbounded) + b.until("!"));
  ASSERT_TRUE(g.has_value());
  const auto r = match(*g, "abc123xyz!", match_flags::none);
  ASSERT_TRUE(r.ok());
  // "abc" (3), the digits and the byte that ends them (4), "xyz!" up to the delimiter (4).
  EXPECT_EQ(r.scanned_bytes, 11u);
  EXPECT_GE(r.node_visits, 4u);
}

}  // namespace
}  // namespace chatpeg::peg

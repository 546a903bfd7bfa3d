// Hostile outputs through stream::session, scaled to what a Debug test run
// affords (the Debug matcher checks the whole growing prefix on every call, so full sizes —
// 10 MB content, 1 MB argument, 10,000 calls — were measured with a Release build, see the
// stream helper's report). Each output is streamed in 16-byte chunks and in one piece; the result
// is correct or a typed error, and memory and work are bounded by counters, not wall-clock:
// retained bytes ≤ 16 × output (the AST of 1000 tiny calls is ~12 × their bytes), deltas ≤ 2 per
// feed plus 2 per call, AST nodes handed over by the matcher ≤ 8 × output + 64 Ki.
#include <gtest/gtest.h>

#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "stream_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

struct hostile_case {
  const char* name;
  std::function<peg::parser(peg::builder&)> make;
  std::string prefix;
  std::function<std::string()> output;
  std::size_t calls;  // expected tool calls (content-only outputs: 0)
};

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

const std::vector<hostile_case>& hostile_cases() {
  static const std::vector<hostile_case> table = {
      {"large_content", tag_with_json, "",
       [] { return repeat("plain text with <b>tags</b> and caf\xC3\xA9.\n", 6000); }, 0},
      {"large_argument", tag_with_json, "",
       [] {
         return "<function=search>{\"q\": \"" + repeat("abc \\\"q\\\" \\n \\u00e9 ", 8000) +
                "\"}</function>";
       },
       1},
      {"many_parallel_calls", tag_with_json, "",
       [] { return repeat("<function=search>{\"q\": 1}</function>", 1000); }, 1000},
      {"marker_repeated", reasoning_calls, "<think>",
       [] { return "r</think>" + repeat("</think><think><tool_ca", 4000); }, 0},
      {"invalid_utf8_and_nul", tag_with_tagged, "",
       [] {
         return repeat(std::string("a\xFF\xC3(\0b\xE2\x82", 8) + "\xF0\x9F\x8C", 3000) +
                "<tool_call>\n<function=search>\n<parameter=note>\n" +
                repeat(std::string("\xFE\0x", 3), 1000) +
                "\n</parameter>\n</function>\n</tool_call>";
       },
       1},
  };
  return table;
}

class HostileOutput : public ::testing::TestWithParam<hostile_case> {};

TEST_P(HostileOutput, StreamsCorrectlyWithBoundedMemoryAndWork) {
  const auto& c = GetParam();
  auto p = make_prepared(c.make, c.prefix);
  const std::string output = c.output();
  auto reference = parse(p, output);
  for (std::size_t chunk : {std::size_t{16}, std::size_t{0}}) {
    SCOPED_TRACE(chunk);
    session s(p);
    std::vector<delta> out;
    bool failed = false;
    std::size_t feeds = 0;
    for (std::size_t at = 0; at < output.size() && !failed;) {
      const std::size_t n = chunk == 0 ? output.size() : std::min(chunk, output.size() - at);
      auto fed = s.feed(std::string_view(output).substr(at, n));
      ++feeds;
      at += n;
      if (!fed) {
        failed = true;
        EXPECT_NE(fed.error().code, base::errc::internal_error) << fed.error().to_string();
      }
    }
    const auto st = s.stats();
    EXPECT_LE(st.retained_bytes, 16 * output.size() + 4096);
    EXPECT_LE(st.deltas, 2 * feeds + 2 * c.calls + 4);
    // Work that grows with the AST stays linear in the output (amortized matching): without
    // it, 1000 calls in 16-byte chunks hand over ~11 M AST nodes for 36 KB of output.
    EXPECT_LE(st.matched_ast_nodes, 8 * output.size() + 65536);
    if (failed) continue;
    auto f = s.finish();
    ASSERT_EQ(f.has_value(), reference.has_value());
    if (!f) {
      EXPECT_EQ(f.error().code, reference.error().code);
      continue;
    }
    EXPECT_EQ(message_difference(f->message, *reference, false), "");
    EXPECT_EQ(f->message.tool_calls.size(), c.calls);
    EXPECT_TRUE(base::is_valid_utf8(f->message.content.value_or("")));
  }
}

INSTANTIATE_TEST_SUITE_P(Outputs, HostileOutput, ::testing::ValuesIn(hostile_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace chatpeg::stream

// The feed fast path (src/stream/open_span.cpp): chunks that only extend an open content /
// reasoning span, a raw tagged string value or a JSON string (also when the span ends in a held
// back delimiter prefix, which the chunk then extends or completes) are folded without matching
// (session_stats::matched_feeds does not grow), chunks that could change the parse are
// matched; and either way the deltas add up to the one-shot parse for every split
// (session_test.cpp and the conformance corpus check that over all formats).
#include <gtest/gtest.h>

#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "stream_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

struct fast_case {
  const char* name;
  std::function<peg::parser(peg::builder&)> make;
  std::string prefix;
  std::vector<std::string> chunks;
  std::vector<bool> matched;  // per chunk: whether the matcher must run
};

const std::vector<fast_case>& fast_cases() {
  static const std::vector<fast_case> table = {
      {"content",
       tag_with_json,
       "",
       {"Hello", " world", ", fine", " <b>", "ok", "<function=", "search>{}</function>"},
       // "<b>" holds '<', a delimiter's first byte, but no delimiter: still an extension;
       // "<function=" is a delimiter.
       {true, false, false, false, false, true, true}},
      {"reasoning",
       reasoning_calls,
       "<think>",
       // "</thi" may begin the delimiter: held back without matching; "nk>" completes it.
       {"Let", " me", " think", "</thi", "nk>", "Sure", " thing"},
       {true, false, false, false, true, true, false}},
      {"json_string_argument",
       tag_with_json,
       "",
       {"<function=search>{\"q\": \"ab", "cd", " \\n ok", " \\u00e9", " \\\"x\\\\", " \xC3\xA9",
        "\"", "}</function>"},
       {true, false, false, false, false, false, true, true}},
      {"json_string_cut_escape",
       tag_with_json,
       "",
       // An escape cut by the end of a chunk stays open: the next chunk completes it.
       {"<function=search>{\"q\": \"ab", "c\\", "n", "d \\u00", "e9", "f"},
       {true, false, false, false, false, false}},
      {"text_between_bare_calls",
       bare_json,
       "",
       // Text pieces end at '{' (where a call could start; '[' is no such byte): a chunk
       // holding '{' is matched; so is the next while the last '{' is within the bytes a
       // piece's parts before its scan may take (a code point: 4); then the text runs on as
       // one span.
       {"Use [1, 2]", " and", " { x", " }.", " more", " {\"name\": \"search\", ",
        "\"arguments\": {}}", " after"},
       {true, false, true, true, false, true, true, true}},
      {"tagged_raw_string",
       tag_with_tagged,
       "",
       {"<tool_call>\n<function=search>\n<parameter=note>\nab", "cd", " < ef", "\n</par",
        "ameter>\n</function>\n</tool_call>"},
       {true, false, false, false, true}},
  };
  return table;
}

class FastPath : public ::testing::TestWithParam<fast_case> {};

TEST_P(FastPath, ExtensionsAreNotMatchedAndAddUp) {
  const auto& c = GetParam();
  auto p = make_prepared(c.make, c.prefix);
  session s(p);
  std::string output;
  chat::message assembled;
  for (std::size_t i = 0; i < c.chunks.size(); ++i) {
    const std::size_t before = s.stats().matched_feeds;
    auto fed = s.feed(c.chunks[i]);
    ASSERT_TRUE(fed.has_value()) << fed.error().to_string();
    output += c.chunks[i];
    EXPECT_EQ(s.stats().matched_feeds - before, c.matched[i] ? 1u : 0u)
        << "chunk " << i << " " << json::quote(c.chunks[i]);
    // current() equals the one-shot lenient parse of the output so far.
    auto lenient = parse(p, output, {.partial = true});
    ASSERT_TRUE(lenient.has_value());
    EXPECT_EQ(message_difference(s.current(), *lenient, false), "") << "after chunk " << i;
  }
  EXPECT_EQ(s.stats().feeds, c.chunks.size());
}

INSTANTIATE_TEST_SUITE_P(Shapes, FastPath, ::testing::ValuesIn(fast_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(FastPath, LongTextIsMostlyExtendedAndMatchesTheOneShotParse) {
  auto p = make_prepared(reasoning_calls, "<think>");
  std::string output;
  for (int i = 0; i < 200; ++i) output += "step " + std::to_string(i) + ": caf\xC3\xA9 ok. ";
  output += "</think>Done.";
  auto run = run_stream(p, output, fixed_chunks(output.size(), 4));
  ASSERT_TRUE(run.ok) << run.error.to_string();
  for (const auto& v : run.violations) ADD_FAILURE() << v;
  auto reference = parse(p, output);
  ASSERT_TRUE(reference.has_value());
  EXPECT_EQ(message_difference(run.final_message, *reference, false), "");
  session s(p);
  for (std::size_t at = 0; at < output.size(); at += 4) {
    ASSERT_TRUE(s.feed(std::string_view(output).substr(at, 4)).has_value());
  }
  const auto st = s.stats();
  EXPECT_EQ(st.feeds, (output.size() + 3) / 4);
  EXPECT_LT(st.matched_feeds * 10, st.feeds) << st.matched_feeds << " of " << st.feeds;
}

}  // namespace
}  // namespace chatpeg::stream

// The session's feed fast paths (no matcher run: open text extended and sent directly, held
// marker prefixes released without a match, JSON-string escapes cut by a chunk) checked against the
// one-shot lenient parse: for text full of marker first bytes, marker prefixes cut at every place,
// multi-byte UTF-8 and invalid bytes, in content and reasoning, streamed in chunks of 1..9 bytes
// and random splits, current() after every chunk equals stream::parse(prefix, partial), and the
// finished stream equals the one-shot parse. Also: most feeds of such text take a path on top of
// the general one, and each feed is counted on exactly one path.
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
  std::function<parser(builder&)> make;
  std::string prefix;
  std::string output;
};

std::string busy_text() {
  return "a < b && c <d> </e> <tool <tool_ca <function <func </think </thi <<< x \xC3\xA9 "
         "\xE2\x82\xAC \xF0\x9F\x8C\x8D <\xC3\xA9 bad \xFF\xFE < end";
}

const std::vector<fast_case>& fast_cases() {
  static const std::vector<fast_case> table = {
      {"content_tag_with_json", tag_with_json, "", busy_text()},
      {"content_then_call", tag_with_json, "",
       busy_text() + "<function=search>{\"q\": \"<a> \\\" x\"}</function>"},
      {"reasoning_then_content", reasoning_calls, "<think>",
       busy_text() + "</think>" + busy_text()},
      {"json_string_escapes", tag_with_json, "",
       "<function=search>{\"q\": \"a\\\\b\\\"c\\n\\u00e9\\\\\\\\ x\\t\\u20AC <b> \xC3\xA9\\/"
       "\\r\\n\\\"\\\\\\u00FF end\"}</function>"},
      {"tagged_raw_string", tag_with_tagged, "",
       "<tool_call>\n<function=search>\n<parameter=note>\n" + busy_text() +
           "\n</parameter>\n</function>\n</tool_call>"},
  };
  return table;
}

class SessionFastPath : public ::testing::TestWithParam<fast_case> {};

TEST_P(SessionFastPath, CurrentEqualsTheLenientParseAfterEveryChunk) {
  const auto& c = GetParam();
  auto p = make_prepared(c.make, c.prefix);
  const std::string_view output = c.output;
  std::vector<std::vector<std::size_t>> splits;
  for (std::size_t n = 1; n <= 9; ++n) splits.push_back(fixed_chunks(output.size(), n));
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    splits.push_back(random_chunks(output.size(), seed, 12));
  }
  auto reference = parse(p, output);
  ASSERT_TRUE(reference.has_value()) << reference.error().to_string();
  for (const auto& chunks : splits) {
    SCOPED_TRACE("chunk " + std::to_string(chunks.front()) + " of " +
                 std::to_string(chunks.size()));
    session s(p);
    std::size_t at = 0;
    for (const std::size_t n : chunks) {
      ASSERT_TRUE(s.feed(output.substr(at, n)).has_value()) << at;
      at += n;
      auto lenient = parse(p, output.substr(0, at), {.partial = true});
      ASSERT_TRUE(lenient.has_value()) << lenient.error().to_string();
      chat::message want = *lenient;
      if (s.current().tool_calls.size() + 1 == want.tool_calls.size()) want.tool_calls.pop_back();
      ASSERT_EQ(message_difference(s.current(), want, /*compare_ids=*/false), "")
          << "after " << at << " bytes";
    }
    auto f = s.finish();
    ASSERT_TRUE(f.has_value()) << f.error().to_string();
    EXPECT_EQ(message_difference(f->message, *reference, /*compare_ids=*/false), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Texts, SessionFastPath, ::testing::ValuesIn(fast_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SessionFastPath, MostFeedsOfTextWithMarkerBytesAreNotMatched) {
  auto p = make_prepared(tag_with_json);
  std::string text;
  while (text.size() < 8000) text += "if (a < b) x = \"<p>\" + y;  // </div> <fun\n";
  session s(p);
  for (std::size_t at = 0; at < text.size(); at += 4) {
    ASSERT_TRUE(s.feed(std::string_view(text).substr(at, 4)).has_value());
  }
  const auto st = s.stats();
  EXPECT_EQ(s.current().content.value_or(""), text);
  // Chunks with '<' (most of them here) stay on the fast path, also when one ends with a
  // marker prefix ("<", "<fun").
  EXPECT_LT(st.matched_feeds * 20, st.feeds) << st.matched_feeds << " of " << st.feeds;
}

// Each chunk takes exactly one path (stats() counts each feed once), and the request shape
// decides which: open text extends the open span, general_path_only leaves the matcher alone
// (deferred once the AST is large), and every way gives stream::parse's message.
TEST(SessionPaths, EachFeedTakesOnePathAndTheShapePicksIt) {
  struct row {
    const char* name;
    std::function<parser(builder&)> make;
    std::string output;
    bool general_only;
    bool extension, deferred;  // whether that path takes most feeds / any feed
  };
  std::string text, args, calls;
  while (text.size() < 8000) text += "if (a < b) x = \"<p>\" + y;  // </div> caf\xC3\xA9\n";
  while (args.size() < 8000) args += "line \\\"q\\\" \\n caf\xC3\xA9 <b> ";
  args = "<function=search>{\"q\": \"" + args + "\"}</function>";
  for (int i = 0; i < 300; ++i) calls += "<function=search>{\"q\": \"x\"}</function>";
  const std::vector<row> rows = {
      {"content", tag_with_json, text, false, true, false},
      {"content_general", tag_with_json, text, true, false, false},
      {"argument", tag_with_json, args, false, true, false},
      {"many_calls_general", tag_with_json, calls, true, false, true},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto p = make_prepared(r.make);
    session s(p, {.general_path_only = r.general_only});
    for (std::size_t at = 0; at < r.output.size(); at += 4) {
      ASSERT_TRUE(s.feed(std::string_view(r.output).substr(at, 4)).has_value()) << at;
    }
    const session_stats st = s.stats();
    EXPECT_EQ(st.feeds, (r.output.size() + 3) / 4);
    EXPECT_EQ(st.feeds, st.extension_feeds + st.deferred_feeds + st.matched_feeds);
    EXPECT_EQ(st.extension_feeds * 2 > st.feeds, r.extension)
        << st.extension_feeds << " of " << st.feeds;
    EXPECT_EQ(st.deferred_feeds > 0, r.deferred) << st.deferred_feeds;
    if (r.general_only) {
      EXPECT_EQ(st.extension_feeds, 0u);
    }
    auto fin = s.finish();
    ASSERT_TRUE(fin.has_value()) << fin.error().to_string();
    auto want = parse(p, r.output);
    ASSERT_TRUE(want.has_value()) << want.error().to_string();
    EXPECT_EQ(message_difference(fin->message, *want, /*compare_ids=*/false), "");
  }
}

// finish() completes the streamed fold (stats().finish_folded) rather than mapping the whole
// output again, and gives stream::parse's message; where the fold had to repair invalid UTF-8
// (map() may cut the repair differently) or the output is cut by a token limit, it parses again
// — the message is the parse's in every case.
TEST(SessionFinish, CompletesTheFoldOrParsesAgain) {
  struct row {
    const char* name;
    std::function<parser(builder&)> make;
    std::string prefix;
    std::string output;
    bool hit_token_limit;
    bool folded;
  };
  const std::vector<row> rows = {
      {"content", tag_with_json, "", "plain <b> text \xC3\xA9", false, true},
      {"json_call", tag_with_json, "",
       "hi <function=search>{\"q\": \"a\\\"b\", \"n\": [1, 2]}</function>", false, true},
      {"tagged_call", tag_with_tagged, "",
       "<tool_call>\n<function=search>\n<parameter=note>\nx < y\n</parameter>\n</function>\n"
       "</tool_call>",
       false, true},
      {"reasoning", reasoning_calls, "<think>", "why</think>answer", false, true},
      {"invalid_utf8", tag_with_json, "", "bad \xFF\xFE bytes", false, false},
      {"token_limit", tag_with_json, "", "hi <function=search>{\"q\": \"a", true, false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto p = make_prepared(r.make, r.prefix);
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{3}, r.output.size()}) {
      session s(p);
      std::string streamed_args;
      for (std::size_t at = 0; at < r.output.size(); at += chunk) {
        auto fed = s.feed(std::string_view(r.output).substr(at, chunk));
        ASSERT_TRUE(fed.has_value()) << fed.error().to_string();
      }
      auto fin = s.finish({.hit_token_limit = r.hit_token_limit});
      ASSERT_TRUE(fin.has_value()) << fin.error().to_string();
      EXPECT_EQ(s.stats().finish_folded, r.folded) << "chunk " << chunk;
      // current() after finish() is the final message, ids included.
      EXPECT_EQ(s.current().to_json().dump(), fin->message.to_json().dump());
      auto want = parse_detailed(p, r.output, {.allow_truncated = r.hit_token_limit});
      ASSERT_TRUE(want.has_value()) << want.error().to_string();
      EXPECT_EQ(fin->message.content, want->message.content);
      EXPECT_EQ(fin->message.reasoning_content, want->message.reasoning_content);
      ASSERT_EQ(fin->message.tool_calls.size(), want->message.tool_calls.size());
      for (std::size_t i = 0; i < want->message.tool_calls.size(); ++i) {
        EXPECT_EQ(fin->message.tool_calls[i].name, want->message.tool_calls[i].name);
        EXPECT_EQ(fin->message.tool_calls[i].arguments, want->message.tool_calls[i].arguments);
      }
    }
  }
}

}  // namespace
}  // namespace chatpeg::stream

// session::finish on its own: the two ways it ends a stream — completing the streamed fold with
// the complete match (session_stats::finish_folded) or parsing the whole output (a token
// limit, token mode, a fold it cannot vouch for) — give stream::parse's message either way,
// with what was still held back sent last and the finish reason; a cut call under the token
// limit is closed with finish_reason length; errors: a second finish, a feed after finish, an
// output that does not match; current() after finish is the final message.
#include <gtest/gtest.h>

#include <string>

#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "stream_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

struct finish_case {
  const char* name;
  std::function<parser(builder&)> make;
  std::string output;
  finish_reason reason;
  bool folded;  // finish completes the fold (a plain stream, no token limit)
};
void PrintTo(const finish_case& c, std::ostream* os) {
  *os << c.name;
}

class finish_table : public ::testing::TestWithParam<finish_case> {};

// Streams in 3-byte chunks; finishes; the concatenated deltas are the final message.
chat::message streamed(const chat::prepared& p, const std::string& output, bool token_limit,
                       finish_reason& reason, bool& folded) {
  session s(p, {.id_generator = [] { return std::string("call_x"); }});
  stream_outcome got;
  delta_checker deltas(got);
  for (std::size_t at = 0; at < output.size(); at += 3) {
    auto d = s.feed_copy(std::string_view(output).substr(at, 3));
    EXPECT_TRUE(d.has_value()) << d.error().to_string();
    if (!d) return {};
    for (const auto& x : *d) deltas.add(x);
  }
  auto f = s.finish({.hit_token_limit = token_limit});
  EXPECT_TRUE(f.has_value()) << f.error().to_string();
  if (!f) return {};
  for (const auto& x : f->deltas) deltas.add(x);
  reason = f->reason;
  folded = s.stats().finish_folded;
  EXPECT_TRUE(got.violations.empty()) << got.violations.front();
  EXPECT_EQ(message_difference(s.current(), f->message), "");
  EXPECT_EQ(message_difference(got.assembled, f->message), "");
  return f->message;
}

TEST_P(finish_table, either_way_the_message_of_parse) {
  const auto& c = GetParam();
  const auto p = make_prepared(c.make);
  auto one_shot = parse(p, c.output);
  ASSERT_TRUE(one_shot) << one_shot.error().to_string();
  finish_reason reason{};
  bool folded = false;
  const auto plain = streamed(p, c.output, false, reason, folded);
  EXPECT_EQ(message_difference(plain, *one_shot, /*compare_ids=*/false), "");
  EXPECT_EQ(reason, c.reason);
  EXPECT_EQ(folded, c.folded);
  // Under the token limit finish parses the whole output: the same message, not folded.
  const auto limited = streamed(p, c.output, true, reason, folded);
  EXPECT_EQ(message_difference(limited, *one_shot, false), "");
  EXPECT_FALSE(folded);
}

INSTANTIATE_TEST_SUITE_P(
    table, finish_table,
    ::testing::Values(
        finish_case{"content", json_native, "Just text <b>, no call.", finish_reason::stop, true},
        finish_case{"calls", json_native,
                    "[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}]",
                    finish_reason::tool_calls, true},
        finish_case{"tagged", tag_with_tagged,
                    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                    "</function>\n</tool_call>",
                    finish_reason::tool_calls, true},
        finish_case{"reasoning", reasoning_calls, "<think>hm</think>\nDone.", finish_reason::stop,
                    true}),
    [](const auto& tc) { return std::string(tc.param.name); });

// The token limit inside a call: the call is closed, finish_reason length; without the limit
// the same output is an error naming where it ends.
TEST(session_finish, token_limit_closes_the_open_call) {
  const auto p = make_prepared(json_native);
  const std::string cut = "[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"q\": \"ab";
  {
    session s(p);
    ASSERT_TRUE(s.feed(cut).has_value());
    auto f = s.finish({.hit_token_limit = true});
    ASSERT_TRUE(f.has_value()) << f.error().to_string();
    EXPECT_EQ(f->reason, finish_reason::length);
    ASSERT_EQ(f->message.tool_calls.size(), 1u);
    EXPECT_EQ(f->message.tool_calls[0].arguments, "{\"q\":\"ab\"}");
  }
  {
    session s(p);
    ASSERT_TRUE(s.feed(cut).has_value());
    auto f = s.finish();
    ASSERT_FALSE(f.has_value());
    EXPECT_EQ(f.error().code, base::errc::no_match);
    EXPECT_NE(f.error().message.find("ends inside"), std::string::npos) << f.error().to_string();
  }
}

TEST(session_finish, misuse_is_a_typed_error) {
  const auto p = make_prepared(json_native);
  session s(p);
  ASSERT_TRUE(s.feed("hello").has_value());
  ASSERT_TRUE(s.finish().has_value());
  auto again = s.finish();
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, base::errc::invalid_argument);
  auto fed = s.feed_copy("more");
  ASSERT_FALSE(fed.has_value());
  EXPECT_EQ(fed.error().code, base::errc::invalid_argument);
  // reset() starts a new response.
  s.reset();
  ASSERT_TRUE(s.feed("again").has_value());
  auto f = s.finish();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->message.content.value_or(""), "again");
}

}  // namespace
}  // namespace chatpeg::stream

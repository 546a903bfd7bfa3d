// Tests of stream::parse / parse_detailed with hand-built chat::prepared values: the parse
// prefix, errors re-based onto the output (offset, line:column, expected), truncated output
// (a distinct error, or with allow_truncated the partial message with closed arguments),
// the partial (streaming) mode, and matcher limits.
#include "chatpeg/stream/parse.h"

#include <gtest/gtest.h>

#include "message_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

TEST(Parse, CompleteOutputs) {
  struct parse_case {
    const char* name;
    std::function<peg::parser(peg::builder&)> make;
    std::string prefix;
    std::string output;
    expected_message expected;
  };
  const std::vector<parse_case> cases = {
      {"content", tag_with_json, "", "plain answer", {"plain answer"}},
      {"prefix_opens_reasoning",
       reasoning_calls,
       "<think>",
       "thinking…</think>answer",
       {"answer", "thinking…"}},
      {"prefix_and_call",
       reasoning_calls,
       "<think>",
       "r</think><tool_call>{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}</tool_call>",
       {std::nullopt, "r", {{"search", R"({"q":"x"})"}}}},
      {"tagged",
       tag_with_tagged,
       "",
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
       "</function>\n</tool_call>",
       {std::nullopt, std::nullopt, {{"get_weather", R"({"city":"Paris"})"}}}},
      {"pythonic",
       pythonic,
       "",
       "[search(q='a', n=(1, 2))]",
       {std::nullopt, std::nullopt, {{"search", R"({"q":"a","n":[1,2]})"}}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto p = make_prepared(c.make, c.prefix);
    auto msg = parse(p, c.output);
    ASSERT_TRUE(msg.has_value()) << msg.error().to_string();
    expect_message(*msg, c.expected);
    auto detailed = parse_detailed(p, c.output);
    ASSERT_TRUE(detailed.has_value());
    EXPECT_FALSE(detailed->truncated);
    EXPECT_FALSE(detailed->incomplete);
  }
}

TEST(Parse, MismatchIsNoMatchAtOffsetIntoOutput) {
  // The same bad text parsed with and without the prefix: offsets differ by the prefix size.
  const std::string rest =
      "r</think>ok\n<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>";
  auto without = make_prepared(reasoning_calls);
  auto with = make_prepared(reasoning_calls, "<think>");
  auto e1 = parse(without, "<think>" + rest);
  auto e2 = parse(with, rest);
  ASSERT_FALSE(e1.has_value());
  ASSERT_FALSE(e2.has_value());
  EXPECT_EQ(e1.error().code, base::errc::no_match);
  EXPECT_EQ(e2.error().code, base::errc::no_match);
  EXPECT_EQ(e1.error().where.offset, e2.error().where.offset + 7);
  EXPECT_LE(e2.error().where.offset, rest.size());
  EXPECT_GE(e2.error().where.offset, rest.find("<tool_call>"));
  EXPECT_EQ(e2.error().where.line, 2u);  // line:column are into the output
  EXPECT_FALSE(e2.error().expected.empty()) << e2.error().to_string();
}

TEST(Parse, ErrorInsidePrefixClampsToZero) {
  chat::prepared p;
  p.parser = build([](peg::builder& b) { return b.literal("<think>") + b.content(b.rest()); });
  p.parse_prefix = "<thinX";  // the prefix itself does not match
  auto r = parse(p, "abc");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::no_match);
  EXPECT_EQ(r.error().where.offset, 0u);
}

TEST(Parse, TruncatedOutputIsADistinctErrorOrAPartialMessage) {
  auto p = make_prepared(tag_with_tagged);
  const std::string output =
      "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Pa";
  auto err = parse(p, output);
  ASSERT_FALSE(err.has_value());
  EXPECT_EQ(err.error().code, base::errc::no_match);
  EXPECT_NE(err.error().message.find("output ends inside a tool call"), std::string::npos)
      << err.error().to_string();
  EXPECT_EQ(err.error().where.offset, output.size());

  auto kept = parse_detailed(p, output, {.allow_truncated = true});
  ASSERT_TRUE(kept.has_value()) << kept.error().to_string();
  EXPECT_TRUE(kept->truncated);
  expect_message(kept->message,
                 {"Checking.\n", std::nullopt, {{"get_weather", R"({"city":"São Pa"})"}}});
}

TEST(Parse, TruncatedReasoningIsNamed) {
  auto p = make_prepared(reasoning_calls, "<think>");
  auto err = parse(p, "still thinking");
  ASSERT_FALSE(err.has_value());
  EXPECT_NE(err.error().message.find("output ends inside the reasoning"), std::string::npos)
      << err.error().to_string();
  auto kept = parse(p, "still thinking", {.allow_truncated = true});
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->reasoning_content, std::optional<std::string>("still thinking"));
}

// Cut every output at every byte: the final parse either succeeds or, with allow_truncated,
// keeps the partial message — whose arguments are JSON objects extending the partial parse.
TEST(Parse, EveryCutIsSuccessOrTruncatedNeverMismatch) {
  struct cut_case {
    std::function<peg::parser(peg::builder&)> make;
    std::string output;
  };
  const std::vector<cut_case> cases = {
      {json_native,
       R"(Hi [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich", "n": [1, true]}}])"},
      {tag_with_tagged,
       "<tool_call>\n<function=search>\n<parameter=note>\nx \"y\" 🌍\n</parameter>\n"
       "<parameter=days>\n-1.5\n</parameter>\n</function>\n</tool_call>"},
      {pythonic, "[get_weather(city='Paris', opts={'a': (True, None)}), search()]"},
      {args_first, R"(<call><arg k="a">1</arg><name>search</name></call>)"},
  };
  for (const auto& c : cases) {
    auto p = make_prepared(c.make);
    for (std::size_t k = 0; k <= c.output.size(); ++k) {
      const std::string cut = c.output.substr(0, k);
      SCOPED_TRACE(cut);
      auto r = parse_detailed(p, cut, {.allow_truncated = true});
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      expect_valid_utf8(r->message);
      for (const auto& call : r->message.tool_calls) expect_object_json(call.arguments);
      auto streaming = parse(p, cut, {.partial = true});
      ASSERT_TRUE(streaming.has_value()) << streaming.error().to_string();
      expect_extends(*streaming, r->message);
      if (!r->truncated) {
        auto strict = parse(p, cut);
        EXPECT_TRUE(strict.has_value());
      }
    }
  }
}

TEST(Parse, PartialModeReportsIncomplete) {
  auto p = make_prepared(tag_with_json);
  auto r = parse_detailed(p, "Sure<function=search>{\"q\": \"ab", {.partial = true});
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_TRUE(r->incomplete);
  EXPECT_FALSE(r->truncated);
  ASSERT_EQ(r->message.tool_calls.size(), 1u);
  EXPECT_EQ(r->message.tool_calls[0].arguments, R"({"q":"ab)");
  EXPECT_EQ(r->message.content, std::optional<std::string>("Sure"));

  auto bad = parse(p, "Sure<function=search>]", {.partial = true});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, base::errc::no_match);
}

TEST(Parse, MissingParserIsInvalidArgument) {
  chat::prepared p;
  auto r = parse(p, "x");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::invalid_argument);
}

TEST(Parse, MatcherLimitsKeepTheirCode) {
  auto p = make_prepared(json_native);
  const std::string output = R"([TOOL_CALLS][{"name": "search", "arguments": {"q": [[[[1]]]]}}])";
  auto r = parse(p, output, {.matcher = {.max_steps = 20}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::limit_exceeded) << r.error().to_string();
}

}  // namespace
}  // namespace chatpeg::stream

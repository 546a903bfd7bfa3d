// Tests of stream::map_ast over hand-built parsers for every tool-call format: complete
// outputs give the expected message; every prefix of every output (lenient match) gives a
// message whose content, reasoning and arguments prefix the final ones, with names fixed once
// seen, valid UTF-8 throughout, and — closed as truncated — arguments that are JSON objects.
// Plus tag-contract errors and hand-written ASTs for the defensive paths.
#include "stream/mapper.h"

#include <gtest/gtest.h>

#include "chatpeg/peg/matcher.h"
#include "message_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

constexpr auto lenient = peg::match_flags::lenient | peg::match_flags::complete;

struct format_case {
  const char* name;
  std::function<peg::parser(peg::builder&)> make;
  std::string output;
  expected_message expected;
};

const std::vector<format_case>& format_cases() {
  static const std::vector<format_case> table = {
      {"json_native_content",
       json_native,
       "Hello there, héllo 世界 🌍",
       {"Hello there, héllo 世界 🌍"}},
      {"json_native_call",
       json_native,
       R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich 東京 🚀", "days": 3, )"
       R"("opts": {"a": [1, 2.5e3, true, null]}, "q": "say \"hi\"\n\u00e9"}}])",
       {std::nullopt,
        std::nullopt,
        {{"get_weather", R"({"city":"Zürich 東京 🚀","days":3,"opts":{"a":[1,2.5e3,true,null]},)"
                         R"("q":"say \"hi\"\né"})"}}}},
      {"json_native_parallel_with_id",
       json_native,
       R"(Let me check. [TOOL_CALLS][{"name": "get_weather", "id": "call_1", "arguments": {}}, )"
       R"({"name": "search", "arguments": {"q": "x"}}])",
       {"Let me check. ",
        std::nullopt,
        {{"get_weather", "{}", "call_1"}, {"search", R"({"q":"x"})"}}}},
      {"tag_with_json",
       tag_with_json,
       "I'll call.<function=get_weather>{\"city\": \"Paris\"}</function>\n"
       "<function=search>{ }</function>",
       {"I'll call.", std::nullopt, {{"get_weather", R"({"city":"Paris"})"}, {"search", "{}"}}}},
      {"tag_with_tagged",
       tag_with_tagged,
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo \"x\" \\ 🌍\nline 2\n"
       "</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=opts>\n"
       "{\"metric\": true, \"list\": [1, \"a\"]}\n</parameter>\n</function>\n</tool_call>",
       {std::nullopt,
        std::nullopt,
        {{"get_weather", R"({"city":"São Paulo \"x\" \\ 🌍\nline 2","days":3,)"
                         R"("opts":{"metric":true,"list":[1,"a"]}})"}}}},
      {"tag_with_tagged_parallel_empty",
       tag_with_tagged,
       "Checking.\n<tool_call>\n<function=search>\n<parameter=note>\n\n</parameter>\n"
       "</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n</function>\n</tool_call>",
       {"Checking.\n", std::nullopt, {{"search", R"({"note":""})"}, {"get_weather", "{}"}}}},
      {"pythonic",
       pythonic,
       R"([get_weather(city='Paris', days=3, opts={'metric': True, 'tags': ('a', "b\'c"), )"
       R"('none': None, 'x': [1, 2,]}), search(q="it's", s='line\nnext \x41 \u00e9 ü')])",
       {std::nullopt,
        std::nullopt,
        {{"get_weather", R"({"city":"Paris","days":3,"opts":{"metric":true,"tags":["a","b'c"],)"
                         R"("none":null,"x":[1,2]}})"},
         {"search", R"({"q":"it's","s":"line\nnext A é ü"})"}}}},
      {"pythonic_no_args",
       pythonic,
       "[search()]",
       {std::nullopt, std::nullopt, {{"search", "{}"}}}},
      {"pythonic_content", pythonic, "Just text (no call) ü", {"Just text (no call) ü"}},
      {"args_before_name_json",
       args_first,
       R"(Hi<call><args>{"a": 1, "b": "x"}</args><name>get_weather</name></call>)",
       {"Hi", std::nullopt, {{"get_weather", R"({"a":1,"b":"x"})"}}}},
      {"args_before_name_tagged",
       args_first,
       R"(<call><arg k="city">Köln</arg><arg k="q">a "b"</arg><name>search</name></call>)"
       R"(<call><name>get_weather</name></call>)",
       {std::nullopt,
        std::nullopt,
        {{"search", R"({"city":"Köln","q":"a \"b\""})"}, {"get_weather", "{}"}}}},
      {"reasoning_content_calls",
       reasoning_calls,
       "<think>Let me think… 🤔\nabout it</think>\n\nSure: <tool_call>\n"
       "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n"
       "<tool_call>{\"name\": \"search\", \"arguments\": {\"q\": \"é\"}}</tool_call>",
       {"Sure: ",
        "Let me think… 🤔\nabout it",
        {{"get_weather", R"({"city":"Oslo"})"}, {"search", R"({"q":"é"})"}}}},
      {"reasoning_content", reasoning_calls, "<think>r</think>answer 世界", {"answer 世界", "r"}},
      {"reasoning_only", reasoning_calls, "<think>r</think>", {"", "r"}},
  };
  return table;
}

class MapperFormats : public ::testing::TestWithParam<format_case> {};

base::result<chat::message> map_text(const peg::grammar& g, std::string_view text,
                                     peg::match_flags flags, map_options options,
                                     peg::match_status* status = nullptr) {
  auto r = peg::match(g, text, flags);
  if (status) *status = r.status;
  if (r.status == peg::match_status::fail) return r.error;
  return map_ast(g, r, text, options);
}

TEST_P(MapperFormats, CompleteOutputGivesExpectedMessage) {
  const auto& c = GetParam();
  auto g = build(c.make);
  ASSERT_TRUE(g);
  auto msg = map_text(*g, c.output, peg::match_flags::complete, {});
  ASSERT_TRUE(msg.has_value()) << msg.error().to_string();
  expect_message(*msg, c.expected);
  expect_valid_utf8(*msg);
}

// The streaming property: the message of every prefix extends to the next prefix's and to
// the final one (so a session can send suffix deltas), and closing it as truncated gives
// arguments that are JSON objects.
TEST_P(MapperFormats, EveryPrefixExtendsToTheFinalMessage) {
  const auto& c = GetParam();
  auto g = build(c.make);
  ASSERT_TRUE(g);
  auto final_msg = map_text(*g, c.output, peg::match_flags::complete, {});
  ASSERT_TRUE(final_msg.has_value()) << final_msg.error().to_string();
  chat::message previous;
  for (std::size_t k = 0; k <= c.output.size(); ++k) {
    SCOPED_TRACE("prefix " + std::to_string(k) + ": " + c.output.substr(0, k));
    const std::string prefix = c.output.substr(0, k);
    peg::match_status status{};
    auto msg = map_text(*g, prefix, lenient, {.partial = true}, &status);
    ASSERT_TRUE(msg.has_value()) << msg.error().to_string();
    expect_valid_utf8(*msg);
    expect_extends(*msg, *final_msg);
    expect_extends(previous, *msg);
    previous = *msg;

    auto closed = map_text(*g, prefix, lenient, {.partial = true, .close_open_calls = true});
    ASSERT_TRUE(closed.has_value()) << closed.error().to_string();
    ASSERT_EQ(closed->tool_calls.size(), msg->tool_calls.size());
    for (std::size_t i = 0; i < closed->tool_calls.size(); ++i) {
      expect_object_json(closed->tool_calls[i].arguments);
      EXPECT_TRUE(is_prefix(msg->tool_calls[i].arguments, closed->tool_calls[i].arguments));
    }
  }
  // The whole output through the lenient path equals the complete parse.
  auto whole = map_text(*g, c.output, lenient, {.partial = true});
  ASSERT_TRUE(whole.has_value());
  expect_extends(*final_msg, *whole);
}

INSTANTIATE_TEST_SUITE_P(Formats, MapperFormats, ::testing::ValuesIn(format_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// Markers cut anywhere: no prefix of "[TOOL_CALLS]" or "<tool_call>" ever reaches content.
TEST(Mapper, NoMarkerPrefixInContent) {
  struct marker_case {
    std::function<peg::parser(peg::builder&)> make;
    std::string text;
    std::string marker;
  };
  const std::vector<marker_case> cases = {
      {json_native, "abc ü", "[TOOL_CALLS]"},
      {reasoning_calls, "<think>x</think>abc ü", "<tool_call>"},
      {tag_with_json, "abc", "<function="},
  };
  for (const auto& mc : cases) {
    auto g = build(mc.make);
    ASSERT_TRUE(g);
    for (std::size_t k = 1; k < mc.marker.size(); ++k) {
      const std::string text = mc.text + mc.marker.substr(0, k);
      auto msg = map_text(*g, text, lenient, {.partial = true});
      ASSERT_TRUE(msg.has_value()) << msg.error().to_string();
      const std::string content = msg->content.value_or("");
      EXPECT_EQ(content.find(mc.marker.substr(0, 1)), std::string::npos) << text;
    }
  }
}

// A name is reported only when complete; the call appears with it and arguments follow.
TEST(Mapper, CallAppearsOnlyWithItsWholeName) {
  auto g = build(tag_with_json);
  ASSERT_TRUE(g);
  const std::string out = "<function=get_weather>{\"city\": \"Paris\"}</function>";
  for (std::size_t k = 0; k < out.size(); ++k) {
    auto msg = map_text(*g, out.substr(0, k), lenient, {.partial = true});
    ASSERT_TRUE(msg.has_value());
    const bool named = k >= std::string("<function=get_weather>").size();
    ASSERT_EQ(msg->tool_calls.size(), named ? 1u : 0u) << k;
    if (named) {
      EXPECT_EQ(msg->tool_calls[0].name, "get_weather");
    }
  }
}

TEST(Mapper, ArgumentsBeforeNameAreBufferedNotLost) {
  auto g = build(args_first);
  ASSERT_TRUE(g);
  const std::string head = R"(<call><arg k="city">Köln</arg><name>)";
  auto before = map_text(*g, head, lenient, {.partial = true});
  ASSERT_TRUE(before.has_value());
  EXPECT_TRUE(before->tool_calls.empty());
  auto after = map_text(*g, head + "search</name>", lenient, {.partial = true});
  ASSERT_TRUE(after.has_value());
  ASSERT_EQ(after->tool_calls.size(), 1u);
  EXPECT_EQ(after->tool_calls[0].arguments, R"({"city":"Köln")");
  // The closing marker cut short does not close the call.
  auto cut = map_text(*g, head + "search</name></ca", lenient, {.partial = true});
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->tool_calls[0].arguments, R"({"city":"Köln")");
}

TEST(Mapper, PendingQuoteAndHeldBackDelimiter) {
  auto g = build(tag_with_tagged);
  ASSERT_TRUE(g);
  const std::string head = "<tool_call>\n<function=search>\n<parameter=city>\nBei";
  auto msg = map_text(*g, head, lenient, {.partial = true});
  ASSERT_TRUE(msg.has_value());
  ASSERT_EQ(msg->tool_calls.size(), 1u);
  EXPECT_EQ(msg->tool_calls[0].arguments, R"({"city":"Bei)");
  msg = map_text(*g, head + "jing\n</param", lenient, {.partial = true});
  ASSERT_TRUE(msg.has_value());
  EXPECT_EQ(msg->tool_calls[0].arguments, R"({"city":"Beijing)");
  msg = map_text(*g, head + "jing\n</param", lenient, {.partial = true, .close_open_calls = true});
  ASSERT_TRUE(msg.has_value());
  EXPECT_EQ(msg->tool_calls[0].arguments, R"({"city":"Beijing"})");
}

TEST(Mapper, ContentNullBesideToolCallsEmptyOtherwise) {
  auto g = build(json_native);
  ASSERT_TRUE(g);
  auto calls = map_text(*g, R"([TOOL_CALLS][{"name": "search", "arguments": {}}])",
                        peg::match_flags::complete, {});
  ASSERT_TRUE(calls.has_value());
  EXPECT_FALSE(calls->content.has_value());
  EXPECT_FALSE(calls->reasoning_content.has_value());
  auto empty = map_text(*g, "", peg::match_flags::complete, {});
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->content, std::optional<std::string>(""));
}

// ASTs that break the tag contract are internal errors, not crashes or silent garbage.
TEST(Mapper, TagContractViolationsAreErrors) {
  struct bad_case {
    const char* name;
    std::function<peg::parser(peg::builder&)> make;
    std::string input;
  };
  using peg::tag;
  const std::vector<bad_case> cases = {
      {"value_without_name",
       [](peg::builder& b) {
         return b.tag(tag::tool, b.tag(tag::tool_name, b.literal("f")) +
                                     b.tag(tag::tool_arg_value, b.json_value()));
       },
       "f1"},
      {"string_value_without_name",
       [](peg::builder& b) {
         return b.tag(tag::tool, b.tag(tag::tool_name, b.literal("f")) +
                                     b.tag(tag::tool_arg_string_value, b.rest()));
       },
       "fxyz"},
      {"args_then_arg_name",
       [](peg::builder& b) {
         return b.tag(tag::tool, b.tag(tag::tool_name, b.literal("f")) +
                                     b.tag(tag::tool_args, b.json_object()) +
                                     b.tag(tag::tool_arg_name, b.literal("a")));
       },
       "f{}a"},
      {"call_without_name",
       [](peg::builder& b) { return b.tag(tag::tool, b.tag(tag::tool_args, b.json_object())); },
       "{}"},
      {"args_not_object",
       [](peg::builder& b) {
         return b.tag(tag::tool, b.tag(tag::tool_name, b.literal("f")) +
                                     b.tag(tag::tool_args, b.json_value()));
       },
       "f[1]"},
      {"arg_value_not_json",
       [](peg::builder& b) {
         return b.tag(tag::tool, b.tag(tag::tool_name, b.literal("f")) +
                                     b.tag(tag::tool_arg_name, b.literal("a")) +
                                     b.tag(tag::tool_arg_value, b.literal("[1 2]")));
       },
       "fa[1 2]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto g = build(c.make);
    ASSERT_TRUE(g);
    auto msg = map_text(*g, c.input, peg::match_flags::complete, {});
    ASSERT_FALSE(msg.has_value());
    EXPECT_EQ(msg.error().code, base::errc::internal_error) << msg.error().to_string();
  }
}

// Defensive paths: tool-open without a tool node starts calls; a tool-arg-value holding raw
// text becomes a string; a second name does not rename a call; nested text tags count once.
TEST(Mapper, DefensiveTagShapes) {
  using peg::tag;
  auto g = build([](peg::builder& b) {
    auto call = b.tag(tag::tool_open, b.literal("<c>")) + b.tag(tag::tool_name, b.literal("f")) +
                b.tag(tag::tool_name, b.literal("g")) + b.tag(tag::tool_arg_name, b.literal("a")) +
                b.literal("=") + b.tag(tag::tool_arg_value, b.until("</c>")) +
                b.tag(tag::tool_close, b.literal("</c>"));
    return b.content(b.literal("x") + b.content(b.literal("y"))) + b.one_or_more(call) + b.end();
  });
  ASSERT_TRUE(g);
  auto msg = map_text(*g, "xy<c>fga=hello world</c><c>fga=3</c>", peg::match_flags::complete, {});
  ASSERT_TRUE(msg.has_value()) << msg.error().to_string();
  EXPECT_EQ(msg->content, std::optional<std::string>("xy"));
  ASSERT_EQ(msg->tool_calls.size(), 2u);
  EXPECT_EQ(msg->tool_calls[0].name, "f");
  EXPECT_EQ(msg->tool_calls[0].arguments, R"({"a":"hello world"})");
  EXPECT_EQ(msg->tool_calls[1].arguments, R"({"a":3})");
}

TEST(Mapper, ReusableMapperResetsBetweenMaps) {
  auto g = build(tag_with_json);
  ASSERT_TRUE(g);
  mapper mp;
  const std::string a = "<function=search>{\"q\": 1}</function>";
  const std::string b = "hello";
  auto ra = peg::match(*g, a, peg::match_flags::complete);
  auto rb = peg::match(*g, b, peg::match_flags::complete);
  auto ma = mp.map(*g, ra, a);
  auto mb = mp.map(*g, rb, b);
  ASSERT_TRUE(ma.has_value() && mb.has_value());
  EXPECT_EQ(ma->tool_calls.size(), 1u);
  EXPECT_TRUE(mb->tool_calls.empty());
  EXPECT_EQ(mb->content, std::optional<std::string>("hello"));
}

}  // namespace
}  // namespace chatpeg::stream

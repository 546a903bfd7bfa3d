// stream::session when a call whose header was already sent stops being a call: the grammar
// reads marker-like text that does not form a valid call as content (chat's generator does),
// so the re-parse drops the announced call. That is output that stopped matching what was
// announced: a typed no_match pointing at the call's start (the gateway's fallback delivers the
// rest from unsent_from()), never an internal error. Fuzz finding (stream_session).
#include <gtest/gtest.h>

#include <string>

#include "chatpeg/base/file.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"

#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

// Calls or, failing that, one byte of content up to the next opener (chat's shape).
parser calls_or_content(builder& b) {
  auto call = b.tag(tag::tool, b.tag(tag::tool_open, b.literal("<function=")) +
                                   b.atomic(b.tag(tag::tool_name, names(b)) + b.literal(">")) +
                                   b.tag(tag::tool_args, b.json_object()) +
                                   b.tag(tag::tool_close, b.literal("</function>")));
  auto piece = b.negate(call) + b.content(b.any() + b.until("<function="));
  return b.zero_or_more(b.choice({call, piece})) + b.end();
}

// A template of the source tree (its path from there) prepared for a request offering
// get_weather.
base::result<chat::prepared> prepared_with_a_tool(const std::string& path) {
  auto source = base::read_file(std::string(CHATPEG_SOURCE_DIR) + "/" + path);
  if (!source) return source.error();
  auto t = chat::chat_template::create(*source, {.file = path});
  if (!t) return t.error();
  auto req = chat::request::from_json(*json::parse(R"({"messages": [{"role": "user",
      "content": "hi"}], "tools": [{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]})"));
  if (!req) return req.error();
  return chat::prepare(**t, *req);
}

TEST(SessionBrokenCall, AnnouncedCallThatStopsMatchingIsNoMatchAtItsStart) {
  auto p = make_prepared(calls_or_content);
  const std::string output = "Hi <function=search>{\"q\": \"a\x06\"}</function>";
  for (std::size_t chunk : {1u, 4u, 7u}) {
    SCOPED_TRACE(chunk);
    session s(p);
    bool header_sent = false;
    std::optional<base::error> failed;
    for (std::size_t at = 0; at < output.size() && !failed; at += chunk) {
      auto r = s.feed_copy(std::string_view(output).substr(at, chunk));
      if (!r) {
        failed = r.error();
        break;
      }
      for (const auto& d : *r) header_sent = header_sent || !d.tool_calls.empty();
    }
    if (!failed) {
      auto f = s.finish();
      ASSERT_FALSE(f.has_value()) << "the announced call cannot be taken back";
      failed = f.error();
    }
    ASSERT_TRUE(header_sent);
    EXPECT_EQ(failed->code, base::errc::no_match) << failed->to_string();
    EXPECT_EQ(failed->where.offset, 3u) << failed->to_string();
    EXPECT_EQ(s.unsent_from(), 3u);
  }
}

TEST(SessionBrokenCall, ALaterCallWithTheSameNameTakingItsIndexIsNoMatchNotARetraction) {
  // The announced call breaks; read again, a later call with the same name (and shorter
  // arguments) becomes call 0. Fuzz finding (stream_session): was errc::internal_error.
  auto p = make_prepared(calls_or_content);
  session s(p);
  auto first = s.feed_copy("Hi <function=search>{\"q\": \"aaaa");
  ASSERT_TRUE(first.has_value()) << first.error().to_string();
  ASSERT_EQ(s.current().tool_calls.size(), 1u);
  auto second = s.feed_copy("\"x} <function=search>{\"q\": \"b\"}</function>");
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, base::errc::no_match) << second.error().to_string();
  EXPECT_EQ(second.error().expected, "the rest of the announced call");
  EXPECT_EQ(s.unsent_from(), 3u);
}

// The announced call of the fuzz input below reads, leniently, as one call whose last argument
// runs to the end; the complete parse reads the whole output otherwise (content and two other
// calls). finish() reports that the announced call stopped matching (a typed no_match the
// gateway turns into content), not a refused retraction.
TEST(SessionBrokenCall, ACallTheCompleteParseReadsOtherwiseIsNoMatchAtFinish) {
  auto p = prepared_with_a_tool("fuzz/templates/tagged_args.jinja");
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  static constexpr char kBrokenOutput[] =
      "<tool_call>\n<functionl;\xFF\xFF`0\x00\xAC"
      "e\xF8>\n<function=get_weather>\n<parameter=}itnctter>\n<pazameter=days>\n3\n</"
      "para\x9E\x9E\x9E\xD4\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9C\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E"
      "\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E>\n<function=get_weather>\n</"
      "function><parameter=}itncll;\xFF\xFF`0\x00\xAC"
      "e\xF8>\n<function=get_weather>\n</function><parameter=}itnctter>\n<pazameter={\"na>\n3\n</"
      "para\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E\x9E</"
      "tool_\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x00\x00\x00\x00\x00\x00\x00"
      "9\xFF\xFF\x01\x00"
      "c[\n</function>\n</tool_call>";
  const std::string output(kBrokenOutput, sizeof(kBrokenOutput) - 1);
  session s(*p);
  auto fed = s.feed_copy(output);
  ASSERT_TRUE(fed.has_value()) << fed.error().to_string();
  ASSERT_EQ(s.current().tool_calls.size(), 1u);
  auto f = s.finish();
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().code, base::errc::no_match) << f.error().to_string();
  EXPECT_EQ(f.error().expected, "the rest of the announced call");
}

// The example template's calls with their arguments as a JSON string (serialized-arguments)
// that holds no whole object. The call was announced by its name; when the string closes, the
// arguments are refused: a typed no_match at the arguments at every chunking, as the one-shot
// parse says, never an internal error. Fuzz finding (stream_session).
TEST(SessionBrokenCall, SerializedArgumentsWithoutAWholeObjectAreNoMatch) {
  auto p = prepared_with_a_tool("examples/chatml_tools.jinja");
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  const std::string output =
      "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \" {\\\"c\"}\n"
      "</tool_call>";
  const std::size_t arguments_at = output.find("\" {");
  auto once = parse(*p, output);
  ASSERT_FALSE(once.has_value());
  EXPECT_EQ(once.error().code, base::errc::no_match) << once.error().to_string();
  EXPECT_EQ(once.error().where.offset, arguments_at) << once.error().to_string();
  for (std::size_t chunk : {1u, 3u, 1000u}) {
    SCOPED_TRACE(chunk);
    session s(*p);
    std::optional<base::error> failed;
    for (std::size_t at = 0; at < output.size() && !failed; at += chunk) {
      auto r = s.feed_copy(std::string_view(output).substr(at, chunk));
      if (!r) failed = r.error();
    }
    if (!failed) {
      auto f = s.finish();
      ASSERT_FALSE(f.has_value());
      failed = f.error();
    }
    EXPECT_EQ(failed->code, base::errc::no_match) << failed->to_string();
    // What was sent (the text before the call) stays sent; in one piece nothing was.
    EXPECT_EQ(s.unsent_from(), chunk < output.size() ? output.find("<tool_call>") : 0u);
  }
}

}  // namespace
}  // namespace chatpeg::stream

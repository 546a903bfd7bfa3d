// Tests of stream::session over the hand-built parsers of test_grammars.h: for every format
// and every chunking (1 byte … whole, random) the deltas add up to the final message, which
// equals stream::parse; current() after every byte equals the one-shot lenient parse of that
// prefix (the incremental fold agrees with the full fold); OpenAI delta order and ids; held
// back markers and UTF-8; errors (no_match with offset, truncation, retraction, token ids);
// the finish reason; reset(); and a prepared request without a parser (plain content).
#include "chatpeg/stream/session.h"

#include <gtest/gtest.h>

#include "chatpeg/base/file.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/stream/parse.h"
#include "message_checks.h"
#include "stream_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

session_options counting_ids() {
  auto n = std::make_shared<int>(0);
  return {.id_generator = [n] { return "id" + std::to_string((*n)++); }};
}

struct session_case {
  const char* name;
  std::function<peg::parser(peg::builder&)> make;
  std::string prefix;
  std::string output;
  expected_message expected;
  finish_reason reason;
};

const std::vector<session_case>& session_cases() {
  static const std::vector<session_case> table = {
      {"content_utf8",
       tag_with_json,
       "",
       "Héllo 世界 🌍 <not a call> done",
       {"Héllo 世界 🌍 <not a call> done"},
       finish_reason::stop},
      {"reasoning_then_call",
       reasoning_calls,
       "<think>",
       "Let me think… 🤔</think>Sure.\n<tool_call>{\"name\": \"search\", \"arguments\": "
       "{\"q\": \"a \\\"b\\\" ü\", \"n\": [1, 2.5, true, null]}}</tool_call>",
       {"Sure.\n",
        "Let me think… 🤔",
        {{"search", R"({"q":"a \"b\" ü","n":[1,2.5,true,null]})"}}},
       finish_reason::tool_calls},
      {"json_native_parallel_with_model_id",
       json_native,
       "",
       R"(Checking. [TOOL_CALLS][{"name": "get_weather", "id": "abc123", "arguments": )"
       R"({"city": "Zürich"}}, {"name": "search", "arguments": {}}])",
       {"Checking. ",
        std::nullopt,
        {{"get_weather", R"({"city":"Zürich"})", "abc123"}, {"search", "{}"}}},
       finish_reason::tool_calls},
      {"tagged_raw_strings",
       tag_with_tagged,
       "",
       "Calling.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSão \"Paulo\" \\ 🌍\n"
       "line 2\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=opts>\n"
       "{\"metric\": true, \"list\": [1, \"a\"]}\n</parameter>\n</function>\n</tool_call>\n"
       "<tool_call>\n<function=search>\n<parameter=note>\nx\n</parameter>\n</function>\n"
       "</tool_call>",
       {"Calling.\n",
        std::nullopt,
        {{"get_weather",
          R"({"city":"São \"Paulo\" \\ 🌍\nline 2","days":3,"opts":{"metric":true,"list":[1,"a"]}})"},
         {"search", R"({"note":"x"})"}}},
       finish_reason::tool_calls},
      // "city" then a byte that starts a 2-byte sequence: no completion of it is ">", so the
      // declared name "city" is out while the sequence is still incomplete.
      {"undeclared_name_with_a_broken_sequence",
       tag_with_tagged_undeclared,
       "",
       "<tool_call>\n<function=get_weather>\n<parameter=city\xC5\nx>\nParis\n</parameter>\n"
       "<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>",
       {std::nullopt,
        std::nullopt,
        {{"get_weather", "{\"city\xEF\xBF\xBD\\nx\":\"Paris\",\"city\":\"Rome\"}"}}},
       finish_reason::tool_calls},
      // "city" then a newline reads as the declared name with space before its ">" until "P"
      // comes: the object's opener waits with the first key, so nothing is taken back.
      {"undeclared_name_that_starts_as_a_declared_one",
       tag_with_tagged_undeclared,
       "",
       "<tool_call>\n<function=get_weather>\n<parameter=city\nParis>\nx\n</parameter>\n"
       "</function>\n</tool_call>",
       {std::nullopt, std::nullopt, {{"get_weather", "{\"city\\nParis\":\"x\"}"}}},
       finish_reason::tool_calls},
      // Text, a call, text around a '{' that starts no call, a call cut into the text.
      {"text_around_bare_calls",
       bare_json,
       "",
       "Use [1] and { x }. {\"name\": \"search\", \"arguments\": {\"q\": \"{[\"}} then "
       "{\"a\": 1} {{\"name\": \"get_weather\", \"arguments\": {}}",
       {"Use [1] and { x }. then {\"a\": 1} {",
        std::nullopt,
        {{"search", R"({"q":"{["})"}, {"get_weather", "{}"}}},
       finish_reason::tool_calls},
      {"pythonic",
       pythonic,
       "",
       "[get_weather(city='Paris', days=3, opts={'a': (1, None)}), search()]",
       {std::nullopt,
        std::nullopt,
        {{"get_weather", R"({"city":"Paris","days":3,"opts":{"a":[1,null]}})"}, {"search", "{}"}}},
       finish_reason::tool_calls},
      {"args_before_name",
       args_first,
       "",
       "ok<call><arg k=\"city\">Ro\"me</arg><arg k=\"n\">2</arg><name>get_weather</name></call>"
       "<call><args>{\"q\": 1}</args><name>search</name></call>",
       {"ok",
        std::nullopt,
        {{"get_weather", R"({"city":"Ro\"me","n":"2"})"}, {"search", R"({"q":1})"}}},
       finish_reason::tool_calls},
  };
  return table;
}

class SessionFormats : public ::testing::TestWithParam<session_case> {};

TEST_P(SessionFormats, EveryChunkingAddsUpToTheOneShotParse) {
  const auto& c = GetParam();
  auto p = make_prepared(c.make, c.prefix);
  auto reference = parse(p, c.output);
  ASSERT_TRUE(reference.has_value()) << reference.error().to_string();
  std::vector<std::vector<std::size_t>> splits;
  for (std::size_t n : {1, 2, 3, 5, 7, 64, 0}) splits.push_back(fixed_chunks(c.output.size(), n));
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    splits.push_back(random_chunks(c.output.size(), seed));
  }
  std::optional<chat::message> first;
  for (const auto& chunks : splits) {
    SCOPED_TRACE("chunks " + std::to_string(chunks.size()));
    auto out = run_stream(p, c.output, chunks, {}, true, counting_ids());
    ASSERT_TRUE(out.ok) << out.error.to_string();
    for (const auto& v : out.violations) ADD_FAILURE() << v;
    EXPECT_EQ(out.reason, c.reason);
    expect_message(out.final_message, [&] {
      expected_message want = c.expected;
      for (std::size_t i = 0; i < want.calls.size(); ++i) {
        if (want.calls[i].id.empty()) want.calls[i].id = out.final_message.tool_calls[i].id;
      }
      return want;
    }());
    EXPECT_EQ(message_difference(out.final_message, *reference, /*compare_ids=*/false), "");
    if (first) {
      EXPECT_EQ(message_difference(out.final_message, *first), "");
    } else {
      first = out.final_message;
    }
  }
}

TEST_P(SessionFormats, CurrentAfterEveryByteIsTheLenientParseOfThePrefix) {
  const auto& c = GetParam();
  auto p = make_prepared(c.make, c.prefix);
  session s(p);
  for (std::size_t i = 0; i < c.output.size(); ++i) {
    auto r = s.feed_copy(std::string_view(c.output).substr(i, 1));
    ASSERT_TRUE(r.has_value()) << i << ": " << r.error().to_string();
    auto lenient = parse(p, std::string_view(c.output).substr(0, i + 1), {.partial = true});
    ASSERT_TRUE(lenient.has_value());
    // The same message, except that a call's header may still wait for the model's id (the
    // grammar can carry one): then the last call is missing from current().
    chat::message want = *lenient;
    if (s.current().tool_calls.size() + 1 == want.tool_calls.size()) want.tool_calls.pop_back();
    EXPECT_EQ(message_difference(s.current(), want, /*compare_ids=*/false), "")
        << "after " << (i + 1) << " bytes";
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, SessionFormats, ::testing::ValuesIn(session_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Session, HeaderThenFragmentsWithGeneratedStableIds) {
  auto p = make_prepared(tag_with_json);
  session s(p, counting_ids());
  std::vector<delta> all;
  for (std::string_view chunk : {"<function=get_we", "ather>{\"ci", "ty\": \"Pa", "ris\"}</fun",
                                 "ction><function=search>{}", "</function>"}) {
    auto r = s.feed_copy(chunk);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    all.insert(all.end(), r->begin(), r->end());
  }
  auto f = s.finish();
  ASSERT_TRUE(f.has_value());
  all.insert(all.end(), f->deltas.begin(), f->deltas.end());
  std::vector<std::string> lines;
  for (const auto& d : all) lines.push_back(json::dump(d.to_json()));
  const std::vector<std::string> want = {
      R"({"tool_calls":[{"index":0,"id":"id0","type":"function","function":{"name":"get_weather","arguments":""}}]})",
      // A key waits for the first byte of its value.
      R"({"tool_calls":[{"index":0,"function":{"arguments":"{"}}]})",
      R"({"tool_calls":[{"index":0,"function":{"arguments":"\"city\":\"Pa"}}]})",
      R"({"tool_calls":[{"index":0,"function":{"arguments":"ris\"}"}}]})",
      R"({"tool_calls":[{"index":1,"id":"id1","type":"function","function":{"name":"search","arguments":""}}]})",
      R"({"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]})",
  };
  EXPECT_EQ(lines, want);
  EXPECT_EQ(f->reason, finish_reason::tool_calls);
  ASSERT_EQ(f->message.tool_calls.size(), 2u);
  EXPECT_EQ(f->message.tool_calls[0].id, "id0");
  EXPECT_EQ(f->message.tool_calls[1].id, "id1");
  EXPECT_EQ(s.current().tool_calls[1].id, "id1");
}

TEST(Session, DefaultIdsAreCallPlus24Alphanumerics) {
  auto p = make_prepared(tag_with_json);
  session s(p);
  ASSERT_TRUE(s.feed("<function=search>{}</function>").has_value());
  auto f = s.finish();
  ASSERT_TRUE(f.has_value());
  const std::string id = f->message.tool_calls.at(0).id;
  ASSERT_EQ(id.size(), 5u + 24u) << id;
  EXPECT_EQ(id.substr(0, 5), "call_");
  for (char ch : id.substr(5)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch))) << id;
}

TEST(Session, ModelIdWaitsForTheHeader) {
  // The grammar can carry an id after the name: the header waits until it is decided.
  auto p = make_prepared(json_native);
  session s(p, counting_ids());
  auto r1 = s.feed_copy(R"([TOOL_CALLS][{"name": "search", )");
  ASSERT_TRUE(r1.has_value());
  EXPECT_TRUE(s.current().tool_calls.empty());
  auto r2 = s.feed_copy(R"("id": "m1", "arguments": {"q": )");
  ASSERT_TRUE(r2.has_value());
  ASSERT_EQ(s.current().tool_calls.size(), 1u);
  EXPECT_EQ(s.current().tool_calls[0].id, "m1");
  auto r3 = s.feed_copy(R"("x"}}])");
  ASSERT_TRUE(r3.has_value());
  auto f = s.finish();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->message.tool_calls[0].id, "m1");
  EXPECT_EQ(f->message.tool_calls[0].arguments, R"({"q":"x"})");
}

TEST(Session, PartialMarkersAndUtf8AreHeldBack) {
  struct step {
    std::string chunk;
    std::string content;  // content delta expected from this feed ("" = none)
  };
  const std::vector<step> steps = {
      {"Hi <tool", "Hi "},     {"_ca", ""},       {"t> caf\xC3", "<tool_cat> caf"},
      {"\xA9 \xF0\x9F", "é "}, {"\x8C\x8D", "🌍"}, {"<", ""},
  };
  auto p = make_prepared(tag_with_tagged);
  session s(p);
  for (const auto& st : steps) {
    auto r = s.feed_copy(st.chunk);
    ASSERT_TRUE(r.has_value());
    std::string got;
    for (const auto& d : *r) got += d.content;
    EXPECT_EQ(got, st.content) << json::quote(st.chunk);
  }
  auto f = s.finish();
  ASSERT_TRUE(f.has_value()) << f.error().to_string();
  ASSERT_EQ(f->deltas.size(), 1u);
  EXPECT_EQ(f->deltas[0].content, "<");
  EXPECT_EQ(f->message.content, "Hi <tool_cat> café 🌍<");
}

TEST(Session, MismatchIsNoMatchWithOffsetAndKeepsWhatWasSent) {
  auto p = make_prepared(reasoning_calls, "<think>");
  session s(p);
  auto r1 = s.feed_copy("r</think>ok\n");
  ASSERT_TRUE(r1.has_value());
  const std::string bad = "<tool_call>{\"name\": \"nope\"";
  auto r2 = s.feed_copy(bad);
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().code, base::errc::no_match);
  // The unknown name starts at byte 12 + 21 of the model output (the prefix is not counted).
  EXPECT_EQ(r2.error().where.offset, 12u + 21u) << r2.error().to_string();
  EXPECT_EQ(s.current().reasoning_content, "r");
  EXPECT_EQ(s.current().content, "ok\n");
  EXPECT_EQ(s.received(), 12u + bad.size());
}

TEST(Session, TruncationKeepsThePartialCallWithClosedArguments) {
  auto p = make_prepared(tag_with_tagged);
  const std::string output =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar\"is\n</parameter>\n"
      "<parameter=opts>\n{\"a\": [1, tr";
  auto cut = run_stream(p, output, fixed_chunks(output.size(), 3), {.hit_token_limit = true});
  ASSERT_TRUE(cut.ok) << cut.error.to_string();
  for (const auto& v : cut.violations) ADD_FAILURE() << v;
  EXPECT_EQ(cut.reason, finish_reason::length);
  ASSERT_EQ(cut.final_message.tool_calls.size(), 1u);
  EXPECT_EQ(cut.final_message.tool_calls[0].arguments,
            R"({"city":"Par\"is","opts":{"a":[1,true]}})");
  // Without the token limit the same output is an error (it ends inside a call).
  auto err = run_stream(p, output, fixed_chunks(output.size(), 3));
  ASSERT_FALSE(err.ok);
  EXPECT_TRUE(err.error_in_finish);
  EXPECT_EQ(err.error.code, base::errc::no_match);
  EXPECT_EQ(err.error.where.offset, output.size());
}

TEST(Session, TokenLimitOnCompleteOutputIsLength) {
  auto p = make_prepared(tag_with_json);
  auto out = run_stream(p, "just text", fixed_chunks(9, 2), {.hit_token_limit = true});
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(out.reason, finish_reason::length);
  EXPECT_EQ(out.final_message.content, "just text");
}

TEST(Session, RetractionIsAnInternalErrorAndNothingIsSent) {
  // Lenient reading of "ab" is content (waiting for "cd"); "abx" reads as reasoning.
  auto p = make_prepared([](peg::builder& b) {
    return (b.content(b.literal("ab") + b.literal("cd")) | b.reasoning(b.rest())) + b.end();
  });
  session s(p);
  auto r1 = s.feed_copy("ab");
  ASSERT_TRUE(r1.has_value());
  ASSERT_EQ(r1->size(), 1u);
  EXPECT_EQ((*r1)[0].content, "ab");
  auto r2 = s.feed_copy("x");
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().code, base::errc::internal_error);
  EXPECT_EQ(s.current().content, "ab");
  EXPECT_FALSE(s.current().reasoning_content.has_value());
  auto f = s.finish();
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().code, base::errc::internal_error);
}

TEST(Session, ChoiceThatChangesItsMindWithoutRetractingIsFine) {
  // "[" could start calls; "[1" turns out to be content: nothing was sent for the call.
  auto p = make_prepared(pythonic);
  auto out = run_stream(p, "[1, 2]", fixed_chunks(6, 1));
  ASSERT_TRUE(out.ok) << out.error.to_string();
  for (const auto& v : out.violations) ADD_FAILURE() << v;
  EXPECT_EQ(out.final_message.content, "[1, 2]");
}

TEST(Session, TokenIdsMustMatchTheChunk) {
  auto p = make_prepared(tag_with_json);
  session s(p);
  const std::vector<std::int32_t> ok = {15, -1, -1, 7};
  auto r1 = s.feed_copy("Hell", ok);
  ASSERT_TRUE(r1.has_value());
  const std::vector<std::int32_t> short_ids = {3};
  auto r2 = s.feed_copy("o!", short_ids);
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().code, base::errc::invalid_argument);
  EXPECT_EQ(s.received(), 4u);  // the rejected chunk was not taken
  ASSERT_TRUE(s.feed("o!").has_value());
  auto f = s.finish();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->message.content, "Hello!");
}

TEST(Session, ResetStartsANewResponse) {
  auto p = make_prepared(reasoning_calls, "<think>");
  session s(p, counting_ids());
  const std::string output =
      "a</think>b<tool_call>{\"name\": \"search\", \"arguments\": {}}</tool_call>";
  std::optional<chat::message> first;
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(s.feed(output).has_value());
    auto f = s.finish();
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->message.reasoning_content, "a");
    EXPECT_EQ(f->message.content, "b");
    ASSERT_EQ(f->message.tool_calls.size(), 1u);
    EXPECT_EQ(f->message.tool_calls[0].id, "id" + std::to_string(round));
    s.reset();
    EXPECT_EQ(s.received(), 0u);
    EXPECT_FALSE(s.current().content.has_value());
  }
}

TEST(Session, FeedAfterFinishAndDoubleFinishAreErrors) {
  auto p = make_prepared(tag_with_json);
  session s(p);
  ASSERT_TRUE(s.feed("x").has_value());
  ASSERT_TRUE(s.finish().has_value());
  auto r = s.feed_copy("y");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, base::errc::invalid_argument);
  EXPECT_FALSE(s.finish().has_value());
}

TEST(Session, WithoutAParserEverythingIsContent) {
  chat::prepared p;  // no parser: plain content, incomplete UTF-8 held back
  const std::string output = "plain \xE2\x82\xAC text";
  auto out = run_stream(p, output, fixed_chunks(output.size(), 1));
  ASSERT_TRUE(out.ok);
  for (const auto& v : out.violations) ADD_FAILURE() << v;
  EXPECT_EQ(out.final_message.content, "plain € text");
  EXPECT_EQ(out.reason, finish_reason::stop);
}

TEST(Session, DeltaJsonAndFinishReasonNames) {
  delta d;
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(json::dump(d.to_json()), "{}");
  d.content = "a";
  d.reasoning_content = "r";
  EXPECT_EQ(json::dump(d.to_json()), R"({"reasoning_content":"r","content":"a"})");
  EXPECT_EQ(finish_reason_name(finish_reason::stop), "stop");
  EXPECT_EQ(finish_reason_name(finish_reason::length), "length");
  EXPECT_EQ(finish_reason_name(finish_reason::tool_calls), "tool_calls");
}

TEST(Session, MovedSessionKeepsStreaming) {
  auto p = make_prepared(tag_with_json);
  session a(p);
  ASSERT_TRUE(a.feed("Hel").has_value());
  session b(std::move(a));
  auto r = b.feed_copy("lo");
  ASSERT_TRUE(r.has_value());
  auto f = b.finish();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->message.content, "Hello");
}

// A harmony-style format (a format description bound from an invented template): a marker
// that starts no message after text the stream already sent. The text stays as read and the
// marker is text, at every chunking, as the one-shot parse reads it (fuzz finding: the whole
// output turned into content, which the stream could not take back).
TEST(Session, AStrayMarkerAfterStreamedTextKeepsWhatWasSent) {
  auto source = base::read_file(std::string(CHATPEG_SOURCE_DIR) +
                                "/tests/conformance/invented/channels_channel_first.jinja");
  ASSERT_TRUE(source.has_value());
  auto t = chat::chat_template::create(*source, {.file = "channels_channel_first.jinja"});
  ASSERT_TRUE(t.has_value()) << t.error().to_string();
  auto req = chat::request::from_json(*json::parse(R"({"messages": [{"role": "user",
      "content": "hi"}], "tools": [{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]})"));
  ASSERT_TRUE(req.has_value());
  auto p = chat::prepare(**t, *req);
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  for (const std::string output :
       {"o[invoke]l[open]", "[chan]final[text]Hi[close][open]x", "Hi[close][text]x[open]",
        "Hi[close] to=x[open]", "[chan]final[text]a[close] to=functions.zz[text]{}"}) {
    SCOPED_TRACE(output);
    auto reference = parse(*p, output);
    ASSERT_TRUE(reference.has_value()) << reference.error().to_string();
    for (std::size_t n = 1; n <= output.size(); ++n) {
      auto run = run_stream(*p, output, fixed_chunks(output.size(), n));
      ASSERT_TRUE(run.ok) << n << ": " << run.error.to_string();
      for (const auto& v : run.violations) ADD_FAILURE() << n << ": " << v;
      EXPECT_EQ(message_difference(run.final_message, *reference, false), "") << n;
    }
  }
}

}  // namespace
}  // namespace chatpeg::stream

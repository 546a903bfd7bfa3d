// Output cut by max_tokens inside a call (session finish with the token limit, parse with
// allow_truncated): the final message closes the partial call truthfully in every argument
// syntax — a key whose value has not begun is left out (never null or ""), a string cut
// mid-text keeps its text closed as a string (cut escapes, UTF-8 and closing quotes dropped).
// Each row is checked against the one-shot parse and streamed in chunks of 1..7 bytes and
// whole: the deltas add up to the final message (a key is held back until its value begins,
// since nothing sent is retracted), the final arguments are exactly the row's.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/stream/parse.h"
#include "stream_checks.h"
#include "support/conformance.h"
#include "support/shared_data.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace testing;  // NOLINT

struct cut_case {
  const char* name;
  std::string output;     // the output as max_tokens cut it
  std::string arguments;  // the final arguments of its one call, exactly
};

// The one-shot parse and every chunking of a streamed session agree on the row's arguments.
void expect_cut(const chat::prepared& p, const cut_case& c) {
  SCOPED_TRACE(std::string(c.name) + ": " + c.output);
  auto parsed = parse_detailed(p, c.output, {.allow_truncated = true});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
  EXPECT_TRUE(parsed->truncated);
  ASSERT_EQ(parsed->message.tool_calls.size(), 1u);
  EXPECT_EQ(parsed->message.tool_calls[0].arguments, c.arguments);
  for (std::size_t n = 0; n <= 7; ++n) {
    SCOPED_TRACE(n == 0 ? std::string("whole") : "chunks of " + std::to_string(n));
    auto out = run_stream(p, c.output, fixed_chunks(c.output.size(), n), {.hit_token_limit = true});
    ASSERT_TRUE(out.ok) << out.error.to_string();
    for (const auto& v : out.violations) ADD_FAILURE() << v;
    EXPECT_EQ(out.reason, finish_reason::length);
    ASSERT_EQ(out.final_message.tool_calls.size(), 1u);
    EXPECT_EQ(out.final_message.tool_calls[0].arguments, c.arguments);
  }
}

// One argument syntax: rows of a get_weather call's arguments (city: string, days: integer,
// opts: object) as max_tokens cut them, written after the call's opening by this module's own
// grammar for the syntax and by a real template of the shared corpus.
struct syntax_table {
  const char* syntax;
  std::function<peg::parser(peg::builder&)> make;
  std::string own_open;  // the own grammar's opening of a get_weather call
  const char* template_file;
  std::string template_open;   // the template's opening of a get_weather call
  std::vector<cut_case> rows;  // output: the text after the opening
};

const std::vector<syntax_table>& syntax_tables() {
  static const std::vector<syntax_table> tables = {
      {"JSON arguments",
       tag_with_json,
       "<function=get_weather>",
       "Qwen-Qwen3-0.6B.jinja",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ",
       {
           {"key cut before its value", R"({"city": )", "{}"},
           {"key cut in its name", R"({"ci)", "{}"},
           {"key cut after its colon", R"({"city":)", "{}"},
           {"second key cut before its value", R"({"city": "Paris", "days": )",
            R"({"city":"Paris"})"},
           {"comma cut before a key", R"({"city": "Paris",)", R"({"city":"Paris"})"},
           {"nested key cut before its value", R"({"city": "Paris", "opts": {"a": )",
            R"({"city":"Paris","opts":{}})"},
           {"nested second key cut in its name", R"({"opts": {"a": 1, "b)", R"({"opts":{"a":1}})"},
           {"string cut mid-text", R"({"city": "Par)", R"({"city":"Par"})"},
           {"string cut empty", R"({"city": ")", R"({"city":""})"},
           {"string cut in an escape", R"({"city": "Pa\)", R"({"city":"Pa"})"},
           {"string cut in a \\u escape", R"({"city": "Pa\u00)", R"({"city":"Pa"})"},
           {"string cut after an escaped quote", R"({"city": "Pa\"r)", R"({"city":"Pa\"r"})"},
           {"string cut in UTF-8", "{\"city\": \"Z\xC3", R"({"city":"Z"})"},
       }},
      {"tagged arguments",
       tag_with_tagged,
       "<tool_call>\n<function=get_weather>\n",
       "Qwen3-Coder.jinja",
       "<tool_call>\n<function=get_weather>\n",
       {
           {"raw key cut before its value", "<parameter=city>\n", "{}"},
           {"raw key cut before its newline", "<parameter=city>", "{}"},
           {"raw key cut after another argument",
            "<parameter=days>\n3\n</parameter>\n<parameter=city>\n", R"({"days":3})"},
           {"JSON key cut before its value", "<parameter=days>\n", "{}"},
           {"second key cut before its value",
            "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n", R"({"city":"Paris"})"},
           {"nested key cut before its value", "<parameter=opts>\n{\"a\": ", R"({"opts":{}})"},
           {"raw string cut mid-text", "<parameter=city>\nPar", R"({"city":"Par"})"},
           {"raw string cut in the closing delimiter", "<parameter=city>\nPar\n</para",
            R"({"city":"Par"})"},
           {"raw string with a quote and backslash cut in UTF-8", "<parameter=city>\nPa\"r\\Z\xC3",
            R"({"city":"Pa\"r\\Z"})"},
           {"JSON string cut in an escape", "<parameter=opts>\n{\"a\": \"x\\",
            R"({"opts":{"a":"x"}})"},
       }},
      {"Gemma 4 arguments",
       gemma_style,
       "[call]get_weather{",
       "google-gemma-4-31B-it.jinja",
       "<|tool_call>call:get_weather{",
       {
           {"key cut before its value", "city:", "{}"},
           {"key cut before its value, spaces", "city:  ", "{}"},
           {"key cut in the opening quote", "city:<|\"", "{}"},
           {"key cut after the opening quote", "city:<|\"|>", "{}"},
           {"second key cut before its value",
            "city:<|\"|>Paris<|\"|>,days:", R"({"city":"Paris"})"},
           {"nested bare key cut before its value", "opts:{a:", R"({"opts":{}})"},
           {"nested second key cut before its value", "opts:{a:1,b:", R"({"opts":{"a":1}})"},
           {"string cut mid-text", "city:<|\"|>Par", R"({"city":"Par"})"},
           {"string cut in the closing quote <", "city:<|\"|>Par<", R"({"city":"Par"})"},
           {"string cut in the closing quote <|\"|", "city:<|\"|>Par<|\"|", R"({"city":"Par"})"},
           {"string with a quote and backslash", "city:<|\"|>a\"b\\", R"({"city":"a\"b\\"})"},
           {"nested string cut in the closing quote", "opts:{a:<|\"|>x<|", R"({"opts":{"a":"x"}})"},
       }},
      {"Python-style calls",
       pythonic,
       "[get_weather(",
       "LFM2.5-8B-A1B.jinja",
       "<|tool_call_start|>[get_weather(",
       {
           {"key cut before its value", "city=", "{}"},
           {"second key cut before its value", "city='Paris', days=", R"({"city":"Paris"})"},
           {"second key cut in its name", "city='Paris', da", R"({"city":"Paris"})"},
           {"nested key cut before its value", "opts={'a': ", R"({"opts":{}})"},
           {"single-quoted string cut mid-text", "city='Par", R"({"city":"Par"})"},
           {"double-quoted string cut mid-text", "city=\"Par", R"({"city":"Par"})"},
           {"string cut in an escape", "city='it\\", R"({"city":"it"})"},
           {"string cut after an escaped quote", "city='it\\'s", R"({"city":"it's"})"},
           {"string cut in a \\x escape", "city=\"a\\x4", R"({"city":"a"})"},
           {"string cut in UTF-8", "city='Z\xC3", R"({"city":"Z"})"},
       }},
  };
  return tables;
}

// The rows of `table` after `open`, for a prepared request `p`.
void expect_rows(const chat::prepared& p, const syntax_table& table, const std::string& open) {
  for (const auto& row : table.rows) expect_cut(p, {row.name, open + row.output, row.arguments});
}

TEST(Truncation, OwnGrammarsLeaveOutKeysWithoutValuesAndKeepCutStrings) {
  for (const auto& table : syntax_tables()) {
    SCOPED_TRACE(table.syntax);
    expect_rows(make_prepared(table.make), table, table.own_open);
  }
}

// The real templates of the shared corpus, with their own markers and grammars.
TEST(Truncation, CorpusTemplatesLeaveOutKeysWithoutValuesAndKeepCutStrings) {
  CHATPEG_REQUIRE_SHARED(shared);
  auto request = chat::request::from_json(*json::parse(R"({
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "w",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"},
        "days": {"type": "integer"}, "opts": {"type": "object"}}, "required": ["city"]}}}]})"));
  ASSERT_TRUE(request.has_value()) << request.error().to_string();
  for (const auto& table : syntax_tables()) {
    SCOPED_TRACE(table.template_file);
    const std::string file = table.template_file;
    std::string error;
    auto tmpl = chatpeg::testing::corpus_template(
        shared, file, chatpeg::testing::special_tokens_for(shared, file.substr(0, file.size() - 6)),
        &error);
    ASSERT_TRUE(tmpl) << error;
    auto p = chat::prepare(*tmpl, *request);
    ASSERT_TRUE(p.has_value()) << p.error().to_string();
    expect_rows(*p, table, table.template_open);
  }
}

// A raw value whose only byte may be its closing delimiter's first has not begun.
TEST(Truncation, RawValueHeldAsADelimiterPrefixHasNotBegun) {
  auto p = make_prepared(tag_with_tagged);
  expect_cut(p, {"raw value that may be the closing delimiter",
                 "<tool_call>\n<function=get_weather>\n<parameter=city>\n\n", "{}"});
}

// Without the token limit nothing changes: a complete string value that is empty stays "".
TEST(Truncation, CompleteEmptyValuesAreUnchanged) {
  const std::string coder = "<tool_call>\n<function=get_weather>\n";
  const std::string coder_end = "</function>\n</tool_call>";
  const std::vector<std::tuple<std::function<peg::parser(peg::builder&)>, std::string, std::string>>
      table = {
          {tag_with_tagged, coder + "<parameter=city>\n\n</parameter>\n" + coder_end,
           R"({"city":""})"},
          {tag_with_json, R"(<function=get_weather>{"city": ""}</function>)", R"({"city":""})"},
          {gemma_style, "[call]get_weather{city:<|\"|><|\"|>}[/call]", R"({"city":""})"},
          {pythonic, "[get_weather(city='')]", R"({"city":""})"},
      };
  for (const auto& [make, output, arguments] : table) {
    SCOPED_TRACE(output);
    auto p = make_prepared(make);
    for (std::size_t n = 0; n <= 7; ++n) {
      auto out = run_stream(p, output, fixed_chunks(output.size(), n));
      ASSERT_TRUE(out.ok) << out.error.to_string();
      for (const auto& v : out.violations) ADD_FAILURE() << v;
      ASSERT_EQ(out.final_message.tool_calls.size(), 1u);
      EXPECT_EQ(out.final_message.tool_calls[0].arguments, arguments);
    }
  }
}

// While streaming, a key (the first with the object's opener) is held back until the first byte
// of its value and then sent with it.
TEST(Truncation, KeyIsSentWithTheFirstByteOfItsValue) {
  auto p = make_prepared(tag_with_tagged);
  session s(p);
  std::string streamed;
  const auto feed = [&](std::string_view chunk) {
    auto r = s.feed_copy(chunk);
    EXPECT_TRUE(r.has_value()) << r.error().to_string();
    std::string args;
    if (r) {
      for (const auto& d : *r) {
        for (const auto& t : d.tool_calls) args += t.arguments;
      }
    }
    streamed += args;
    return args;
  };
  EXPECT_EQ(feed("<tool_call>\n<function=get_weather>\n<parameter=city>\n"), "");
  EXPECT_EQ(feed("\n"), "");  // may be the closing delimiter's first byte
  EXPECT_EQ(feed("P"), "{\"city\":\"\\nP");
  EXPECT_EQ(feed("aris\n</parameter>\n<parameter=days>\n"), "aris\"");
  EXPECT_EQ(feed("3"), ",\"days\":3");
  auto f = s.finish({.hit_token_limit = true});
  ASSERT_TRUE(f.has_value()) << f.error().to_string();
  for (const auto& d : f->deltas) {
    for (const auto& t : d.tool_calls) streamed += t.arguments;
  }
  ASSERT_EQ(f->message.tool_calls.size(), 1u);
  EXPECT_EQ(f->message.tool_calls[0].arguments, R"({"city":"\nParis","days":3})");
  EXPECT_EQ(streamed, f->message.tool_calls[0].arguments);
  EXPECT_EQ(f->reason, finish_reason::length);
}

// Long string values stream mostly without the matcher (span_extension): the key after one is
// still held back until its value begins, and the cut is the same as feed()'s.
TEST(Truncation, LongStringsExtendedWithoutTheMatcherCutTheSame) {
  std::string text;
  while (text.size() < 1200) text += "plain words, \"quoted\", back\\slash and caf\xC3\xA9 ";
  const std::string coder = "<tool_call>\n<function=search>\n<parameter=note>\n" + text;
  const std::string json_call = "<function=search>{\"q\": " + json::quote(text);
  const std::vector<std::pair<std::function<peg::parser(peg::builder&)>, cut_case>> table = {
      {tag_with_tagged, {"raw string cut mid-text", coder, "{\"note\":" + json::quote(text) + "}"}},
      {tag_with_tagged,
       {"key cut before its value after a long raw string",
        coder + "\n</parameter>\n<parameter=days>\n", "{\"note\":" + json::quote(text) + "}"}},
      {tag_with_json,
       {"JSON string cut mid-text", json_call.substr(0, json_call.size() - 1),
        "{\"q\":" + json::quote(text) + "}"}},
      {tag_with_json,
       {"key cut before its value after a long JSON string",
        json_call + ", \"n\": ", "{\"q\":" + json::quote(text) + "}"}},
  };
  for (const auto& [make, c] : table) {
    auto p = make_prepared(make);
    expect_cut(p, c);
    SCOPED_TRACE(c.name);
    session s(p);
    std::string streamed;
    for (std::size_t at = 0; at < c.output.size(); at += 4) {
      auto r = s.feed_copy(std::string_view(c.output).substr(at, 4));
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      for (const auto& v : *r) {
        for (const auto& t : v.tool_calls) streamed += t.arguments;
      }
    }
    EXPECT_GT(s.stats().extension_feeds * 2, s.stats().feeds);
    auto f = s.finish({.hit_token_limit = true});
    ASSERT_TRUE(f.has_value()) << f.error().to_string();
    for (const auto& d : f->deltas) {
      for (const auto& t : d.tool_calls) streamed += t.arguments;
    }
    ASSERT_EQ(f->message.tool_calls.size(), 1u);
    EXPECT_EQ(f->message.tool_calls[0].arguments, c.arguments);
    EXPECT_EQ(streamed, c.arguments);
  }
}

}  // namespace
}  // namespace chatpeg::stream

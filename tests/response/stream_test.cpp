// Streaming parser: at every chunk size 1..7 the events add up to the one-shot result (same
// message, same regions with the same text), bytes that may become a delimiter are held back
// (literal prefixes, partial regex matches, incomplete UTF-8), and the work is linear.
#include <gtest/gtest.h>

#include "chatpeg/base/utf8.h"
#include "chatpeg/response/response.h"
#include "test_support.h"

namespace chatpeg::response {
namespace {

using testing::js;
using testing::load;

struct stream_case {
  const char* name;
  const char* tmpl;
  const char* output;
  const char* prefix;
};

const char* kRegexClose = R"j({"start_anchor": "A:", "fields": {
  "thinking": {"open_pattern": "<think(?:ing)?>", "close_pattern": "</think(?:ing)?>\\s*"},
  "tool_calls": {"open_pattern": "<call:(?P<name>\\w+)>", "close": "</call>", "repeats": true,
    "content": "json", "content_args": {"unquoted_keys": true},
    "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}},
  "content": {"close_pattern": "<\\|(?:end|eot)\\|>"}}})j";

const stream_case kCases[] = {
    {"chatml", testing::chatml_template(),
     "<think>\nplan with </thin and <th\n</think>\n\nOK. <tool_call>{\"name\":\"f\",\"arguments\":"
     "{\"a\":\"</tool_call\"}}</tool_call>\n<tool_call>{\"name\":\"g\",\"arguments\":{}}"
     "</tool_call><|im_end|>",
     ""},
    {"prefix opens reasoning", testing::chatml_template(), "still thinking</think>done",
     "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"},
    {"regex delimiters", kRegexClose,
     "<thinking>a </thinkin b</thinking>   \n text <call:get_weather>{city: \"Zürich\"}</call> "
     "tail <|eo <|eot|>",
     ""},
    {"multibyte text", kRegexClose, "日本語のテキスト <think>思考 🌍</think> 🌍 end <|end|>", ""},
    {"unclosed region", kRegexClose, "x <call:f>{a: 1}</call> <think>unfinished", ""},
};

struct collected {
  json::value message;
  std::vector<std::string> regions;  // "field:chunks concatenated" per region instance
  std::vector<event> events;
};

collected collect(const template_ptr& t, const stream_case& c, std::size_t chunk) {
  parse_options o;
  o.prefix = c.prefix;
  parser p(t, o);
  std::vector<event> events = p.initial_events();
  const std::string output = c.output;
  for (std::size_t i = 0; i < output.size(); i += chunk) {
    auto got = p.feed(std::string_view(output).substr(i, chunk));
    EXPECT_TRUE(got) << got.error().to_string();
    if (!got) return {};
    events.insert(events.end(), got->begin(), got->end());
  }
  auto done = p.finalize();
  EXPECT_TRUE(done) << done.error().to_string();
  if (!done) return {};
  events.insert(events.end(), done->events.begin(), done->events.end());
  collected out;
  out.message = done->message;
  std::string open;
  for (const auto& e : events) {
    if (e.kind == event_kind::region_open) out.regions.push_back(e.field + ":");
    if (e.kind == event_kind::region_chunk) {
      EXPECT_FALSE(out.regions.empty());
      if (!out.regions.empty()) out.regions.back() += e.text;
    }
  }
  out.events = std::move(events);
  return out;
}

TEST(ResponseStream, EveryChunkSizeAddsUpToTheOneShotResult) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    auto t = load(c.tmpl);
    ASSERT_TRUE(t);
    parse_options o;
    o.prefix = c.prefix;
    auto one_shot = parse(*t, c.output, o);
    ASSERT_TRUE(one_shot) << one_shot.error().to_string();
    const collected whole = collect(t, c, std::string(c.output).size());
    EXPECT_EQ(whole.message, *one_shot);
    for (std::size_t chunk = 1; chunk <= 7; ++chunk) {
      SCOPED_TRACE("chunk " + std::to_string(chunk));
      const collected got = collect(t, c, chunk);
      EXPECT_EQ(got.message, *one_shot) << got.message.dump();
      EXPECT_EQ(got.regions, whole.regions);
      for (const auto& e : got.events) {
        if (e.kind == event_kind::region_chunk) {
          EXPECT_TRUE(base::is_valid_utf8(e.text)) << e.text;
        }
      }
    }
  }
}

TEST(ResponseStream, RegionsAreTheTextBetweenTheDelimiters) {
  auto t = load(testing::chatml_template());
  const collected got = collect(t, kCases[0], 1);
  ASSERT_GE(got.regions.size(), 4u);
  EXPECT_EQ(got.regions[0], "reasoning_content:\nplan with </thin and <th\n");
  EXPECT_EQ(got.regions[1], "content:\n\nOK. ");
  EXPECT_EQ(got.regions[2], "tool_calls:{\"name\":\"f\",\"arguments\":{\"a\":\"</tool_call\"}}");
}

TEST(ResponseStream, HoldsBackWhatMayBecomeADelimiter) {
  struct row {
    const char* tmpl;
    const char* fed;
    std::size_t held;
    const char* released;  // the text of the region chunks so far
  };
  const row rows[] = {
      {testing::chatml_template(), "<think>plan</thi", 5, "plan"},
      {testing::chatml_template(), "<think>plan</thX", 0, "plan</thX"},
      {testing::chatml_template(), "<think>plan\xe6\x97", 2, "plan"},
      {kRegexClose, "<think>a</thinki", 8, "a"},
      {kRegexClose, "<think>a</think>  ", 10, "a"},  // the close may take more spaces
      {kRegexClose, "hi <call:get_wea", 13, "hi "},
      {kRegexClose, "hi <|eo", 4, "hi "},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.fed);
    parser p(load(r.tmpl));
    auto events = p.feed(r.fed);
    ASSERT_TRUE(events) << events.error().to_string();
    std::string released;
    for (const auto& e : *events) {
      if (e.kind == event_kind::region_chunk) released += e.text;
    }
    EXPECT_EQ(released, r.released);
    EXPECT_EQ(p.stats().held_back, r.held);
  }
}

TEST(ResponseStream, WorkIsLinearInTheOutput) {
  auto t = load(kRegexClose);
  for (std::size_t kb : {4, 64}) {
    std::string output = "<think>";
    while (output.size() < kb * 1024)
      output += "some reasoning text, with <b>tags</b> and </thinx ";
    output += "</think>answer <call:f>{a: 1}</call>";
    parser p(t);
    for (std::size_t i = 0; i < output.size(); i += 4) {
      ASSERT_TRUE(p.feed(std::string_view(output).substr(i, 4)));
    }
    ASSERT_TRUE(p.finalize());
    // Each feed searches the few delimiters from the first undecided byte: a bounded multiple
    // of the output, never a rescan (which would be ~output² / 8 bytes here).
    EXPECT_LE(p.stats().scanned_bytes, 20 * output.size()) << kb << " KB";
  }
}

// Feeds output 4 bytes at a time: it reads as one call, and the scans read at most 20 times
// its size.
void expect_one_call_in_linear_work(const template_ptr& t, const std::string& output) {
  parser p(t);
  for (std::size_t i = 0; i < output.size(); i += 4) {
    ASSERT_TRUE(p.feed(std::string_view(output).substr(i, 4)));
  }
  auto done = p.finalize();
  ASSERT_TRUE(done) << done.error().to_string();
  EXPECT_EQ(done->message["tool_calls"].size(), 1u);
  EXPECT_LE(p.stats().scanned_bytes, 20 * output.size());
}

// A written template's call close looks ahead past whitespace for the next call or the end, and
// its markers take flexible whitespace: outputs full of false closes and long whitespace runs,
// fed 4 bytes at a time, still cost a bounded multiple of their size.
TEST(ResponseStream, WrittenTemplateWorkIsLinear) {
  chat::analysis a;
  a.reasoning = {
      .mode = chat::reasoning_mode::tag_based, .start = "<think>\n", .end = "\n</think>"};
  a.tools.format = chat::tool_format::json_native;
  a.tools.call_start = "<tool_call>\n";
  a.tools.call_end = "\n</tool_call>";
  auto written = write_template(a, "A:");
  ASSERT_TRUE(written) << written.error().to_string();
  auto t = response_template::from_json(*written);
  ASSERT_TRUE(t) << t.error().to_string();
  const std::string spaces(4096, ' ');
  const std::string fills[] = {"x </tool_call> y ", "</tool_call>" + spaces + "z", spaces + "w"};
  for (const auto& fill : fills) {
    std::string output = "<think>" + spaces + "plan" + spaces + "</think>" + spaces;
    output += "<tool_call>{\"name\": \"f\", \"arguments\": {\"s\": \"";
    while (output.size() < 64 * 1024) output += fill;
    output += "\"}}\n</tool_call>\n";
    SCOPED_TRACE(fill.substr(0, 20));
    expect_one_call_in_linear_work(*t, output);
  }
}

// Reasoning that mentions a call opener and runs on, fed 4 bytes at a time: the work stays a
// bounded multiple of the size (a reasoning close that looked ahead from each mention for a
// later close, to end a block never closed at the calls, would rescan the rest at every feed).
TEST(ResponseStream, ReasoningAfterACallMentionIsLinear) {
  chat::analysis a;
  a.reasoning = {.mode = chat::reasoning_mode::tag_based, .start = "<think>", .end = "</think>"};
  a.tools.format = chat::tool_format::json_native;
  a.tools.call_start = "<tool_call>";
  a.tools.call_end = "</tool_call>";
  auto written = write_template(a, "A:");
  ASSERT_TRUE(written) << written.error().to_string();
  auto t = response_template::from_json(*written);
  ASSERT_TRUE(t) << t.error().to_string();
  for (const std::string fill : {std::string("more thought "), std::string("<tool_call> ")}) {
    std::string output = "<think>I could write <tool_call> here. ";
    while (output.size() < 64 * 1024) output += fill;
    output += "</think><tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    SCOPED_TRACE(fill);
    expect_one_call_in_linear_work(*t, output);
  }
}

TEST(ResponseStream, ErrorsAtCloseKeepTheOffset) {
  auto t = load(R"({"start_anchor": "A:", "fields": {
    "n": {"open": "<n>", "close": "</n>", "content": "int"}, "content": {}}})");
  parser p(t);
  ASSERT_TRUE(p.feed("ab<n>1"));
  auto bad = p.feed("x</n>");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where.offset, 5u);
  EXPECT_EQ(bad.error().where.path, "$.fields.n");
}

}  // namespace
}  // namespace chatpeg::response

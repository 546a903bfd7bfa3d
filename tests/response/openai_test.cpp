// OpenAI from response templates: the key mapping, the message, and delta streams that follow
// stream::session's contract at every chunk size (suffix deltas adding up to the final
// message, stripped whitespace held back, one header per call with a stable id, then its
// arguments in one fragment at the call's close).
#include <gtest/gtest.h>

#include "chatpeg/response/response.h"
#include "test_support.h"

namespace chatpeg::response {
namespace {

using testing::js;
using testing::load;

TEST(ResponseOpenai, FieldMapping) {
  for (const char* key : {"thinking", "reasoning", "reasoning_content"}) {
    EXPECT_EQ(openai_field_for(key), openai_field::text) << key;
    EXPECT_EQ(channel_for(key), stream::channel::reasoning) << key;
  }
  EXPECT_EQ(openai_field_for("content"), openai_field::text);
  EXPECT_EQ(channel_for("content"), stream::channel::content);
  EXPECT_EQ(openai_field_for("tool_calls"), openai_field::tool_calls);
  EXPECT_EQ(channel_for("tool_calls"), std::nullopt);
  EXPECT_EQ(openai_field_for("role"), openai_field::none);
  EXPECT_EQ(channel_for("role"), std::nullopt);
}

TEST(ResponseOpenai, ToMessage) {
  auto m = to_message(js(R"({"role": "assistant", "thinking": "t", "content": "c",
    "tool_calls": [{"type": "function", "id": "x1", "function": {"name": "f", "arguments": {"a": 1}}},
                   {"name": "g", "arguments": "{\"b\":2}"}, {"function": {"name": "h"}}]})"));
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->reasoning_content, "t");
  EXPECT_EQ(m->content, "c");
  ASSERT_EQ(m->tool_calls.size(), 3u);
  EXPECT_EQ(m->tool_calls[0].id, "x1");
  EXPECT_EQ(m->tool_calls[0].arguments, R"({"a":1})");
  EXPECT_EQ(m->tool_calls[1].name, "g");
  EXPECT_EQ(m->tool_calls[1].arguments, R"({"b":2})");
  EXPECT_EQ(m->tool_calls[2].arguments, "{}");

  auto bad = to_message(js(R"({"tool_calls": [{"function": {"arguments": {}}}]})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where.path, "$.tool_calls[0].function.name");
}

struct delta_case {
  const char* name;
  const char* tmpl;
  const char* output;
  const char* prefix;
};

const char* kJoined = R"({"start_anchor": "A:", "fields": {
  "reasoning": {"open": "<r>", "close": "</r>", "repeats": true, "join": "\n\n"},
  "content": {"close": "<eot>", "repeats": true, "join": " "},
  "tool_calls": {"open": "[CALLS]", "content": "json", "transform_each": true,
    "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}}}})";

const delta_case kCases[] = {
    {"chatml", testing::chatml_template(),
     "<think>\n  plan  \n</think>\n\n  OK, calling.  <tool_call>\n{\"name\": \"f\", \"arguments\": "
     "{\"a\": 1}}\n</tool_call>\n<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>",
     ""},
    {"prefix opens reasoning", testing::chatml_template(), "deep thought\n</think>\nAnswer.",
     "<|im_start|>assistant\n<think>\n"},
    {"joined reasoning and a call list", kJoined,
     "<r> one </r> text <r>two</r> more <eot>[CALLS][{\"name\": \"a\", \"arguments\": {\"x\": "
     "\"y\"}}, {\"name\": \"b\", \"arguments\": {}}]",
     ""},
    {"only whitespace content", testing::chatml_template(), "  \n  ", ""},
};

TEST(ResponseOpenai, DeltasAddUpToTheMessageAtEveryChunkSize) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    auto t = load(c.tmpl);
    ASSERT_TRUE(t);
    parse_options o;
    o.prefix = c.prefix;
    auto dict = parse(*t, c.output, o);
    ASSERT_TRUE(dict) << dict.error().to_string();
    auto want = to_message(*dict);
    ASSERT_TRUE(want);
    const std::string output = c.output;
    for (std::size_t chunk = 1; chunk <= 8; ++chunk) {
      SCOPED_TRACE("chunk " + std::to_string(chunk));
      int next_id = 0;
      delta_stream s(t, o, [&] { return "id" + std::to_string(next_id++); });
      // What the prefix decided comes with the first feed. Odd chunk sizes read through the
      // stream::reader interface (views), even ones through feed_copy().
      stream::reader& r = s;
      std::vector<stream::delta> deltas;
      for (std::size_t i = 0; i < output.size(); i += chunk) {
        const std::string_view piece = std::string_view(output).substr(i, chunk);
        if (chunk % 2 == 1) {
          auto v = r.feed(piece);
          ASSERT_TRUE(v) << v.error().to_string();
          for (const auto& d : *v) deltas.push_back(d.to_delta());
        } else {
          auto d = s.feed_copy(piece);
          ASSERT_TRUE(d) << d.error().to_string();
          deltas.insert(deltas.end(), d->begin(), d->end());
        }
      }
      auto done = s.finish();
      ASSERT_TRUE(done) << done.error().to_string();
      deltas.insert(deltas.end(), done->deltas.begin(), done->deltas.end());
      std::string content, reasoning;
      std::vector<chat::tool_call> calls;
      for (const auto& d : deltas) {
        content += d.content;
        reasoning += d.reasoning_content;
        for (const auto& tc : d.tool_calls) {
          if (tc.id) {
            ASSERT_EQ(tc.index, calls.size()) << "one header per call, in order";
            calls.push_back(chat::tool_call{.id = *tc.id, .name = tc.name.value_or("")});
          } else {
            ASSERT_LT(tc.index, calls.size());
            calls[tc.index].arguments += tc.arguments;
          }
        }
      }
      EXPECT_EQ(content, want->content.value_or(""));
      EXPECT_EQ(reasoning, want->reasoning_content.value_or(""));
      ASSERT_EQ(calls.size(), want->tool_calls.size());
      for (std::size_t i = 0; i < calls.size(); ++i) {
        EXPECT_EQ(calls[i].name, want->tool_calls[i].name);
        EXPECT_EQ(calls[i].arguments, want->tool_calls[i].arguments);
        EXPECT_EQ(calls[i].id, "id" + std::to_string(i));
        EXPECT_EQ(done->message.tool_calls[i].id, calls[i].id);
      }
      EXPECT_EQ(done->message.content, want->content);
      EXPECT_EQ(done->reason,
                calls.empty() ? stream::finish_reason::stop : stream::finish_reason::tool_calls);
    }
  }
}

TEST(ResponseOpenai, TextStreamsBeforeTheRegionCloses) {
  auto t = load(testing::chatml_template());
  delta_stream s(t);
  auto d = s.feed_copy("<think>\n  step one  ");
  ASSERT_TRUE(d);
  std::string reasoning;
  for (const auto& x : *d) reasoning += x.reasoning_content;
  EXPECT_EQ(reasoning, "step one");  // leading spaces dropped, trailing held back
  d = s.feed_copy("and two</think>");
  ASSERT_TRUE(d);
  reasoning.clear();
  for (const auto& x : *d) reasoning += x.reasoning_content;
  EXPECT_EQ(reasoning, "  and two");
}

// After a failure, unsent_from() is where the output stops being represented in what was
// sent: the failing call's open delimiter, or the first undecided byte of streamed text.
TEST(ResponseOpenai, UnsentFromAfterAFailure) {
  struct unsent_case {
    const char* name;
    const char* output;
    bool fails_in_feed;
    std::size_t want;
  };
  const unsent_case cases[] = {
      {"a call that does not parse", "Hi.<tool_call>{oops}</tool_call>", true, 3},
      {"a second call fails after a good one",
       "<tool_call>{\"name\": \"f\"}</tool_call> <tool_call>[</tool_call>", true, 37},
      {"an unclosed call at the end", "Hi.<tool_call>{\"name\": ", false, 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    delta_stream s(load(testing::chatml_template()));
    auto d = s.feed_copy(c.output);
    if (c.fails_in_feed) {
      ASSERT_FALSE(d);
    } else {
      ASSERT_TRUE(d) << d.error().to_string();
      ASSERT_FALSE(s.finish());
    }
    EXPECT_EQ(s.unsent_from(), c.want);
  }
}

}  // namespace
}  // namespace chatpeg::response

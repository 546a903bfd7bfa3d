// stream::session over a reasoning block the model opens and never closes. chat's generator
// reads such a block three ways, in order: closed (`<think> text </think>`), reasoning up to a
// call opener followed by calls, reasoning to the end. While the block is open the closed
// reading stays viable (leniently), so text after a call opener inside it is ambiguous: the
// finished output may read it as a call. The session holds that text back while the call
// reading is still viable and releases it when it is not (the block closes, or the text after
// the opener cannot be a call); the final parse decides. Regression (fuzz stream_session):
// before, the call text streamed as reasoning and finish() refused the retraction
// (errc::internal_error). Chunk sizes 1..whole; the chat-shaped grammar by hand and the
// bundled example template through chat::prepare.
#include <gtest/gtest.h>

#include "chatpeg/base/file.h"
#include "chatpeg/chat/parser_gen.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "stream_checks.h"
#include "test_grammars.h"

namespace chatpeg::stream {
namespace {

using namespace chatpeg::stream::testing;

// chat's reasoning_block for a model that opens <think> itself (prefix_state none).
parser unclosed_reasoning_calls(builder& b) {
  auto call = b.literal("<tool_call>") << json_call(b) << b.literal("</tool_call>");
  auto calls = b.rule("tool-calls", call + b.zero_or_more(b.space() + call));
  auto text = b.reasoning(b.until("</think>"));
  auto open = b.literal("<think>") + b.space();
  auto closed = b.space() + open + text + b.literal("</think>") + b.space();
  auto up_to_call =
      b.space() + open + b.reasoning(b.until_one_of({"</think>", "<tool_call>"})) + b.peek(calls);
  auto to_end = b.space() + open + text + b.end();
  auto block = b.optional(b.choice({closed, up_to_call, to_end}));
  return block + b.content(b.until("<tool_call>")) + b.optional(calls) + b.space() + b.end();
}

// The same block kept as text (reasoning_format none): the content node spans the markers.
parser unclosed_block_as_content(builder& b) {
  auto call = b.literal("<tool_call>") << json_call(b) << b.literal("</tool_call>");
  auto calls = b.rule("tool-calls", call + b.zero_or_more(b.space() + call));
  auto open = b.literal("<think>") + b.space();
  auto closed =
      b.content(b.space() + open + b.until("</think>") + b.literal("</think>") + b.space());
  auto up_to_call =
      b.content(b.space() + open + b.until_one_of({"</think>", "<tool_call>"})) + b.peek(calls);
  auto to_end = b.content(b.space() + open + b.until("</think>") + b.end());
  auto block = b.optional(b.choice({closed, up_to_call, to_end}));
  return block + b.content(b.until("<tool_call>")) + b.optional(calls) + b.space() + b.end();
}

const chat::prepared& example_request() {
  static const chat::prepared p = [] {
    auto text = base::read_file(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
    EXPECT_TRUE(text.has_value());
    auto tmpl = chat::chat_template::create(text ? *text : std::string());
    EXPECT_TRUE(tmpl.has_value());
    auto body = json::parse(R"({"messages":[{"role":"user","content":"Weather?"}],
      "tools":[{"type":"function","function":{"name":"get_weather","parameters":{
      "type":"object","properties":{"city":{"type":"string"}}}}}],"parallel_tool_calls":true})");
    auto req = chat::request::from_json(*body);
    EXPECT_TRUE(req.has_value());
    auto prepared = chat::prepare(**tmpl, *req);
    EXPECT_TRUE(prepared.has_value()) << prepared.error().to_string();
    return std::move(*prepared);
  }();
  return p;
}

struct unclosed_case {
  const char* name;
  std::string output;
};

const std::vector<unclosed_case>& unclosed_cases() {
  static const std::vector<unclosed_case> table = {
      {"call_after_unclosed_think",
       "<think>\nplan: call it\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
       "{\"city\": \"Paris\"}}\n</tool_call>"},
      {"two_calls_after_unclosed_think",
       "<think>\nplan <b>bold</b>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
       "{}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
       "{\"city\": \"Rome\"}}\n</tool_call>"},
      {"opener_that_is_not_a_call",
       "<think>\nthe tag <tool_call> is how I call; more thinking, never closed"},
      {"call_inside_closed_block",
       "<think>\nmaybe <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n"
       "</tool_call> no, later</think>\nAnswer."},
      {"closed_block_then_call",
       "<think>\nplan</think>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
       "{}}\n</tool_call>"},
      // Not a reading the final parse accepts (text after the calls): a typed no_match.
      {"call_then_text_never_closed",
       "<think>\nplan\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n"
       "</tool_call> and then more thinking"},
  };
  return table;
}

std::vector<std::vector<std::size_t>> all_splits(std::size_t size) {
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t n = 1; n <= size; ++n) out.push_back(fixed_chunks(size, n));
  for (std::uint64_t seed = 1; seed <= 8; ++seed) out.push_back(random_chunks(size, seed));
  return out;
}

// Every split streams to the one-shot parse; an output the one-shot parse refuses ends in the
// same typed error (never a refused retraction).
void check_every_split(const chat::prepared& p, const std::string& output) {
  auto reference = parse(p, output);
  for (const auto& chunks : all_splits(output.size())) {
    SCOPED_TRACE("chunk " + std::to_string(chunks.front()) + " of " +
                 std::to_string(chunks.size()));
    auto out = run_stream(p, output, chunks);
    for (const auto& v : out.violations) ADD_FAILURE() << v;
    if (!reference) {
      ASSERT_FALSE(out.ok);
      EXPECT_EQ(out.error.code, reference.error().code) << out.error.to_string();
      continue;
    }
    ASSERT_TRUE(out.ok) << (out.error_in_finish ? "finish: " : "feed: ") << out.error.to_string();
    EXPECT_EQ(message_difference(out.final_message, *reference, /*compare_ids=*/false), "");
  }
}

class UnclosedReasoning : public ::testing::TestWithParam<unclosed_case> {};

TEST_P(UnclosedReasoning, HandBuiltGrammarEverySplitEqualsTheOneShotParse) {
  check_every_split(make_prepared(unclosed_reasoning_calls), GetParam().output);
}

TEST_P(UnclosedReasoning, BlockAsContentEverySplitEqualsTheOneShotParse) {
  check_every_split(make_prepared(unclosed_block_as_content), GetParam().output);
}

TEST_P(UnclosedReasoning, ExampleTemplateEverySplitEqualsTheOneShotParse) {
  check_every_split(example_request(), GetParam().output);
}

INSTANTIATE_TEST_SUITE_P(Outputs, UnclosedReasoning, ::testing::ValuesIn(unclosed_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(UnclosedReasoning, CallTextIsHeldBackWhileACallIsPossibleAndReleasedAfter) {
  auto p = make_prepared(unclosed_reasoning_calls);
  session s(p);
  ASSERT_TRUE(s.feed("<think>\nplan\n<tool_call>\n{\"name\": \"get").has_value());
  EXPECT_EQ(s.current().reasoning_content.value_or(""), "plan\n");
  // Not a call after all: the text is released as reasoning (before the block closes).
  ASSERT_TRUE(s.feed("_weather\" oops, not JSON").has_value());
  EXPECT_EQ(s.current().reasoning_content.value_or(""),
            "plan\n<tool_call>\n{\"name\": \"get_weather\" oops, not JSON");
  // Only what is ambiguous waits: text before an opener streams, a partial opener waits.
  session u(p);
  ASSERT_TRUE(u.feed("<think>\nplan <b>x</b> and <tool_ca").has_value());
  EXPECT_EQ(u.current().reasoning_content.value_or(""), "plan <b>x</b> and ");
  ASSERT_TRUE(u.feed("t!").has_value());
  EXPECT_EQ(u.current().reasoning_content.value_or(""), "plan <b>x</b> and <tool_cat!");
  // Closing the block releases everything before the close.
  session t(p);
  ASSERT_TRUE(t.feed("<think>\nplan <tool_call>\n{\"name\": \"search\", ").has_value());
  EXPECT_EQ(t.current().reasoning_content.value_or(""), "plan ");
  ASSERT_TRUE(t.feed("\"arguments\": {}}</tool_call> x</think>\nOK").has_value());
  EXPECT_EQ(t.current().reasoning_content.value_or(""),
            "plan <tool_call>\n{\"name\": \"search\", \"arguments\": {}}</tool_call> x");
}

// A block with only an end marker opens with the output (the prompt said "reasoning steps:").
// A model that never writes the end marker has streamed reasoning all along: the final message
// keeps it as reasoning (it was an internal error: the final parse read it as content).
TEST(UnclosedReasoning, BlockWithOnlyAnEndMarkerThatNeverCloses) {
  chat::analysis a;
  a.reasoning.mode = chat::reasoning_mode::tag_based;
  a.reasoning.end = "[ZQ FINAL]";
  auto req = chat::request::from_json(
      *json::parse(R"({"messages":[{"role":"user","content":"hi"}],"reasoning_format":"auto"})"));
  ASSERT_TRUE(req.has_value());
  auto p = chat::generate(a, *req, {.parse_prefix = "Steps:\n"});
  ASSERT_TRUE(p.has_value()) << p.error().to_string();
  struct row {
    std::string output, reasoning, content;
  };
  for (const row& r : {row{"think a < b [ZQ", "Steps:\nthink a < b [ZQ", ""},
                       row{"think\n[ZQ FINAL]\nAnswer", "Steps:\nthink\n", "Answer"}}) {
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{0}}) {
      SCOPED_TRACE(r.output + " / " + std::to_string(chunk));
      session s(*p);
      std::size_t at = 0;
      for (const std::size_t n : fixed_chunks(r.output.size(), chunk)) {
        ASSERT_TRUE(s.feed(std::string_view(r.output).substr(at, n)).has_value());
        at += n;
      }
      auto f = s.finish();
      ASSERT_TRUE(f.has_value()) << f.error().to_string();
      EXPECT_EQ(f->message.reasoning_content.value_or(""), r.reasoning);
      EXPECT_EQ(f->message.content.value_or(""), r.content);
    }
  }
}

}  // namespace
}  // namespace chatpeg::stream

// Anthropic Messages API: the translator (table rows: what each body becomes, or the JSON path
// and reason it is refused), and the gateway end to end in front of the fixture backend — a
// text answer, a tool_use block whose input is the expected object, thinking blocks, the stream
// events (their text and input_json_delta pieces assemble the non-streamed message), errors in
// Anthropic's shape (400, 401, 502), count_tokens, and a two-turn tool loop whose second prompt
// is the one Chat Completions renders for the same conversation.
#include "server/messages_api.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "api_test_support.h"
#include "gateway_harness.h"

namespace chatpeg::server {
namespace {

using testing::events_of;
using testing::gateway_harness;
using testing::scripted_reply;
using testing::split_chars;
using testing::translate_row;
const auto parse = testing::parse_json;

TEST(MessagesApi, TranslatesBodies) {
  const std::vector<translate_row> rows = {
      {"string_content", R"({"max_tokens":5,"messages":[{"role":"user","content":"hi"}]})",
       R"({"max_tokens":5,"messages":[{"role":"user","content":"hi"}]})"},
      {"system_blocks_and_sampling",
       R"({"model":"m","max_tokens":5,"system":[{"type":"text","text":"S1"},{"type":"text","text":"S2"}],
          "messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],
          "temperature":0.5,"top_p":0.9,"stop_sequences":["END"],"stream":true})",
       R"({"model":"m","max_tokens":5,"messages":[{"role":"system","content":"S1S2"},
          {"role":"user","content":"a"}],"temperature":0.5,"top_p":0.9,"stop":["END"],
          "stream":true})"},
      {"tool_loop",
       R"({"max_tokens":9,"messages":[{"role":"user","content":"w?"},
          {"role":"assistant","content":[{"type":"thinking","thinking":"T","signature":"s"},
            {"type":"text","text":"Checking."},
            {"type":"tool_use","id":"tu1","name":"get_weather","input":{"city":"Paris"}}]},
          {"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"sunny"},
            {"type":"tool_result","tool_use_id":"tu2","content":[{"type":"text","text":"x"}],
             "is_error":true},{"type":"text","text":"thanks"}]}],
          "tools":[{"name":"get_weather","description":"W","input_schema":{"type":"object"}}],
          "tool_choice":{"type":"any","disable_parallel_tool_use":true}})",
       R"({"max_tokens":9,"messages":[{"role":"user","content":"w?"},
          {"role":"assistant","content":"Checking.","reasoning_content":"T","tool_calls":[
            {"id":"tu1","type":"function","function":{"name":"get_weather",
             "arguments":"{\"city\":\"Paris\"}"}}]},
          {"role":"tool","tool_call_id":"tu1","content":"sunny"},
          {"role":"tool","tool_call_id":"tu2","content":"Error: x"},
          {"role":"user","content":"thanks"}],
          "tools":[{"type":"function","function":{"name":"get_weather",
            "parameters":{"type":"object"},"description":"W"}}],
          "tool_choice":"required","parallel_tool_calls":false})"},
      {"named_tool_and_thinking",
       R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],
          "tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool","name":"f"},
          "thinking":{"type":"enabled","budget_tokens":1024}})",
       R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],
          "tools":[{"type":"function","function":{"name":"f","parameters":{}}}],
          "tool_choice":{"type":"function","function":{"name":"f"}},
          "chat_template_kwargs":{"enable_thinking":true}})"},
      {"missing_max_tokens", R"({"messages":[{"role":"user","content":"x"}]})",
       "ERROR $.max_tokens"},
      {"zero_max_tokens", R"({"max_tokens":0,"messages":[{"role":"user","content":"x"}]})",
       "ERROR $.max_tokens"},
      {"no_messages", R"({"max_tokens":1,"messages":[]})", "ERROR $.messages"},
      {"bad_role", R"({"max_tokens":1,"messages":[{"role":"system","content":"x"}]})",
       "ERROR $.messages[0].role"},
      {"unknown_block",
       R"({"max_tokens":1,"messages":[{"role":"user","content":[{"type":"video"}]}]})",
       "ERROR $.messages[0].content[0]"},
      {"image_block",
       R"({"max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]})",
       "ERROR $.messages[0].content[0]"},
      {"tool_use_input_not_object",
       R"({"max_tokens":1,"messages":[{"role":"assistant","content":[
          {"type":"tool_use","id":"a","name":"f","input":"x"}]}]})",
       "ERROR $.messages[0].content[0].input"},
      {"builtin_tool",
       R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],
          "tools":[{"type":"bash_20250124","name":"bash"}]})",
       "ERROR $.tools[0].type"},
      {"bad_tool_choice",
       R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"all"}})",
       "ERROR $.tool_choice.type"},
      {"stop_sequence_not_string",
       R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],"stop_sequences":[1]})",
       "ERROR $.stop_sequences[0]"},
      {"not_an_object", R"([1])", "ERROR $"},
      // Wrong types never throw: each is a 400 naming the field.
      {"role_not_string", R"({"max_tokens":1,"messages":[{"role":5,"content":"x"}]})",
       "ERROR $.messages[0].role"},
      {"block_type_not_string",
       R"({"max_tokens":1,"messages":[{"role":"user","content":[{"type":{}}]}]})",
       "ERROR $.messages[0].content[0]"},
      {"is_error_not_boolean",
       R"({"max_tokens":1,"messages":[{"role":"user","content":[
          {"type":"tool_result","tool_use_id":"a","is_error":"yes"}]}]})",
       "ERROR $.messages[0].content[0].is_error"},
  };
  testing::check_translations(rows, [](const json::value& b, json::value& chat) {
    return detail::messages_to_chat(b, chat);
  });
  // count_tokens bodies need no max_tokens.
  json::value chat;
  EXPECT_FALSE(detail::messages_to_chat(parse(R"({"messages":[{"role":"user","content":"x"}]})"),
                                        chat, true));
}

// The message the events assemble (as the SDK's finalMessage() does).
json::value assemble(const std::vector<std::pair<std::string, json::value>>& events) {
  json::value msg;
  std::vector<std::string> partial;
  for (const auto& [name, d] : events) {
    EXPECT_EQ(d["type"], name);
    if (name == "message_start") {
      msg = d["message"];
    } else if (name == "content_block_start") {
      EXPECT_EQ(d["index"], msg["content"].size());
      msg["content"].push_back(d["content_block"]);
      partial.emplace_back();
    } else if (name == "content_block_delta") {
      auto& block = msg["content"][d["index"].get<std::size_t>()];
      const auto& delta = d["delta"];
      if (delta["type"] == "text_delta") {
        block["text"] = block["text"].get<std::string>() + delta["text"].get<std::string>();
      } else if (delta["type"] == "thinking_delta") {
        block["thinking"] =
            block["thinking"].get<std::string>() + delta["thinking"].get<std::string>();
      } else if (delta["type"] == "signature_delta") {
        block["signature"] = delta["signature"];
      } else if (delta["type"] == "input_json_delta") {
        partial[d["index"].get<std::size_t>()] += delta["partial_json"].get<std::string>();
      }
    } else if (name == "content_block_stop") {
      const auto i = d["index"].get<std::size_t>();
      if (msg["content"][i]["type"] == "tool_use") msg["content"][i]["input"] = parse(partial[i]);
    } else if (name == "message_delta") {
      msg["stop_reason"] = d["delta"]["stop_reason"];
      msg["usage"] = d["usage"];
    }
  }
  return msg;
}

const std::string weather_tools =
    R"("tools":[{"name":"get_weather","input_schema":{"type":"object","properties":
       {"city":{"type":"string"}},"required":["city"]}}])";

std::string messages_body(const std::string& extra = "") {
  return R"({"model":"m","max_tokens":50,"messages":[{"role":"user","content":"Weather?"}])" +
         extra + "}";
}

TEST(MessagesApi, TextAndToolUseStreamedAndNot) {
  gateway_harness h;
  const std::string call =
      "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Par\xC3\xAEs\"}}\n</tool_call>";
  h.backend.reply_with(scripted_reply{.chunks = split_chars(call, 3), .tokens_evaluated = 17});
  int status = 0;
  auto whole = h.post_json("/v1/messages", messages_body("," + weather_tools), &status);
  ASSERT_EQ(status, 200) << json::dump(whole);
  EXPECT_EQ(whole["type"], "message");
  EXPECT_EQ(whole["role"], "assistant");
  EXPECT_EQ(whole["id"].get<std::string>().rfind("msg_", 0), 0u);
  EXPECT_EQ(whole["stop_reason"], "tool_use");
  ASSERT_EQ(whole["content"].size(), 2u) << json::dump(whole);
  EXPECT_EQ(whole["content"][0]["type"], "text");
  EXPECT_EQ(whole["content"][1]["type"], "tool_use");
  EXPECT_EQ(whole["content"][1]["name"], "get_weather");
  EXPECT_EQ(whole["content"][1]["input"], parse("{\"city\":\"Par\xC3\xAEs\"}"));
  EXPECT_EQ(whole["usage"]["input_tokens"], 17);

  auto [st, text] =
      h.post("/v1/messages", messages_body("," + weather_tools + R"(,"stream":true)"));
  ASSERT_EQ(st, 200) << text;
  const auto events = events_of(text);
  ASSERT_GE(events.size(), 6u);
  EXPECT_EQ(events.front().first, "message_start");
  EXPECT_EQ(events[1].first, "ping");
  EXPECT_EQ(events[events.size() - 2].first, "message_delta");
  EXPECT_EQ(events.back().first, "message_stop");
  json::value streamed = assemble(events);
  streamed["id"] = whole["id"];
  EXPECT_EQ(streamed["content"][1]["id"].get<std::string>().empty(), false);
  streamed["content"][1]["id"] = whole["content"][1]["id"];
  EXPECT_EQ(streamed["content"], whole["content"]) << json::dump(streamed);
  EXPECT_EQ(streamed["stop_reason"], "tool_use");
}

TEST(MessagesApi, ThinkingBlocksStreamedAndNot) {
  std::ifstream in(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
  std::stringstream source;
  source << in.rdbuf();
  gateway_harness h(source.str());
  h.backend.reply_with(scripted_reply{.chunks = split_chars("<think>\nhmm\n</think>\nYes.", 4)});
  int status = 0;
  auto whole =
      h.post_json("/v1/messages",
                  messages_body(R"(,"thinking":{"type":"enabled","budget_tokens":64})"), &status);
  ASSERT_EQ(status, 200) << json::dump(whole);
  ASSERT_EQ(whole["content"].size(), 2u) << json::dump(whole);
  EXPECT_EQ(whole["content"][0]["type"], "thinking");
  EXPECT_EQ(whole["content"][0]["thinking"], "hmm\n");
  EXPECT_EQ(whole["content"][1], parse(R"({"type":"text","text":"Yes."})"));
  EXPECT_EQ(whole["stop_reason"], "end_turn");
  auto [st, text] = h.post("/v1/messages", messages_body(R"(,"stream":true)"));
  ASSERT_EQ(st, 200);
  const json::value streamed = assemble(events_of(text));
  EXPECT_EQ(streamed["content"], whole["content"]) << json::dump(streamed);
}

TEST(MessagesApi, ErrorsInAnthropicsShape) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, {.api_keys = {"sk-a"}});
  auto c = h.client();
  const httplib::Headers key = {{"x-api-key", "sk-a"}, {"anthropic-version", "2023-06-01"}};
  struct row {
    std::string body;
    httplib::Headers headers;
    int status;
    const char* type;
  };
  h.backend.reply_with(scripted_reply{.status = 500, .raw_body = R"({"error":{"message":"x"}})"});
  const std::vector<row> rows = {
      {messages_body(), {}, 401, "authentication_error"},
      {R"({"messages":[{"role":"user","content":"x"}]})", key, 400, "invalid_request_error"},
      {"{", key, 400, "invalid_request_error"},
      {R"({"max_tokens":1,"messages":[{"role":"user","content":[{"type":"video"}]}]})", key, 400,
       "invalid_request_error"},
      {messages_body(), key, 502, "api_error"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.body);
    auto res = c.Post("/v1/messages", r.headers, r.body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, r.status);
    auto v = parse(res->body);
    EXPECT_EQ(v["type"], "error") << res->body;
    EXPECT_EQ(v["error"]["type"], r.type) << res->body;
    EXPECT_TRUE(v["error"]["message"].is_string());
  }
}

// stop_reason stop_sequence only when one of the request's stop strings ended the answer (a
// template's own end-of-turn stop is end_turn), streamed and not.
TEST(MessagesApi, StopSequenceOnlyForTheRequestsStops) {
  gateway_harness h;
  const std::string body = messages_body(R"(,"stop_sequences":["END"])");
  struct row {
    const char* stopping_word;
    const char* reason;
    json::value sequence;
  };
  const std::vector<row> rows = {{"END", "stop_sequence", "END"},
                                 {"<|im_end|>", "end_turn", nullptr},
                                 {"", "end_turn", nullptr}};
  for (const auto& r : rows) {
    SCOPED_TRACE(r.stopping_word);
    h.backend.reply_with(
        scripted_reply{.chunks = {"Done"}, .stop_type = "word", .stopping_word = r.stopping_word});
    int status = 0;
    auto whole = h.post_json("/v1/messages", body, &status);
    ASSERT_EQ(status, 200) << json::dump(whole);
    EXPECT_EQ(whole["stop_reason"], r.reason);
    EXPECT_EQ(whole["stop_sequence"], r.sequence);
    auto stream_body = parse(body);
    stream_body["stream"] = true;
    auto [st, text] = h.post("/v1/messages", json::dump(stream_body));
    ASSERT_EQ(st, 200);
    const auto events = events_of(text);
    ASSERT_GE(events.size(), 2u);
    const auto& delta = events[events.size() - 2].second["delta"];
    EXPECT_EQ(delta["stop_reason"], r.reason);
    EXPECT_EQ(delta["stop_sequence"], r.sequence);
  }
}

// Hostile sizes: a body over the limit is a 413 in the shape of the API it was sent to.
TEST(MessagesApi, HugeBodiesAre413InEachApisShape) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, {.max_body_bytes = 4096});
  const std::string huge = messages_body().substr(0, 40) + std::string(8192, ' ') + "}";
  auto [st, text] = h.post("/v1/messages", huge);
  EXPECT_EQ(st, 413);
  auto v = parse(text);
  EXPECT_EQ(v["type"], "error") << text;
  EXPECT_EQ(v["error"]["type"], "request_too_large") << text;
  auto [rst, rtext] = h.post("/v1/responses", huge);
  EXPECT_EQ(rst, 413);
  EXPECT_EQ(parse(rtext)["error"]["code"], "body_too_large") << rtext;
}

// A backend that fails after the stream started: the stream ends with Anthropic's error event.
TEST(MessagesApi, BackendFailureMidStreamIsAnErrorEvent) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = {"Par", "tial"}, .fail_mid_stream = true});
  auto [st, text] = h.post("/v1/messages", messages_body(R"(,"stream":true)"));
  ASSERT_EQ(st, 200) << text;
  const auto events = events_of(text);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().first, "message_start");
  EXPECT_EQ(events.back().first, "error");
  EXPECT_EQ(events.back().second["type"], "error");
  EXPECT_EQ(events.back().second["error"]["type"], "api_error");
}

TEST(MessagesApi, CountTokens) {
  gateway_harness h;
  int status = 0;
  auto v = h.post_json("/v1/messages/count_tokens",
                       R"({"model":"m","messages":[{"role":"user","content":"hi"}]})", &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  ASSERT_TRUE(v["input_tokens"].is_number_integer());
  // The fixture backend counts a byte per token: the rendered prompt's size.
  auto prepared =
      h.post_json("/v1/chat/prepare", R"({"messages":[{"role":"user","content":"hi"}]})", &status);
  EXPECT_EQ(v["input_tokens"], prepared["prompt"].get<std::string>().size());
  gateway_harness openai(testing::hermes_template, backend_type::openai);
  auto e = openai.post_json("/v1/messages/count_tokens",
                            R"({"messages":[{"role":"user","content":"hi"}]})", &status);
  EXPECT_EQ(status, 502);
  EXPECT_EQ(e["type"], "error");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("cannot count tokens"),
            std::string::npos);
}

// The agent loop: a call, its result sent back as a tool_result, then a final answer; the
// second prompt is the one Chat Completions renders for the same conversation.
TEST(MessagesApi, ToolLoopRendersTheSamePromptAsChatCompletions) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{
      .chunks = {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                 "\"Paris\"}}\n</tool_call>"}});
  int status = 0;
  auto first = h.post_json("/v1/messages", messages_body("," + weather_tools), &status);
  ASSERT_EQ(status, 200) << json::dump(first);
  const json::value use = first["content"][0];
  ASSERT_EQ(use["type"], "tool_use");
  json::value turn2 = parse(messages_body("," + weather_tools));
  turn2["messages"].push_back({{"role", "assistant"}, {"content", first["content"]}});
  turn2["messages"].push_back({{"role", "user"},
                               {"content", json::value::array({{{"type", "tool_result"},
                                                                {"tool_use_id", use["id"]},
                                                                {"content", "sunny, 21 C"}}})}});
  h.backend.reply_with(scripted_reply{.chunks = {"It is sunny."}});
  auto second = h.post_json("/v1/messages", json::dump(turn2), &status);
  ASSERT_EQ(status, 200) << json::dump(second);
  EXPECT_EQ(second["content"][0]["text"], "It is sunny.");
  EXPECT_EQ(second["stop_reason"], "end_turn");
  const std::string messages_prompt = h.backend.last_request()["prompt"].get<std::string>();

  json::value chat = parse(R"({"messages":[{"role":"user","content":"Weather?"}],"tools":[
    {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
     "properties":{"city":{"type":"string"}},"required":["city"]}}}]})");
  chat["messages"].push_back(
      {{"role", "assistant"},
       {"content", ""},
       {"tool_calls", json::value::array({{{"id", use["id"]},
                                           {"type", "function"},
                                           {"function",
                                            {{"name", "get_weather"},
                                             {"arguments", json::dump(use["input"])}}}}})}});
  chat["messages"].push_back(
      {{"role", "tool"}, {"tool_call_id", use["id"]}, {"content", "sunny, 21 C"}});
  auto prepared = h.post_json("/v1/chat/prepare", json::dump(chat), &status);
  ASSERT_EQ(status, 200) << json::dump(prepared);
  EXPECT_EQ(messages_prompt, prepared["prompt"].get<std::string>());
}

}  // namespace
}  // namespace chatpeg::server

// OpenAI Responses API: the translator (table rows: what each body becomes, or the JSON path and
// reason it is refused), and the gateway end to end in front of the fixture backend — a text
// answer, a function_call item, reasoning, an answer cut by max_output_tokens (incomplete), the
// stream's events (numbered in order; their deltas assemble the non-streamed output), errors in
// OpenAI's shape (stateless refusals, built-in tools, 401), and a two-turn tool loop whose
// second prompt is the one Chat Completions renders for the same conversation.
#include "server/responses_api.h"

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

TEST(ResponsesApi, TranslatesBodies) {
  const std::vector<translate_row> rows = {
      {"string_input", R"({"model":"m","input":"hi"})",
       R"({"model":"m","messages":[{"role":"user","content":"hi"}]})"},
      {"instructions_items_and_options",
       R"({"instructions":"Be brief.","input":[
          {"role":"developer","content":"D"},
          {"type":"message","role":"user","content":[{"type":"input_text","text":"a"},
            {"type":"input_text","text":"b"}]}],
          "max_output_tokens":40,"temperature":0.1,"top_p":0.5,"stream":true,
          "parallel_tool_calls":false,
          "text":{"format":{"type":"json_schema","name":"r","schema":{"type":"object"},
            "strict":true}}})",
       R"({"messages":[{"role":"system","content":"Be brief."},{"role":"system","content":"D"},
          {"role":"user","content":"ab"}],"parallel_tool_calls":false,
          "response_format":{"type":"json_schema","json_schema":{"name":"r",
            "schema":{"type":"object"},"strict":true}},
          "max_tokens":40,"temperature":0.1,"top_p":0.5,"stream":true})"},
      {"tool_loop",
       R"({"input":[{"role":"user","content":"w?"},
          {"type":"reasoning","id":"rs_1","summary":[],
           "content":[{"type":"reasoning_text","text":"T"}]},
          {"type":"function_call","call_id":"c1","name":"f","arguments":"{\"a\":1}"},
          {"type":"function_call","call_id":"c2","name":"f","arguments":"{}"},
          {"type":"function_call_output","call_id":"c1","output":"r1"},
          {"type":"function_call_output","call_id":"c2","output":"r2"}],
          "tools":[{"type":"function","name":"f","description":"F",
            "parameters":{"type":"object"}}],
          "tool_choice":{"type":"function","name":"f"}})",
       R"({"messages":[{"role":"user","content":"w?"},
          {"role":"assistant","content":"","reasoning_content":"T","tool_calls":[
            {"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},
            {"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},
          {"role":"tool","tool_call_id":"c1","content":"r1"},
          {"role":"tool","tool_call_id":"c2","content":"r2"}],
          "tools":[{"type":"function","function":{"name":"f","description":"F",
            "parameters":{"type":"object"}}}],
          "tool_choice":{"type":"function","function":{"name":"f"}}})"},
      {"assistant_text_then_call",
       R"({"input":[{"role":"user","content":"x"},
          {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Sure."}]},
          {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}],
          "tool_choice":"required","tools":[{"type":"function","name":"f"}]})",
       R"({"messages":[{"role":"user","content":"x"},
          {"role":"assistant","content":"Sure.","tool_calls":[
            {"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}],
          "tools":[{"type":"function","function":{"name":"f",
            "parameters":{"type":"object","properties":{}}}}],
          "tool_choice":"required"})"},
      {"previous_response_id", R"({"input":"x","previous_response_id":"resp_1"})",
       "ERROR $.previous_response_id"},
      {"store_true", R"({"input":"x","store":true})", "ERROR $.store"},
      {"no_input", R"({"model":"m"})", "ERROR $.input"},
      {"empty_input", R"({"input":[]})", "ERROR $.input"},
      {"builtin_tool", R"({"input":"x","tools":[{"type":"web_search"}]})", "ERROR $.tools[0].type"},
      {"image_part",
       R"({"input":[{"role":"user","content":[{"type":"input_image","image_url":"u"}]}]})",
       "ERROR $.input[0].content[0]"},
      {"unknown_item", R"({"input":[{"type":"computer_call"}]})", "ERROR $.input[0].type"},
      {"bad_role", R"({"input":[{"role":"tool","content":"x"}]})", "ERROR $.input[0].role"},
      {"call_without_call_id",
       R"({"input":[{"type":"function_call","name":"f","arguments":"{}"}]})",
       "ERROR $.input[0].call_id"},
      {"zero_max_output_tokens", R"({"input":"x","max_output_tokens":0})",
       "ERROR $.max_output_tokens"},
      {"bad_tool_choice", R"({"input":"x","tool_choice":"any"})", "ERROR $.tool_choice"},
      {"bad_format", R"({"input":"x","text":{"format":{"type":"yaml"}}})",
       "ERROR $.text.format.type"},
      // Wrong types never throw: each is a 400 naming the field.
      {"type_not_string", R"({"input":[{"type":5}]})", "ERROR $.input[0].type"},
      {"role_not_string", R"({"input":[{"role":["user"],"content":"x"}]})",
       "ERROR $.input[0].role"},
      {"tool_type_not_string", R"({"input":"x","tools":[{"type":1}]})", "ERROR $.tools[0].type"},
      {"format_not_object", R"({"input":"x","text":{"format":7}})", "ERROR $.text.format.type"},
  };
  testing::check_translations(rows, [](const json::value& b, json::value& chat) {
    return detail::responses_to_chat(b, chat);
  });
}

// The output the deltas assemble (as the SDK's stream helper does), checking each event's type,
// its sequence number and that the done events repeat what the deltas said.
json::value assemble(const std::vector<std::pair<std::string, json::value>>& events) {
  json::value output = json::value::array();
  std::int64_t expected_sequence = 0;
  for (const auto& [name, d] : events) {
    EXPECT_EQ(d["type"], name);
    EXPECT_EQ(d["sequence_number"], expected_sequence++);
    if (name == "response.output_item.added") {
      EXPECT_EQ(d["output_index"], output.size());
      json::value item = d["item"];
      if (item["type"] == "function_call") item["arguments"] = "";
      if (item["type"] != "function_call") item["text"] = "";
      output.push_back(std::move(item));
    } else if (name == "response.output_text.delta" || name == "response.reasoning_text.delta") {
      auto& item = output[d["output_index"].get<std::size_t>()];
      item["text"] = item["text"].get<std::string>() + d["delta"].get<std::string>();
    } else if (name == "response.function_call_arguments.delta") {
      auto& item = output[d["output_index"].get<std::size_t>()];
      item["arguments"] = item["arguments"].get<std::string>() + d["delta"].get<std::string>();
    } else if (name == "response.output_text.done" || name == "response.reasoning_text.done") {
      EXPECT_EQ(d["text"], output[d["output_index"].get<std::size_t>()]["text"]);
    } else if (name == "response.function_call_arguments.done") {
      EXPECT_EQ(d["arguments"], output[d["output_index"].get<std::size_t>()]["arguments"]);
    } else if (name == "response.output_item.done") {
      output[d["output_index"].get<std::size_t>()] = d["item"];
    }
  }
  return output;
}

// Items without their ids (ids differ between two responses).
json::value without_ids(json::value items) {
  for (auto& i : items) {
    i.erase("id");
    if (i["type"] == "function_call") i.erase("call_id");
  }
  return items;
}

const std::string weather_tools =
    R"("tools":[{"type":"function","name":"get_weather","parameters":{"type":"object",
       "properties":{"city":{"type":"string"}},"required":["city"]}}])";

std::string responses_body(const std::string& extra = "") {
  return R"({"model":"m","input":"Weather?")" + extra + "}";
}

TEST(ResponsesApi, TextAndFunctionCallStreamedAndNot) {
  gateway_harness h;
  const std::string call =
      "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Par\xC3\xAEs\"}}\n</tool_call>";
  h.backend.reply_with(scripted_reply{.chunks = split_chars(call, 3), .tokens_evaluated = 9});
  int status = 0;
  auto whole = h.post_json("/v1/responses", responses_body("," + weather_tools), &status);
  ASSERT_EQ(status, 200) << json::dump(whole);
  EXPECT_EQ(whole["object"], "response");
  EXPECT_EQ(whole["id"].get<std::string>().rfind("resp_", 0), 0u);
  EXPECT_EQ(whole["status"], "completed");
  EXPECT_EQ(whole["incomplete_details"], nullptr);
  ASSERT_EQ(whole["output"].size(), 2u) << json::dump(whole);
  EXPECT_EQ(whole["output"][0]["type"], "message");
  EXPECT_EQ(whole["output"][0]["content"][0]["type"], "output_text");
  const json::value fc = whole["output"][1];
  EXPECT_EQ(fc["type"], "function_call");
  EXPECT_EQ(fc["name"], "get_weather");
  EXPECT_FALSE(fc["call_id"].get<std::string>().empty());
  EXPECT_EQ(parse(fc["arguments"].get<std::string>()), parse("{\"city\":\"Par\xC3\xAEs\"}"));
  EXPECT_EQ(whole["usage"]["input_tokens"], 9);
  EXPECT_EQ(whole["usage"]["total_tokens"],
            9 + whole["usage"]["output_tokens"].get<std::int64_t>());

  auto [st, text] =
      h.post("/v1/responses", responses_body("," + weather_tools + R"(,"stream":true)"));
  ASSERT_EQ(st, 200) << text;
  const auto events = events_of(text);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events[0].first, "response.created");
  EXPECT_EQ(events[1].first, "response.in_progress");
  EXPECT_EQ(events.back().first, "response.completed");
  const json::value output = assemble(events);
  EXPECT_EQ(without_ids(output), without_ids(whole["output"])) << json::dump(output);
  EXPECT_EQ(without_ids(events.back().second["response"]["output"]), without_ids(whole["output"]));
}

TEST(ResponsesApi, ReasoningAndIncompleteAnswers) {
  std::ifstream in(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
  std::stringstream source;
  source << in.rdbuf();
  gateway_harness h(source.str());
  h.backend.reply_with(scripted_reply{.chunks = split_chars("<think>\nhmm\n</think>\nYes.", 4)});
  int status = 0;
  auto whole = h.post_json("/v1/responses", responses_body(), &status);
  ASSERT_EQ(status, 200) << json::dump(whole);
  ASSERT_EQ(whole["output"].size(), 2u) << json::dump(whole);
  EXPECT_EQ(whole["output"][0]["type"], "reasoning");
  EXPECT_EQ(whole["output"][0]["content"][0], parse(R"({"type":"reasoning_text","text":"hmm\n"})"));
  EXPECT_EQ(whole["output"][1]["content"][0]["text"], "Yes.");
  auto [st, text] = h.post("/v1/responses", responses_body(R"(,"stream":true)"));
  ASSERT_EQ(st, 200);
  EXPECT_EQ(without_ids(assemble(events_of(text))), without_ids(whole["output"]));

  h.backend.reply_with(scripted_reply{.chunks = {"Cut sh"}, .stop_type = "limit"});
  auto cut = h.post_json("/v1/responses", responses_body(R"(,"max_output_tokens":2)"), &status);
  ASSERT_EQ(status, 200) << json::dump(cut);
  EXPECT_EQ(cut["status"], "incomplete");
  EXPECT_EQ(cut["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(h.backend.last_request()["n_predict"], 2);
  auto [cst, ctext] =
      h.post("/v1/responses", responses_body(R"(,"max_output_tokens":2,"stream":true)"));
  ASSERT_EQ(cst, 200);
  const auto events = events_of(ctext);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().first, "response.incomplete");
  EXPECT_EQ(events.back().second["response"]["incomplete_details"]["reason"], "max_output_tokens");
}

TEST(ResponsesApi, ErrorsInOpenAIsShape) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, {.api_keys = {"sk-r"}});
  auto c = h.client();
  const httplib::Headers key = {{"Authorization", "Bearer sk-r"}};
  struct row {
    std::string body;
    httplib::Headers headers;
    int status;
    const char* param;  // nullptr: none
  };
  const std::vector<row> rows = {
      {responses_body(), {}, 401, nullptr},
      {responses_body(R"(,"previous_response_id":"resp_x")"), key, 400, "$.previous_response_id"},
      {responses_body(R"(,"store":true)"), key, 400, "$.store"},
      {responses_body(R"(,"tools":[{"type":"file_search"}])"), key, 400, "$.tools[0].type"},
      {"[1]", key, 400, "$"},
      {responses_body(), key, 502, nullptr},  // the backend fails
  };
  h.backend.reply_with(scripted_reply{.status = 500, .raw_body = R"({"error":{"message":"x"}})"});
  for (const auto& r : rows) {
    SCOPED_TRACE(r.body);
    auto res = c.Post("/v1/responses", r.headers, r.body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, r.status);
    auto v = parse(res->body);
    ASSERT_TRUE(v.contains("error")) << res->body;
    EXPECT_TRUE(v["error"]["message"].is_string());
    if (r.param) {
      EXPECT_EQ(v["error"]["param"], r.param) << res->body;
    }
  }
}

// The agent loop: a function call, its output sent back, a final answer; the second prompt is
// the one Chat Completions renders for the same conversation.
TEST(ResponsesApi, ToolLoopRendersTheSamePromptAsChatCompletions) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{
      .chunks = {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                 "\"Paris\"}}\n</tool_call>"}});
  int status = 0;
  auto first = h.post_json("/v1/responses", responses_body("," + weather_tools), &status);
  ASSERT_EQ(status, 200) << json::dump(first);
  const json::value fc = first["output"][0];
  ASSERT_EQ(fc["type"], "function_call");
  json::value turn2 = parse(responses_body("," + weather_tools));
  turn2["input"] = json::value::array(
      {{{"role", "user"}, {"content", "Weather?"}},
       fc,
       {{"type", "function_call_output"}, {"call_id", fc["call_id"]}, {"output", "sunny, 21 C"}}});
  h.backend.reply_with(scripted_reply{.chunks = {"It is sunny."}});
  auto second = h.post_json("/v1/responses", json::dump(turn2), &status);
  ASSERT_EQ(status, 200) << json::dump(second);
  EXPECT_EQ(second["output"][0]["content"][0]["text"], "It is sunny.");
  const std::string responses_prompt = h.backend.last_request()["prompt"].get<std::string>();

  json::value chat = parse(R"({"messages":[{"role":"user","content":"Weather?"}],"tools":[
    {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
     "properties":{"city":{"type":"string"}},"required":["city"]}}}]})");
  chat["messages"].push_back(
      {{"role", "assistant"},
       {"content", ""},
       {"tool_calls",
        json::value::array(
            {{{"id", fc["call_id"]},
              {"type", "function"},
              {"function", {{"name", "get_weather"}, {"arguments", fc["arguments"]}}}}})}});
  chat["messages"].push_back(
      {{"role", "tool"}, {"tool_call_id", fc["call_id"]}, {"content", "sunny, 21 C"}});
  auto prepared = h.post_json("/v1/chat/prepare", json::dump(chat), &status);
  ASSERT_EQ(status, 200) << json::dump(prepared);
  EXPECT_EQ(responses_prompt, prepared["prompt"].get<std::string>());
}

}  // namespace
}  // namespace chatpeg::server

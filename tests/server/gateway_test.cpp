// End-to-end gateway tests on loopback: OpenAI response shapes (stream and non-stream), what
// reaches the backend (prompt, n_predict, grammar, triggers, preserved tokens), every error
// path (400 / 404 / 413 / 502, error event mid-stream), the failure policy for model output,
// cancellation on client disconnect, the request log, and the descriptor limit raised at bind.
#include "chatpeg/server/gateway.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "gateway_harness.h"

namespace chatpeg::server {
namespace {

using testing::gateway_harness;
using testing::scripted_reply;
using testing::split_chars;

std::string chat_body(const std::string& extra = "", const std::string& user = "Hi there") {
  return R"({"model":"m","messages":[{"role":"user","content":")" + user + R"("}])" + extra + "}";
}

TEST(Gateway, HealthAndModels) {
  gateway_harness h;
  int status = 0;
  auto c = h.client();
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  auto v = json::parse(models->body);
  ASSERT_TRUE(v);
  EXPECT_EQ((*v)["object"], "list");
  EXPECT_EQ((*v)["data"][0]["id"], "test-model");
  EXPECT_EQ((*v)["data"][0]["object"], "model");
  (void)status;
}

TEST(Gateway, NonStreamingContent) {
  gateway_harness h;
  const std::string text = "Hello, w\xC3\xB6rld \xE4\xBD\xA0\xE5\xA5\xBD";
  h.backend.reply_with(scripted_reply{.chunks = split_chars(text, 2), .tokens_evaluated = 21});
  int status = 0;
  auto v = h.post_json("/v1/chat/completions",
                       chat_body(R"(,"max_tokens":33,"temperature":0.2,"seed":7,"stop":"END")"),
                       &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  EXPECT_EQ(v["object"], "chat.completion");
  EXPECT_EQ(v["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_TRUE(v["created"].is_number_integer());
  EXPECT_EQ(v["model"], "test-model");
  const auto& choice = v["choices"][0];
  EXPECT_EQ(choice["index"], 0);
  EXPECT_EQ(choice["message"]["role"], "assistant");
  EXPECT_EQ(choice["message"]["content"], text);
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_EQ(v["usage"]["prompt_tokens"], 21);
  EXPECT_EQ(v["usage"]["completion_tokens"], split_chars(text, 2).size());
  EXPECT_EQ(v["usage"]["total_tokens"], 21 + split_chars(text, 2).size());

  const auto sent = h.backend.last_request();
  const std::string prompt = sent["prompt"];
  EXPECT_NE(prompt.find("<|im_start|>user\nHi there<|im_end|>"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.substr(prompt.size() - 22), "<|im_start|>assistant\n");
  EXPECT_EQ(sent["n_predict"], 33);
  EXPECT_EQ(sent["temperature"], 0.2);
  EXPECT_EQ(sent["seed"], 7);
  EXPECT_EQ(sent["stream"], false);
  EXPECT_EQ(sent["return_tokens"], true);
  bool has_end = false;
  for (const auto& s : sent["stop"]) has_end = has_end || s == "END";
  EXPECT_TRUE(has_end) << json::dump(sent);
}

TEST(Gateway, MaxCompletionTokensWinsAndLimitIsLength) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = {"cut ", "short"}, .stop_type = "limit"});
  int status = 0;
  auto v = h.post_json("/v1/chat/completions",
                       chat_body(R"(,"max_tokens":50,"max_completion_tokens":2)"), &status);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(h.backend.last_request()["n_predict"], 2);
  EXPECT_EQ(v["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(v["choices"][0]["message"]["content"], "cut short");
}

TEST(Gateway, StreamingContentShape) {
  gateway_harness h;
  const std::string text = "Stre\xC3\xA4m \xF0\x9F\x98\x80 done.";
  h.backend.reply_with(scripted_reply{.chunks = split_chars(text, 1), .write_size = 3});
  auto r = h.stream(chat_body(R"(,"stream":true,"stream_options":{"include_usage":true})"));
  ASSERT_EQ(r.status, 200) << r.raw;
  ASSERT_GE(r.events.size(), 3u);
  EXPECT_EQ(r.events.front()["choices"][0]["delta"]["role"], "assistant");
  for (const auto& e : r.events) {
    EXPECT_EQ(e["object"], "chat.completion.chunk");
    EXPECT_EQ(e["id"], r.events.front()["id"]);
    EXPECT_EQ(e["model"], "test-model");
  }
  EXPECT_EQ(r.role, "assistant");
  EXPECT_EQ(r.content, text);
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_TRUE(r.saw_done);
  EXPECT_TRUE(r.done_last);
  // Usage chunk: empty choices, counted tokens.
  const auto& usage_event = r.events.back();
  EXPECT_TRUE(usage_event["choices"].empty());
  EXPECT_EQ(r.usage["completion_tokens"], split_chars(text, 1).size());
  EXPECT_EQ(h.backend.last_request()["stream"], true);
  // Only the final chunk has a finish reason; it precedes the usage chunk.
  const auto& final_event = r.events[r.events.size() - 2];
  EXPECT_EQ(final_event["choices"][0]["finish_reason"], "stop");
  for (std::size_t i = 0; i + 2 < r.events.size(); ++i) {
    EXPECT_TRUE(r.events[i]["choices"][0]["finish_reason"].is_null()) << i;
  }
}

TEST(Gateway, StreamingWithoutUsageHasNoUsageChunk) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = {"a", "b"}});
  auto r = h.stream(chat_body(R"(,"stream":true)"));
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.usage.is_null());
  EXPECT_EQ(r.events.back()["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(r.content, "ab");
}

struct bad_request_case {
  const char* name;
  std::string body;
  int status;
  std::string param;        // expected error.param ("" = null)
  std::string message_has;  // substring of error.message
};

TEST(Gateway, BadRequestsAre400WithOpenAIErrorObject) {
  gateway_harness h;
  const std::string tools = std::string(R"(,"tools":)") + testing::weather_tools;
  const std::vector<bad_request_case> cases = {
      {"invalid JSON", R"({"messages": [)", 400, "", "invalid JSON"},
      {"not an object", R"([1,2])", 400, "$", "object"},
      {"no messages", R"({"model":"m"})", 400, "$.messages", "missing"},
      {"messages wrong type", R"({"messages":"hi"})", 400, "$.messages", ""},
      {"role wrong type", R"({"messages":[{"role":5,"content":"x"}]})", 400, "$.messages[0].role",
       ""},
      {"temperature string", chat_body(R"(,"temperature":"hot")"), 400, "$.temperature", "number"},
      {"max_tokens float", chat_body(R"(,"max_tokens":1.5)"), 400, "$.max_tokens", "integer"},
      {"max_tokens zero", chat_body(R"(,"max_tokens":0)"), 400, "$.max_tokens", "at least 1"},
      {"max_tokens 2^32+5", chat_body(R"(,"max_tokens":4294967301)"), 400, "$.max_tokens",
       "at most 2147483647"},
      {"max_tokens 2^31", chat_body(R"(,"max_tokens":2147483648)"), 400, "$.max_tokens", "at most"},
      {"max_tokens 2^64-1", chat_body(R"(,"max_tokens":18446744073709551615)"), 400, "$.max_tokens",
       "at most"},
      {"max_completion_tokens negative", chat_body(R"(,"max_completion_tokens":-3)"), 400,
       "$.max_completion_tokens", "at least 1"},
      {"kwargs replacing the messages",
       chat_body(R"(,"chat_template_kwargs":{"messages":[{"role":"user","content":"x"}]})"), 400,
       "$.chat_template_kwargs.messages", "may not set"},
      {"stream not bool", chat_body(R"(,"stream":"yes")"), 400, "$.stream", "boolean"},
      {"stop wrong element", chat_body(R"(,"stop":["a",3])"), 400, "$.stop[1]", "string"},
      {"include_usage not bool", chat_body(R"(,"stream_options":{"include_usage":1})"), 400,
       "$.stream_options.include_usage", "boolean"},
      {"tools + grammar", chat_body(tools + R"(,"grammar":"root ::= \"x\"")"), 400, "$.grammar",
       "grammar"},
      {"unknown named tool",
       chat_body(tools + R"(,"tool_choice":{"type":"function","function":{"name":"nope"}})"), 400,
       "$.tool_choice.function.name", "nope"},
      {"tool_choice bad string", chat_body(tools + R"(,"tool_choice":"sometimes")"), 400,
       "$.tool_choice", ""},
      {"template raised", R"({"messages":[{"role":"bogus","content":"x"}]})", 400, "",
       "bogus role is not allowed"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    for (const char* path : {"/v1/chat/completions", "/v1/chat/prepare"}) {
      int status = 0;
      auto v = h.post_json(path, c.body, &status);
      EXPECT_EQ(status, c.status) << json::dump(v);
      ASSERT_TRUE(v.is_object() && v.contains("error")) << json::dump(v);
      const auto& e = v["error"];
      ASSERT_TRUE(e["message"].is_string());
      EXPECT_EQ(e["type"], "invalid_request_error");
      EXPECT_TRUE(e.contains("param") && e.contains("code"));
      if (!c.param.empty()) {
        EXPECT_EQ(e["param"], c.param) << json::dump(e);
      }
      EXPECT_NE(e["message"].get<std::string>().find(c.message_has), std::string::npos)
          << json::dump(e);
    }
  }
  EXPECT_TRUE(h.backend.requests().empty()) << "a bad request reached the backend";
}

TEST(Gateway, BodyTooLargeAndUnknownRoute) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, {.max_body_bytes = 256});
  int status = 0;
  auto v = h.post_json("/v1/chat/completions", chat_body("", std::string(400, 'x')), &status);
  EXPECT_EQ(status, 413);
  EXPECT_TRUE(v.contains("error")) << json::dump(v);
  auto c = h.client();
  auto r = c.Get("/v1/nothing");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  auto e = json::parse(r->body);
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["error"]["code"], "not_found");
}

TEST(Gateway, BackendFailuresAre502BeforeStreaming) {
  gateway_harness h;
  const std::vector<scripted_reply> failures = {
      {.status = 500, .raw_body = R"({"error":{"message":"model crashed"}})"},
      {.raw_body = "garbage, not JSON or SSE"},
  };
  for (const auto& f : failures) {
    h.backend.reply_with(f);
    for (const char* extra : {"", R"(,"stream":true)"}) {
      SCOPED_TRACE(std::string(f.raw_body) + extra);
      int status = 0;
      auto v = h.post_json("/v1/chat/completions", chat_body(extra), &status);
      EXPECT_EQ(status, 502) << json::dump(v);
      ASSERT_TRUE(v.contains("error")) << json::dump(v);
      EXPECT_EQ(v["error"]["type"], "backend_error");
      EXPECT_TRUE(v["error"]["code"].is_string());
    }
  }
}

TEST(Gateway, UnreachableBackendIs502) {
  testing::closed_port closed;
  ASSERT_NE(closed.port(), 0);
  auto tmpl = chat::chat_template::create(testing::hermes_template);
  ASSERT_TRUE(tmpl);
  auto g = gateway::create(
      *tmpl, {.server = {.port = 0, .log = log_format::none},
              .backend = {.url = closed.url(), .connect_timeout = std::chrono::seconds(2)}});
  ASSERT_TRUE(g);
  auto& gw = **g;
  ASSERT_TRUE(gw.bind());
  std::thread t([&] { (void)gw.listen(); });
  httplib::Client c("127.0.0.1", gw.port());
  for (int i = 0; i < 200 && !c.Get("/health"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (const char* extra : {"", R"(,"stream":true)"}) {
    auto r = c.Post("/v1/chat/completions", chat_body(extra), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 502);
    auto v = json::parse(r->body);
    ASSERT_TRUE(v);
    EXPECT_EQ((*v)["error"]["code"], "backend_unreachable");
  }
  gw.stop();
  t.join();
}

// A gateway holds two descriptors per stream (the client's and the backend's): binding raises
// the soft descriptor limit to the hard one.
TEST(Gateway, BindRaisesTheSoftDescriptorLimitToTheHardOne) {
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max == RLIM_INFINITY || saved.rlim_max < 128) {
    GTEST_SKIP() << "the hard limit is unbounded or too low to lower the soft one below it";
  }
  rlimit low = saved;
  low.rlim_cur = saved.rlim_max - 1;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  auto tmpl = chat::chat_template::create(testing::hermes_template);
  ASSERT_TRUE(tmpl);
  auto g = gateway::create(*tmpl, {.server = {.port = 0, .log = log_format::none}});
  ASSERT_TRUE(g);
  const auto bound = (*g)->bind();
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(bound) << bound.error().to_string();
  EXPECT_EQ(now.rlim_cur, saved.rlim_max);
}

TEST(Gateway, BackendErrorMidStreamEndsWithErrorEvent) {
  gateway_harness h;
  h.backend.reply_with(scripted_reply{.chunks = {"partial ", "answer"}, .fail_mid_stream = true});
  auto r = h.stream(chat_body(R"(,"stream":true)"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content, "partial answer");
  ASSERT_TRUE(r.error.is_object()) << r.raw;
  EXPECT_EQ(r.error["type"], "backend_error");
  EXPECT_TRUE(r.saw_done);
}

TEST(Gateway, OpenaiBackendType) {
  gateway_harness h(testing::hermes_template, backend_type::openai);
  h.backend.reply_with(scripted_reply{.chunks = split_chars("via openai", 3)});
  int status = 0;
  auto v = h.post_json("/v1/chat/completions", chat_body(R"(,"max_tokens":8)"), &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  EXPECT_EQ(v["choices"][0]["message"]["content"], "via openai");
  EXPECT_EQ(h.backend.paths().back(), "/v1/completions");
  const auto sent = h.backend.last_request();
  EXPECT_EQ(sent["max_tokens"], 8);
  EXPECT_FALSE(sent.contains("grammar"));
  auto r = h.stream(chat_body(R"(,"stream":true)"));
  EXPECT_EQ(r.content, "via openai");
  EXPECT_EQ(r.finish_reason, "stop");
}

TEST(Gateway, PrepareReportsWhatWouldBeSent) {
  gateway_harness h;
  int status = 0;
  auto v = h.post_json("/v1/chat/prepare", chat_body(R"(,"max_tokens":4,"stop":["X"])"), &status);
  ASSERT_EQ(status, 200) << json::dump(v);
  EXPECT_EQ(v["backend_type"], "llamacpp");
  EXPECT_TRUE(v["prompt"].is_string());
  EXPECT_EQ(v["backend_request"]["prompt"], v["prompt"]);
  EXPECT_EQ(v["backend_request"]["n_predict"], 4);
  EXPECT_TRUE(v.contains("grammar") && v.contains("grammar_lazy") &&
              v.contains("grammar_triggers") && v.contains("preserved_tokens"));
  EXPECT_TRUE(h.backend.requests().empty());
}

TEST(Gateway, ClientDisconnectCancelsBackend) {
  gateway_harness h;
  std::vector<std::string> many(400, "tok ");
  h.backend.reply_with(scripted_reply{.chunks = many, .delay = std::chrono::milliseconds(5)});
  {
    auto c = h.client();
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = chat_body(R"(,"stream":true)");
    req.set_header("Content-Type", "application/json");
    std::size_t got = 0;
    req.content_receiver = [&](const char*, std::size_t n, std::uint64_t, std::uint64_t) {
      got += n;
      return got < 200;  // read a little, then hang up
    };
    httplib::Response res;
    httplib::Error err;
    c.send(req, res, err);
  }
  // The fixture sees its reader (the gateway) go away well before its 2 s script ends.
  for (int i = 0; i < 1000 && h.backend.disconnects() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(h.backend.disconnects(), 1);
}

TEST(Gateway, LogsOneLinePerRequest) {
  gateway_harness h(testing::hermes_template, backend_type::llamacpp, {.log = log_format::json});
  h.backend.reply_with(scripted_reply{.chunks = {"x"}, .tokens_evaluated = 5});
  (void)h.post("/v1/chat/completions", chat_body());
  (void)h.post("/v1/chat/completions", "{");
  // The log line is written after the response went out: wait for it (bounded).
  std::vector<json::value> chat_lines;
  for (int attempt = 0; attempt < 500 && chat_lines.size() < 2; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    chat_lines.clear();
    for (const auto& l : h.log_lines()) {
      auto v = json::parse(l);
      ASSERT_TRUE(v) << l;
      if ((*v)["path"] == "/v1/chat/completions") chat_lines.push_back(*v);
    }
  }
  ASSERT_EQ(chat_lines.size(), 2u);
  // Lines are written when each response is done: the two may come in either order.
  if (chat_lines[0]["status"] != 200) std::swap(chat_lines[0], chat_lines[1]);
  EXPECT_EQ(chat_lines[0]["method"], "POST");
  EXPECT_EQ(chat_lines[0]["status"], 200);
  EXPECT_EQ(chat_lines[0]["prompt_tokens"], 5);
  EXPECT_EQ(chat_lines[0]["completion_tokens"], 1);
  EXPECT_TRUE(chat_lines[0]["latency_ms"].is_number());
  EXPECT_EQ(chat_lines[1]["status"], 400);
  EXPECT_TRUE(chat_lines[1]["note"].is_string());
}

}  // namespace
}  // namespace chatpeg::server

// Backend clients: SSE reassembly over every split, llama.cpp / OpenAI event decoding, the
// request bodies of both protocols, typed failures labelled by cause (unreachable, HTTP error,
// garbage, a closed connection, silence, the deadline, an error event) against the in-process
// fixture backend and a raw TCP one, and cancellation that leaves a silent backend at once.
#include "chatpeg/server/backend.h"

#include <gtest/gtest.h>

#include <thread>

#include "fixture_backend.h"
#include "raw_backend.h"
#include "server/chat_completions.h"

namespace chatpeg::server {
namespace {

using testing::fixture_backend;
using testing::scripted_reply;

std::vector<std::pair<std::string, std::string>> read_all(std::string_view bytes,
                                                          std::size_t split) {
  detail::sse_reader r;
  std::vector<std::pair<std::string, std::string>> events;
  auto on = [&](std::string_view f, std::string_view d) {
    events.emplace_back(f, d);
    return true;
  };
  EXPECT_TRUE(r.feed(bytes.substr(0, split), on));
  EXPECT_TRUE(r.feed(bytes.substr(split), on));
  EXPECT_TRUE(r.finish(on));
  return events;
}

TEST(SseReader, SameEventsForEverySplit) {
  const std::string stream =
      "data: {\"content\":\"h\xC3\xA9\"}\n\n: comment\r\ndata: a\r\ndata: b\r\n\r\n"
      "event: x\nerror: {\"message\":\"m\"}\n\ndata: [DONE]\n\n";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"data", "{\"content\":\"h\xC3\xA9\"}"},
      {"data", "a\nb"},
      {"error", "{\"message\":\"m\"}"},
      {"data", "[DONE]"}};
  for (std::size_t split = 0; split <= stream.size(); ++split) {
    EXPECT_EQ(read_all(stream, split), expected) << "split at " << split;
  }
}

TEST(SseReader, EventWithoutBlankLineAtEndIsDispatchedByFinish) {
  EXPECT_EQ(read_all("data: last", 3),
            (std::vector<std::pair<std::string, std::string>>{{"data", "last"}}));
}

TEST(SseReader, OverlongLineFails) {
  detail::sse_reader r(16);
  EXPECT_FALSE(r.feed(std::string(40, 'x'), [](auto, auto) { return true; }));
}

TEST(DecodeLlamacpp, ChunksAndFinalEvent) {
  detail::decoded d;
  ASSERT_FALSE(
      detail::decode_llamacpp(*json::parse(R"({"content":"ab","tokens":[5,6],"stop":false})"), d));
  EXPECT_EQ(d.chunk.text, "ab");
  EXPECT_EQ(d.chunk.tokens, (std::vector<std::int32_t>{5, 6}));
  EXPECT_FALSE(d.final);

  detail::decoded f;
  ASSERT_FALSE(detail::decode_llamacpp(
      *json::parse(R"({"content":"","stop":true,"stop_type":"limit","tokens_predicted":7,
                       "tokens_evaluated":3,"truncated":true})"),
      f));
  EXPECT_TRUE(f.final);
  EXPECT_EQ(f.done.stop, stop_kind::limit);
  EXPECT_EQ(f.done.tokens_predicted, 7);
  EXPECT_EQ(f.done.tokens_evaluated, 3);
  EXPECT_TRUE(f.done.truncated);
}

TEST(DecodeLlamacpp, RejectsMalformedEvents) {
  for (const char* text : {R"([1,2])", R"({"content":5})", R"({"error":{"message":"boom"}})"}) {
    detail::decoded d;
    auto err = detail::decode_llamacpp(*json::parse(text), d);
    ASSERT_TRUE(err.has_value()) << text;
    EXPECT_EQ(err->code, backend_errc::bad_response);
  }
}

TEST(DecodeOpenai, TextFinishReasonAndUsage) {
  detail::decoded d;
  ASSERT_FALSE(detail::decode_openai(
      *json::parse(R"({"choices":[{"index":0,"text":"hi","finish_reason":"length"}],
                       "usage":{"prompt_tokens":4,"completion_tokens":2}})"),
      d));
  EXPECT_EQ(d.chunk.text, "hi");
  EXPECT_TRUE(d.final);
  EXPECT_EQ(d.done.stop, stop_kind::limit);
  EXPECT_EQ(d.done.tokens_evaluated, 4);
  detail::decoded bad;
  EXPECT_TRUE(detail::decode_openai(*json::parse(R"({"text":"x"})"), bad).has_value());
}

TEST(BackendBody, LlamacppCarriesGrammarTriggersAndTokens) {
  completion_params p{.prompt = "P",
                      .max_tokens = 12,
                      .temperature = 0.5,
                      .seed = 3,
                      .stop = {"<|im_end|>"},
                      .stream = true,
                      .grammar = "root ::= \"x\"",
                      .grammar_lazy = true,
                      .triggers = {{chat::trigger_type::word, "<tool_call>"},
                                   {chat::trigger_type::pattern, "a.*"},
                                   {chat::trigger_type::pattern_full, "^b"}},
                      .preserved_tokens = {"<tool_call>"}};
  const auto body = backend_body(backend_type::llamacpp, p);
  EXPECT_EQ(body["prompt"], "P");
  EXPECT_EQ(body["n_predict"], 12);
  EXPECT_EQ(body["temperature"], 0.5);
  EXPECT_EQ(body["seed"], 3);
  EXPECT_EQ(body["stop"], json::value::array({"<|im_end|>"}));
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["grammar"], "root ::= \"x\"");
  EXPECT_EQ(body["grammar_lazy"], true);
  EXPECT_EQ(json::dump(body["grammar_triggers"]),
            R"([{"type":1,"value":"<tool_call>"},{"type":2,"value":"a.*"},)"
            R"({"type":3,"value":"^b"}])");
  EXPECT_EQ(body["preserved_tokens"], json::value::array({"<tool_call>"}));
  EXPECT_EQ(body["return_tokens"], true);
  EXPECT_FALSE(body.contains("top_p"));
}

TEST(BackendBody, OpenaiHasNoGrammar) {
  completion_params p{.prompt = "P", .max_tokens = 5, .grammar = "root ::= \"x\""};
  const auto body = backend_body(backend_type::openai, p);
  EXPECT_EQ(body["max_tokens"], 5);
  EXPECT_FALSE(body.contains("grammar"));
  EXPECT_FALSE(body.contains("n_predict"));
  EXPECT_FALSE(body.contains("return_tokens"));
  EXPECT_EQ(backend_path(backend_type::openai), "/v1/completions");
}

struct run_result {
  backend_outcome outcome;
  std::string text;
  std::vector<std::int32_t> tokens;
};

run_result run(const fixture_backend& fx, backend_type type, bool stream) {
  backend_client c({.type = type, .url = fx.url(), .read_timeout = std::chrono::seconds(10)});
  run_result r;
  r.outcome =
      c.complete({.prompt = "hello", .max_tokens = 9, .stream = stream}, [&](backend_chunk&& ch) {
        r.text += ch.text;
        r.tokens.insert(r.tokens.end(), ch.tokens.begin(), ch.tokens.end());
        return true;
      });
  return r;
}

TEST(BackendClient, StreamsAndCompletesBothProtocols) {
  fixture_backend fx;
  const std::string text = "Hello, w\xC3\xB6rld \xE4\xBD\xA0\xE5\xA5\xBD <tool_call>!";
  const auto chunks = testing::split_chars(text, 3);
  std::vector<std::vector<int>> ids;
  std::vector<std::int32_t> all_ids;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    ids.push_back({static_cast<int>(1000 + i)});
    all_ids.push_back(static_cast<std::int32_t>(1000 + i));
  }
  fx.reply_with(
      scripted_reply{.chunks = chunks, .stop_type = "limit", .write_size = 5, .chunk_tokens = ids});
  for (auto type : {backend_type::llamacpp, backend_type::openai}) {
    for (bool stream : {true, false}) {
      SCOPED_TRACE(std::string(backend_type_name(type)) + (stream ? " stream" : " plain"));
      auto r = run(fx, type, stream);
      ASSERT_TRUE(r.outcome.ok()) << r.outcome.error->message;
      EXPECT_EQ(r.text, text);
      EXPECT_EQ(r.outcome.done.stop, stop_kind::limit);
      EXPECT_EQ(fx.last_request()["prompt"], "hello");
      EXPECT_EQ(fx.last_request()["stream"], stream);
      if (type == backend_type::llamacpp && stream) {
        EXPECT_EQ(r.tokens, all_ids);
      }
    }
  }
  EXPECT_EQ(fx.paths().front(), "/completion");
  EXPECT_EQ(fx.paths().back(), "/v1/completions");
}

TEST(BackendClient, TypedFailures) {
  fixture_backend fx;
  struct failure_case {
    const char* name;
    scripted_reply reply;
    bool stream;
    backend_errc expected;
  };
  const std::vector<failure_case> cases = {
      {"http 500",
       {.status = 500, .raw_body = R"({"error":{"message":"oops"}})"},
       true,
       backend_errc::http_status},
      {"http 404 plain", {.status = 404, .raw_body = "nope"}, false, backend_errc::http_status},
      {"garbage body", {.raw_body = "this is not json"}, false, backend_errc::bad_response},
      {"error event", {.chunks = {"a"}, .fail_mid_stream = true}, true, backend_errc::bad_response},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fx.reply_with(c.reply);
    auto r = run(fx, backend_type::llamacpp, c.stream);
    ASSERT_FALSE(r.outcome.ok());
    EXPECT_EQ(r.outcome.error->code, c.expected) << r.outcome.error->message;
  }
  // The 500's own message is kept.
  fx.reply_with(cases[0].reply);
  EXPECT_NE(run(fx, backend_type::llamacpp, true).outcome.error->message.find("oops"),
            std::string::npos);
}

TEST(BackendClient, StreamWithoutFinalEventIsBadResponse) {
  fixture_backend fx;
  fx.reply_with(scripted_reply{.raw_body = "data: {\"content\":\"a\",\"stop\":false}\n\n"});
  auto r = run(fx, backend_type::llamacpp, true);
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_EQ(r.outcome.error->code, backend_errc::bad_response);
}

TEST(BackendClient, UnreachableBackend) {
  testing::closed_port closed;
  ASSERT_NE(closed.port(), 0);
  backend_client c({.url = closed.url(), .connect_timeout = std::chrono::seconds(2)});
  auto out = c.complete({.prompt = "x"}, [](backend_chunk&&) { return true; });
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error->code, backend_errc::unreachable);
}

TEST(BackendClient, CallbackFalseCancels) {
  fixture_backend fx;
  fx.reply_with(scripted_reply{.chunks = {"a", "b", "c", "d"}});
  backend_client c({.url = fx.url()});
  int calls = 0;
  auto out = c.complete({.prompt = "x"}, [&](backend_chunk&&) { return ++calls < 2; });
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error->code, backend_errc::cancelled);
  EXPECT_EQ(calls, 2);
}

struct label_case {
  const char* name;
  testing::raw_backend::behaviour behaviour;
  backend_errc expected;
  int status;  // the gateway's answer for it
};

// What a backend did wrong, told apart: it closed without answering (a crash), answered bytes
// that are not HTTP, or went silent for the read timeout — 502, 502, 504.
TEST(BackendClient, FailuresAreLabelledByTheirCause) {
  using testing::raw_backend;
  const label_case cases[] = {
      {"closes without answering", raw_backend::behaviour::close_silently,
       backend_errc::disconnected, 502},
      {"answers garbage", raw_backend::behaviour::send_garbage, backend_errc::bad_response, 502},
      {"stays silent", raw_backend::behaviour::stay_silent, backend_errc::timeout, 504},
  };
  for (const auto& c : cases) {
    for (bool stream : {false, true}) {
      SCOPED_TRACE(std::string(c.name) + (stream ? " (stream)" : ""));
      raw_backend rb(c.behaviour);
      backend_client client({.url = rb.url(),
                             .connect_timeout = std::chrono::seconds(2),
                             .read_timeout = std::chrono::seconds(1)});
      auto out =
          client.complete({.prompt = "x", .stream = stream}, [](backend_chunk&&) { return true; });
      ASSERT_FALSE(out.ok());
      EXPECT_EQ(out.error->code, c.expected) << out.error->message;
      EXPECT_EQ(detail::error_from(*out.error).status, c.status);
    }
  }
  // A stream dropped after it began is a disconnection too.
  fixture_backend fx;
  fx.reply_with(scripted_reply{.chunks = {"a"}, .drop_mid_stream = true});
  auto r = run(fx, backend_type::llamacpp, true);
  ASSERT_FALSE(r.outcome.ok());
  EXPECT_EQ(r.outcome.error->code, backend_errc::disconnected) << r.outcome.error->message;
}

// Cancelling leaves a backend that has not sent a byte at once (not at its next byte or the
// read timeout), and the backend sees the connection close.
TEST(BackendClient, CancelLeavesASilentBackendAtOnce) {
  testing::raw_backend rb(testing::raw_backend::behaviour::stay_silent);
  backend_client client({.url = rb.url(), .read_timeout = std::chrono::seconds(60)});
  base::cancel_source cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel.cancel("the client went away");
  });
  const auto start = std::chrono::steady_clock::now();
  auto out = client.complete(
      {.prompt = "x"}, [](backend_chunk&&) { return true; }, &cancel);
  const auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error->code, backend_errc::cancelled) << out.error->message;
  EXPECT_LT(took, std::chrono::seconds(2));
  for (int i = 0; i < 200 && rb.client_closes() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(rb.client_closes(), 1);
  // Cancelled before it starts: no connection is made at all, or it is shut at once.
  base::cancel_source early;
  early.cancel("gone");
  auto again = client.complete(
      {.prompt = "x"}, [](backend_chunk&&) { return true; }, &early);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error->code, backend_errc::cancelled);
}

// The deadline bounds a whole request, however steadily the backend streams.
TEST(BackendClient, TheDeadlineBoundsTheWholeRequest) {
  fixture_backend fx;
  std::vector<std::string> chunks(40, "tick ");
  fx.reply_with(scripted_reply{.chunks = chunks, .delay = std::chrono::milliseconds(100)});
  backend_client client({.url = fx.url(), .deadline = std::chrono::seconds(1)});
  std::string got;
  auto out = client.complete({.prompt = "x"}, [&](backend_chunk&& c) {
    got += c.text;
    return true;
  });
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error->code, backend_errc::deadline) << out.error->message;
  EXPECT_EQ(detail::error_from(*out.error).status, 504);
  EXPECT_EQ(detail::error_from(*out.error).code, "backend_deadline");
  EXPECT_FALSE(got.empty());
  EXPECT_LT(got.size(), 40u * 5u);  // cut before the end (4 s of ticks)
}

}  // namespace
}  // namespace chatpeg::server

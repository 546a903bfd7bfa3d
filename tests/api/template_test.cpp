// The C++ API through libchatpeg alone: load, prepare, parse, stream (deltas add up to the
// one-shot message at every chunk size), typed errors with where, and one template shared by
// threads parsing at once.
#include "chatpeg/chatpeg.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "api/example_files.h"

namespace {

using chatpeg::api::chat_template;
using chatpeg::api::error;
using chatpeg::api::error_code;
using chatpeg::api::json;

using chatpeg::testing::read_example;

const chat_template& example_template() {
  static const chat_template t =
      chat_template::from_file(chatpeg::testing::example_path("chatml_tools.jinja"));
  return t;
}
json example_request() {
  return json::parse(read_example("weather_request.json"));
}
std::string example_output() {
  return read_example("weather_output.txt");
}

// Concatenates deltas into a message: content, reasoning, per-index name and arguments.
json assemble(const json& deltas) {
  json m = {{"content", ""}, {"reasoning_content", ""}, {"tool_calls", json::array()}};
  for (const auto& d : deltas) {
    if (d.contains("content"))
      m["content"] = m["content"].get<std::string>() + d["content"].get<std::string>();
    if (d.contains("reasoning_content")) {
      m["reasoning_content"] =
          m["reasoning_content"].get<std::string>() + d["reasoning_content"].get<std::string>();
    }
    for (const auto& c : d.value("tool_calls", json::array())) {
      const std::size_t i = c["index"];
      auto& calls = m["tool_calls"];
      if (i == calls.size())
        calls.push_back({{"id", c["id"]}, {"name", c["function"]["name"]}, {"arguments", ""}});
      calls[i]["arguments"] =
          calls[i]["arguments"].get<std::string>() + c["function"]["arguments"].get<std::string>();
    }
  }
  return m;
}

TEST(api_template, prepare_gives_prompt_grammar_and_triggers) {
  auto p = example_template().prepare(example_request());
  EXPECT_NE(p.prompt.find("What's the weather in Paris"), std::string::npos);
  EXPECT_TRUE(p.prompt.ends_with(p.generation_prompt)) << p.prompt;
  EXPECT_FALSE(p.grammar.empty());
  EXPECT_NE(p.grammar.find("get_weather"), std::string::npos);
  ASSERT_FALSE(p.triggers.empty());
  json j = p.to_json();
  for (const char* key : {"prompt", "generation_prompt", "grammar", "grammar_lazy",
                          "grammar_triggers", "preserved_tokens", "stops"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(example_template().render(example_request()), p.prompt);
}

TEST(api_template, parse_gives_the_openai_message) {
  json m = example_template().parse(example_output(), example_request());
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["content"], "Let me check both cities.\n");
  EXPECT_NE(m["reasoning_content"].get<std::string>().find("two cities"), std::string::npos);
  ASSERT_EQ(m["tool_calls"].size(), 2u);
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(m["tool_calls"][1]["function"]["arguments"].get<std::string>()),
            json::parse(R"({"city":"Tokyo"})"));
  EXPECT_TRUE(m["tool_calls"][0]["id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(example_template().analysis()["tools"]["format"], "json_native");
}

TEST(api_template, stream_deltas_add_up_to_the_message_at_every_chunk_size) {
  const std::string out = example_output();
  json expected = example_template().parse(out, example_request());
  for (std::size_t chunk : {1u, 3u, 7u, 1000u}) {
    auto s = example_template().stream(example_request());
    json deltas = json::array();
    for (std::size_t at = 0; at < out.size(); at += chunk) {
      for (auto& d : s.feed(std::string_view(out).substr(at, chunk))) deltas.push_back(d);
    }
    auto done = s.finish();
    for (auto& d : done.deltas) deltas.push_back(d);
    EXPECT_EQ(done.finish_reason, "tool_calls");
    json got = assemble(deltas);
    EXPECT_EQ(got["content"], expected["content"]) << chunk;
    EXPECT_EQ(got["reasoning_content"], expected["reasoning_content"]) << chunk;
    ASSERT_EQ(got["tool_calls"].size(), 2u) << chunk;
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(got["tool_calls"][i]["arguments"],
                expected["tool_calls"][i]["function"]["arguments"]);
      EXPECT_EQ(got["tool_calls"][i]["id"], done.message["tool_calls"][i]["id"]);
    }
    EXPECT_EQ(s.received(), out.size());
  }
}

TEST(api_template, stream_token_ids_are_one_per_piece_or_one_per_byte) {
  auto s = example_template().stream(example_request());
  const std::int32_t one[] = {7};
  EXPECT_NO_THROW(s.feed("<think>", one));
  const std::int32_t per_byte[] = {1, -1, 2};
  EXPECT_NO_THROW(s.feed("abc", per_byte));
  const std::int32_t two[] = {1, 2};
  try {
    s.feed("abc", two);
    FAIL() << "a token id list of another length was taken";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), error_code::invalid_argument);
    EXPECT_EQ(e.where(), "token_ids");
  }
}

struct error_row {
  const char* name;
  std::function<void()> call;
  error_code code;
  const char* where_has;
};

TEST(api_template, errors_are_typed_and_say_where) {
  const error_row rows[] = {
      {"missing file", [] { chat_template::from_file("/nonexistent/t.jinja"); },
       error_code::io_error, "/nonexistent/t.jinja"},
      {"template syntax", [] { chat_template::from_string("hello\n{% if %}"); },
       error_code::syntax_error, "2:"},
      {"bad request field", [] { example_template().prepare(json::parse(R"({"messages": 3})")); },
       error_code::invalid_argument, "$.messages"},
      {"bad tool",
       [] {
         example_template().parse(
             "x", json::parse(R"({"messages": [], "tools": [{"type": "function"}]})"));
       },
       error_code::invalid_argument, "$.tools[0]"},
      {"tokenizer_config without template",
       [] { chat_template::from_tokenizer_config(json::parse(R"({"bos_token": "<s>"})")); },
       error_code::invalid_argument, ""},
  };
  for (const auto& row : rows) {
    try {
      row.call();
      ADD_FAILURE() << row.name << ": no error";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), row.code) << row.name << ": " << e.what();
      EXPECT_NE(e.where().find(row.where_has), std::string::npos) << row.name << ": " << e.where();
      EXPECT_FALSE(std::string(e.what()).empty());
    }
  }
}

TEST(api_template, one_template_is_shared_by_threads_parsing_at_once) {
  const chat_template t = example_template();  // a copy shares the compiled template
  const std::string out = example_output();
  const json req = example_request();
  const json expected = t.parse(out, req)["tool_calls"][1]["function"];
  std::vector<std::thread> threads;
  std::atomic<int> agreed{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 10; ++k) {
        if (t.parse(out, req)["tool_calls"][1]["function"] == expected) ++agreed;
        auto s = t.stream(req);
        s.feed(out);
        if (s.finish().message["tool_calls"][1]["function"] == expected) ++agreed;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(agreed.load(), 80);
}

TEST(api_template, every_error_code_has_its_name) {
  const std::pair<error_code, const char*> rows[] = {
      {error_code::invalid_argument, "invalid_argument"},
      {error_code::syntax_error, "syntax_error"},
      {error_code::no_match, "no_match"},
      {error_code::limit_exceeded, "limit_exceeded"},
      {error_code::unsupported, "unsupported"},
      {error_code::io_error, "io_error"},
      {error_code::template_error, "template_error"},
      {error_code::analysis_failed, "analysis_failed"},
      {error_code::internal_error, "internal_error"}};
  for (const auto& [code, name] : rows) EXPECT_EQ(chatpeg::api::error_code_name(code), name);
}

TEST(api_template, version_macros_agree) {
  EXPECT_EQ(std::string(CHATPEG_VERSION_STRING), std::to_string(CHATPEG_VERSION_MAJOR) + "." +
                                                     std::to_string(CHATPEG_VERSION_MINOR) + "." +
                                                     std::to_string(CHATPEG_VERSION_PATCH));
}

}  // namespace

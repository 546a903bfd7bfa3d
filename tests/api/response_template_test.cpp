// Response templates through libchatpeg alone: loading (object, tokenizer_config.json, files,
// GGUF) with typed errors, parse() as the template's dict and as an OpenAI message, a prefix
// and tool casting, streams whose deltas add up to the one-shot message at every chunk size,
// and a chat template writing one that reads its own output as chatpeg's parser does.
#include "chatpeg/chatpeg.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/example_files.h"
#include "support/gguf_builder.h"

namespace {

using chatpeg::api::chat_template;
using chatpeg::api::error;
using chatpeg::api::error_code;
using chatpeg::api::json;
using chatpeg::api::response_parse_options;
using chatpeg::api::response_template;
using chatpeg::testing::example_path;
using chatpeg::testing::read_example;

// A template with invented markers: reasoning between [[r]] and [[/r]], calls as JSON between
// <<call>> and <</call>>, content the rest.
const char* const kTemplate = R"({"start_anchor": "<<bot>>", "fields": {
    "reasoning_content": {"open": "[[r]]", "close": "[[/r]]"},
    "tool_calls": {"open": "<<call>>", "close": "<</call>>", "repeats": true, "content": "json",
                   "transform": {"type": "function", "function": {
                     "name": "{content.name}", "arguments": "{content.arguments}"}}},
    "content": {}}})";
const char* const kOutput =
    "[[r]]think[[/r]]Hi.<<call>>{\"name\": \"f\", \"arguments\": {\"n\": \"3\"}}<</call>>";

json tools() {
  return json::parse(R"([{"type": "function", "function": {"name": "f", "parameters":
      {"type": "object", "properties": {"n": {"type": "integer"}}}}}])");
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("chatpeg_api_rt_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

template <class F>
error expect_error(F&& f) {
  try {
    f();
  } catch (const error& e) {
    return e;
  }
  ADD_FAILURE() << "no error thrown";
  return error(error_code::internal_error, "none", "");
}

TEST(api_response_template, parse_gives_the_dict_and_the_message) {
  const auto rt = response_template::from_json(json::parse(kTemplate));
  EXPECT_EQ(rt.source()["start_anchor"], "<<bot>>");
  const json dict = rt.parse(kOutput);
  EXPECT_EQ(dict["reasoning_content"], "think");
  EXPECT_EQ(dict["content"], "Hi.");
  EXPECT_EQ(dict["tool_calls"][0]["function"]["arguments"], json::parse(R"({"n": "3"})"));

  const json msg = rt.parse_message(kOutput, {.tools = tools()});
  EXPECT_EQ(msg["role"], "assistant");
  EXPECT_EQ(msg["content"], "Hi.");
  EXPECT_EQ(msg["reasoning_content"], "think");
  ASSERT_EQ(msg["tool_calls"].size(), 1u);
  EXPECT_EQ(msg["tool_calls"][0]["function"]["name"], "f");
  EXPECT_EQ(msg["tool_calls"][0]["function"]["arguments"], R"({"n":3})");  // cast by schema
  EXPECT_EQ(msg["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);
}

TEST(api_response_template, a_prefix_opening_reasoning_puts_the_output_in_it) {
  const auto rt = response_template::from_json(json::parse(kTemplate));
  const json msg = rt.parse_message("still thinking[[/r]]Done.",
                                    {.prefix = "<<user>>hi<<bot>>[[r]]", .tools = tools()});
  EXPECT_EQ(msg["reasoning_content"], "still thinking");
  EXPECT_EQ(msg["content"], "Done.");
}

TEST(api_response_template, streams_add_up_to_the_one_shot_message) {
  const auto rt = response_template::from_json(json::parse(kTemplate));
  const std::string out = kOutput;
  for (std::size_t chunk = 1; chunk <= 7; ++chunk) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    auto s = rt.stream({.prefix = "<<bot>>[[r]]", .tools = tools()});
    json deltas = json::array();
    // The prefix opened reasoning: the output starts inside it.
    const std::string body = out.substr(5);
    for (std::size_t i = 0; i < body.size(); i += chunk) {
      for (auto& d : s.feed(body.substr(i, chunk))) deltas.push_back(d);
    }
    auto done = s.finish();
    for (auto& d : done.deltas) deltas.push_back(d);
    EXPECT_EQ(done.finish_reason, "tool_calls");
    std::string reasoning, content, args;
    for (const auto& d : deltas) {
      if (d.contains("reasoning_content")) reasoning += d["reasoning_content"].get<std::string>();
      if (d.contains("content")) content += d["content"].get<std::string>();
      for (const auto& c : d.value("tool_calls", json::array()))
        args += c["function"].value("arguments", "");
    }
    EXPECT_EQ(reasoning, "think");
    EXPECT_EQ(content, "Hi.");
    EXPECT_EQ(args, R"({"n":3})");
    EXPECT_EQ(done.message["content"], "Hi.");
    EXPECT_EQ(s.current(), done.message);
    EXPECT_EQ(s.received(), body.size());
  }
}

TEST(api_response_template, loads_from_a_config_a_file_and_gguf) {
  const json config =
      json::parse(std::string(R"({"chat_template": "x", "response_template": )") + kTemplate + "}");
  EXPECT_EQ(response_template::from_json(config).parse("Hi.")["content"], "Hi.");
  EXPECT_EQ(response_template::from_file(example_path("response_template.json"))
                .parse_message(read_example("weather_output.txt"))["tool_calls"]
                .size(),
            2u);
  const std::string config_file = write_temp("config.json", config.dump());
  EXPECT_EQ(response_template::from_file(config_file).parse("x")["content"], "x");
  std::remove(config_file.c_str());

  chatpeg::testing::gguf_builder g;
  g.header(2);
  g.kv_str("tokenizer.chat_template", "{{ messages }}");
  g.kv_str("tokenizer.response_template", kTemplate);
  const std::string gguf = write_temp("model.gguf", g.out);
  EXPECT_EQ(response_template::from_file(gguf).parse("[[r]]a[[/r]]b")["reasoning_content"], "a");
  std::remove(gguf.c_str());

  chatpeg::testing::gguf_builder bare;
  bare.header(1);
  bare.kv_str("tokenizer.chat_template", "{{ messages }}");
  const std::string bare_gguf = write_temp("bare.gguf", bare.out);
  const error none = expect_error([&] { response_template::from_file(bare_gguf); });
  EXPECT_EQ(none.code(), error_code::invalid_argument);
  EXPECT_NE(std::string(none.what()).find("tokenizer.response_template"), std::string::npos);
  std::remove(bare_gguf.c_str());
}

struct load_error_case {
  const char* name;
  const char* json_text;
  error_code code;
  const char* where;  // a part of error::where()
};

TEST(api_response_template, loading_errors_are_typed_and_located) {
  const load_error_case cases[] = {
      {"two opens", R"({"start_anchor": "x", "fields": {"content": {"open": "a",
          "open_pattern": "b"}}})",
       error_code::invalid_argument, "$.fields.content.open_pattern"},
      {"bad regex", R"({"start_anchor": "x", "fields": {"content": {"open_pattern": "(a"}}})",
       error_code::syntax_error, "$.fields.content.open_pattern"},
      {"config without one", R"({"chat_template": "x"})", error_code::invalid_argument, ""},
      {"older response_schema", R"({"chat_template": "x", "response_schema": {}})",
       error_code::unsupported, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const error e = expect_error([&] { response_template::from_json(json::parse(c.json_text)); });
    EXPECT_EQ(e.code(), c.code) << e.what();
    EXPECT_NE(e.where().find(c.where), std::string::npos) << e.where();
  }
  const error missing = expect_error([] { response_template::from_file("/nonexistent/rt.json"); });
  EXPECT_EQ(missing.code(), error_code::io_error);

  const auto rt = response_template::from_json(json::parse(kTemplate));
  const error bad = expect_error([&] { rt.parse("<<call>>{not json<</call>>"); });
  EXPECT_EQ(bad.code(), error_code::no_match);
  EXPECT_NE(bad.where().find("$.fields.tool_calls"), std::string::npos) << bad.where();
  EXPECT_NE(bad.offset(), error::no_offset);
}

// The written response template reads the template's own example output as chatpeg's parser
// does (ids aside: both make fresh ones; text compared without trailing whitespace).
TEST(api_response_template, a_chat_template_writes_one_that_reads_its_output) {
  const auto tmpl = chat_template::from_file(example_path("chatml_tools.jinja"));
  const json written = tmpl.write_response_template();
  const auto rt = response_template::from_json(written);
  const json request = json::parse(read_example("weather_request.json"));
  const std::string output = read_example("weather_output.txt");
  json ours = tmpl.parse(output, request);
  json theirs =
      rt.parse_message(output, {.prefix = tmpl.render(request), .tools = request["tools"]});
  // A response template's text fields are stripped (transformers' `text` parser); chatpeg's
  // own parser keeps the whitespace before a marker as the model wrote it.
  for (json* m : {&ours, &theirs}) {
    for (const char* key : {"content", "reasoning_content"}) {
      std::string text = (*m)[key].get<std::string>();
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.pop_back();
      (*m)[key] = text;
    }
    for (auto& c : (*m)["tool_calls"]) c.erase("id");
  }
  EXPECT_EQ(theirs, ours);
  EXPECT_FALSE(tmpl.shipped_response_template().has_value());
}

TEST(api_response_template, a_shipped_one_comes_with_the_chat_template) {
  const json config = json::parse(std::string(R"({"chat_template": "{{ messages[0].content }}", )"
                                              R"("response_template": )") +
                                  kTemplate + "}");
  const auto tmpl = chat_template::from_tokenizer_config(config);
  const auto shipped = tmpl.shipped_response_template();
  ASSERT_TRUE(shipped.has_value());
  EXPECT_EQ(shipped->source(), json::parse(kTemplate));

  const json broken = json::parse(
      R"({"chat_template": "x", "response_template": {"start_anchor": "x", "fields": {}}})");
  const auto bad = chat_template::from_tokenizer_config(broken);
  EXPECT_EQ(expect_error([&] { (void)bad.shipped_response_template(); }).code(),
            error_code::invalid_argument);
}

}  // namespace

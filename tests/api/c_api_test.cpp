// The C API (chatpeg.h): the whole flow with JSON strings, every error as a code plus a
// filled chatpeg_error (message, where), NULL arguments refused, outputs untouched on error,
// and nothing leaked (run under ASan + LeakSanitizer in `make test-sanitize`).
#include "chatpeg.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "chatpeg/api/template.h"

#include "api/example_files.h"

namespace {

using chatpeg::api::json;

using chatpeg::testing::read_example;

struct c_string {  // owns a string returned by the C API
  char* p = nullptr;
  ~c_string() { chatpeg_free(p); }
  json parsed() const { return json::parse(p); }
};

struct c_error {
  chatpeg_error e = {0, nullptr, nullptr};
  ~c_error() { chatpeg_error_clear(&e); }
};

struct template_ptr {
  chatpeg_template* t = nullptr;
  ~template_ptr() { chatpeg_template_free(t); }
};

const std::string kPath = chatpeg::testing::example_path("chatml_tools.jinja");

// A call of the C API that must fail: its code and a part of the `where` it reports.
struct error_call {
  const char* name;
  std::function<int()> run;
  int code;
  const char* where_has;
};

// Runs c: it returns its code and fills err with the code, a message and a where.
void expect_error(const error_call& c, const c_error& err) {
  EXPECT_EQ(c.run(), c.code) << c.name;
  EXPECT_EQ(err.e.code, c.code) << c.name;
  ASSERT_NE(err.e.message, nullptr) << c.name;
  ASSERT_NE(err.e.where, nullptr) << c.name;
  EXPECT_NE(std::string(err.e.where).find(c.where_has), std::string::npos)
      << c.name << ": " << err.e.where << " / " << err.e.message;
}

TEST(c_api, version_is_the_header_version) {
  EXPECT_STREQ(chatpeg_version(), CHATPEG_VERSION_STRING);
}

TEST(c_api, prepare_parse_and_stream) {
  template_ptr t;
  c_error err;
  ASSERT_EQ(chatpeg_template_from_file(kPath.c_str(), &t.t, &err.e), CHATPEG_OK) << err.e.message;
  EXPECT_EQ(err.e.message, nullptr);
  const std::string request = read_example("weather_request.json");
  const std::string output = read_example("weather_output.txt");

  c_string prepared;
  ASSERT_EQ(chatpeg_prepare(t.t, request.c_str(), &prepared.p, &err.e), CHATPEG_OK);
  EXPECT_FALSE(prepared.parsed()["grammar"].get<std::string>().empty());

  c_string message;
  ASSERT_EQ(chatpeg_parse(t.t, request.c_str(), output.data(), output.size(), &message.p, &err.e),
            CHATPEG_OK);
  json m = message.parsed();
  ASSERT_EQ(m["tool_calls"].size(), 2u);

  for (std::size_t chunk : {1u, 3u, 7u}) {
    chatpeg_stream* s = nullptr;
    ASSERT_EQ(chatpeg_stream_new(t.t, request.c_str(), &s, &err.e), CHATPEG_OK);
    std::string content;
    std::size_t headers = 0;
    for (std::size_t at = 0; at < output.size(); at += chunk) {
      c_string deltas;
      const std::size_t n = std::min(chunk, output.size() - at);
      ASSERT_EQ(chatpeg_stream_feed(s, output.data() + at, n, &deltas.p, &err.e), CHATPEG_OK);
      for (const auto& d : deltas.parsed()) {
        content += d.value("content", "");
        for (const auto& c : d.value("tool_calls", json::array())) headers += c.contains("id");
      }
    }
    c_string result;
    ASSERT_EQ(chatpeg_stream_finish(s, &result.p, &err.e), CHATPEG_OK);
    json r = result.parsed();
    for (const auto& d : r["deltas"]) content += d.value("content", "");
    EXPECT_EQ(r["finish_reason"], "tool_calls");
    EXPECT_EQ(content, m["content"]) << chunk;
    EXPECT_EQ(r["message"]["tool_calls"].size(), 2u);
    EXPECT_EQ(headers, 2u) << chunk;
    chatpeg_stream_free(s);
  }

  c_string analysis;
  ASSERT_EQ(chatpeg_template_analysis(t.t, &analysis.p, &err.e), CHATPEG_OK);
  EXPECT_TRUE(analysis.parsed().contains("tools"));
}

TEST(c_api, errors_fill_code_message_and_where) {
  template_ptr t;
  ASSERT_EQ(chatpeg_template_from_file(kPath.c_str(), &t.t, nullptr), CHATPEG_OK);
  c_error err;
  char* out = reinterpret_cast<char*>(0x1);  // must stay untouched on error
  chatpeg_template* tout = nullptr;
  chatpeg_stream* sout = nullptr;
  const error_call calls[] = {
      {"missing file",
       [&] { return chatpeg_template_from_file("/nonexistent.jinja", &tout, &err.e); },
       CHATPEG_E_IO, "/nonexistent.jinja"},
      {"template syntax",
       [&] { return chatpeg_template_from_string("a\n{% for %}", &tout, &err.e); },
       CHATPEG_E_SYNTAX, "2:"},
      {"NULL source", [&] { return chatpeg_template_from_string(nullptr, &tout, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "source"},
      {"request not JSON", [&] { return chatpeg_prepare(t.t, "{\"messages\": [", &out, &err.e); },
       CHATPEG_E_SYNTAX, "byte"},
      {"request field", [&] { return chatpeg_prepare(t.t, "{\"messages\": 1}", &out, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "$.messages"},
      {"NULL template", [&] { return chatpeg_prepare(nullptr, "{}", &out, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "template"},
      {"NULL output with length",
       [&] { return chatpeg_parse(t.t, "{\"messages\": []}", nullptr, 3, &out, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "output"},
      {"NULL request", [&] { return chatpeg_stream_new(t.t, nullptr, &sout, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "request_json"},
      {"NULL stream", [&] { return chatpeg_stream_feed(nullptr, "x", 1, &out, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "stream"},
  };
  for (const auto& c : calls) {
    expect_error(c, err);
    EXPECT_EQ(out, reinterpret_cast<char*>(0x1)) << c.name;
    EXPECT_EQ(tout, nullptr) << c.name;
    EXPECT_EQ(sout, nullptr) << c.name;
  }
  // A success clears the reused error.
  c_string ok;
  ASSERT_EQ(chatpeg_prepare(t.t, "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}",
                            &ok.p, &err.e),
            CHATPEG_OK);
  EXPECT_EQ(err.e.code, CHATPEG_OK);
  EXPECT_EQ(err.e.message, nullptr);
  chatpeg_free(nullptr);
  chatpeg_error_clear(nullptr);
  chatpeg_template_free(nullptr);
  chatpeg_stream_free(nullptr);
}

TEST(c_api, a_stream_outlives_its_template_and_request) {
  chatpeg_template* t = nullptr;
  ASSERT_EQ(chatpeg_template_from_file(kPath.c_str(), &t, nullptr), CHATPEG_OK);
  std::string request = read_example("weather_request.json");
  chatpeg_stream* s = nullptr;
  ASSERT_EQ(chatpeg_stream_new(t, request.c_str(), &s, nullptr), CHATPEG_OK);
  chatpeg_template_free(t);
  request.assign(request.size(), ' ');
  const std::string output = read_example("weather_output.txt");
  c_string deltas;
  ASSERT_EQ(chatpeg_stream_feed(s, output.data(), output.size(), &deltas.p, nullptr), CHATPEG_OK);
  c_string result;
  ASSERT_EQ(chatpeg_stream_finish(s, &result.p, nullptr), CHATPEG_OK);
  EXPECT_EQ(result.parsed()["message"]["tool_calls"].size(), 2u);
  chatpeg_stream_free(s);
}

}  // namespace

namespace {

struct response_template_ptr {
  chatpeg_response_template* t = nullptr;
  ~response_template_ptr() { chatpeg_response_template_free(t); }
};

struct stream_ptr {
  chatpeg_stream* s = nullptr;
  ~stream_ptr() { chatpeg_stream_free(s); }
};

// A response template: written from the example template, then parse (dict and message) and a
// stream over the example output, with the prompt as prefix and the tools for casting.
TEST(c_api, response_templates_written_parsed_and_streamed) {
  template_ptr t;
  ASSERT_EQ(chatpeg_template_from_file(kPath.c_str(), &t.t, nullptr), CHATPEG_OK);
  c_string written;
  ASSERT_EQ(chatpeg_write_response_template(t.t, &written.p, nullptr), CHATPEG_OK);
  response_template_ptr rt;
  c_error err;
  ASSERT_EQ(chatpeg_response_template_from_string(written.p, &rt.t, &err.e), CHATPEG_OK)
      << err.e.message;

  const json request = json::parse(read_example("weather_request.json"));
  c_string prepared;
  ASSERT_EQ(chatpeg_prepare(t.t, request.dump().c_str(), &prepared.p, nullptr), CHATPEG_OK);
  const json options = {{"prefix", prepared.parsed()["prompt"]}, {"tools", request["tools"]}};
  const std::string output = read_example("weather_output.txt");

  c_string dict, message;
  ASSERT_EQ(chatpeg_response_template_parse(rt.t, options.dump().c_str(), output.data(),
                                            output.size(), 0, &dict.p, &err.e),
            CHATPEG_OK)
      << err.e.message;
  EXPECT_EQ(dict.parsed()["tool_calls"][0]["function"]["arguments"]["city"], "Paris");
  ASSERT_EQ(chatpeg_response_template_parse(rt.t, options.dump().c_str(), output.data(),
                                            output.size(), 1, &message.p, &err.e),
            CHATPEG_OK);
  EXPECT_EQ(message.parsed()["tool_calls"][1]["function"]["arguments"], R"({"city":"Tokyo"})");

  stream_ptr s;
  ASSERT_EQ(chatpeg_response_template_stream_new(rt.t, options.dump().c_str(), &s.s, &err.e),
            CHATPEG_OK);
  for (std::size_t i = 0; i < output.size(); i += 5) {
    c_string deltas;
    const std::size_t n = std::min<std::size_t>(5, output.size() - i);
    ASSERT_EQ(chatpeg_stream_feed(s.s, output.data() + i, n, &deltas.p, &err.e), CHATPEG_OK);
  }
  c_string done;
  ASSERT_EQ(chatpeg_stream_finish(s.s, &done.p, &err.e), CHATPEG_OK);
  json streamed = done.parsed()["message"], whole = message.parsed();
  for (json* m : {&streamed, &whole})
    for (auto& c : (*m)["tool_calls"]) c.erase("id");
  EXPECT_EQ(streamed, whole);
  EXPECT_EQ(done.parsed()["finish_reason"], "tool_calls");
}

TEST(c_api, response_template_errors_fill_code_and_where) {
  response_template_ptr rt;
  ASSERT_EQ(chatpeg_response_template_from_file(
                chatpeg::testing::example_path("response_template.json").c_str(), &rt.t, nullptr),
            CHATPEG_OK);
  c_error err;
  char* out = reinterpret_cast<char*>(0x1);  // must stay untouched on error
  chatpeg_response_template* rout = nullptr;
  chatpeg_stream* sout = nullptr;
  const error_call calls[] = {
      {"missing file",
       [&] { return chatpeg_response_template_from_file("/nonexistent.json", &rout, &err.e); },
       CHATPEG_E_IO, "/nonexistent.json"},
      {"not JSON",
       [&] { return chatpeg_response_template_from_string("{\"fields\":", &rout, &err.e); },
       CHATPEG_E_SYNTAX, "json_text"},
      {"rule broken",
       [&] {
         return chatpeg_response_template_from_string(
             R"({"start_anchor": "x", "fields": {"content": {"open": "a", "open_pattern": "b"}}})",
             &rout, &err.e);
       },
       CHATPEG_E_INVALID_ARGUMENT, "$.fields.content.open_pattern"},
      {"response_schema only",
       [&] {
         return chatpeg_response_template_from_string(R"({"response_schema": {}})", &rout, &err.e);
       },
       CHATPEG_E_UNSUPPORTED, ""},
      {"options not an object",
       [&] { return chatpeg_response_template_parse(rt.t, "[]", "x", 1, 0, &out, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "options_json"},
      {"unknown option",
       [&] {
         return chatpeg_response_template_parse(rt.t, R"({"prefx": ""})", "x", 1, 0, &out, &err.e);
       },
       CHATPEG_E_INVALID_ARGUMENT, "$.prefx"},
      {"tools not an array",
       [&] {
         return chatpeg_response_template_stream_new(rt.t, R"({"tools": {}})", &sout, &err.e);
       },
       CHATPEG_E_INVALID_ARGUMENT, "$.tools"},
      {"output that does not parse",
       [&] {
         const std::string bad = "<tool_call>\n{nope\n</tool_call>";
         return chatpeg_response_template_parse(rt.t, nullptr, bad.data(), bad.size(), 1, &out,
                                                &err.e);
       },
       CHATPEG_E_NO_MATCH, "$.fields.tool_calls"},
      {"NULL template",
       [&] { return chatpeg_response_template_parse(nullptr, nullptr, "x", 1, 0, &out, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "response_template"},
      {"NULL output with length",
       [&] { return chatpeg_response_template_parse(rt.t, nullptr, nullptr, 2, 0, &out, &err.e); },
       CHATPEG_E_INVALID_ARGUMENT, "output"},
  };
  for (const auto& c : calls) {
    expect_error(c, err);
    EXPECT_EQ(out, reinterpret_cast<char*>(0x1)) << c.name;
    EXPECT_EQ(rout, nullptr) << c.name;
    EXPECT_EQ(sout, nullptr) << c.name;
  }
  chatpeg_response_template_free(nullptr);
}

}  // namespace

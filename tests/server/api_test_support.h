// Helpers for the tests of the gateway's other APIs (Messages, Responses): JSON from text, the
// named SSE events of a stream, and the table runner for a body translator.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "chatpeg/json/json.h"
#include "server/chat_completions.h"

namespace chatpeg::server::testing {

inline json::value parse_json(const std::string& text) {
  auto v = json::parse(text);
  return v ? *v : json::value("unparseable: " + text);
}

// SSE events: (event name, data).
inline std::vector<std::pair<std::string, json::value>> events_of(const std::string& text) {
  std::vector<std::pair<std::string, json::value>> out;
  std::istringstream in(text);
  std::string event;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("event: ", 0) == 0) event = line.substr(7);
    if (line.rfind("data: ", 0) == 0) out.emplace_back(event, parse_json(line.substr(6)));
  }
  return out;
}

struct translate_row {
  const char* name;
  const char* body;
  const char* expect;  // the chat body (JSON), or "ERROR <path>"
};

// Runs each row through `translate` (body, chat) → optional error.
template <class Translate>
void check_translations(const std::vector<translate_row>& rows, Translate translate) {
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    json::value chat;
    std::optional<detail::openai_error> e = translate(parse_json(r.body), chat);
    const std::string expect = r.expect;
    if (expect.rfind("ERROR ", 0) == 0) {
      ASSERT_TRUE(e.has_value()) << json::dump(chat);
      EXPECT_EQ(e->status, 400);
      EXPECT_EQ(e->param, expect.substr(6)) << e->message;
      continue;
    }
    ASSERT_FALSE(e.has_value()) << e->message;
    EXPECT_EQ(chat, parse_json(r.expect)) << json::dump(chat);
  }
}

}  // namespace chatpeg::server::testing

// Shared checks for the stream tests: expected messages (JSON-equal arguments) and the
// streaming properties every partial message must have against the final one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chatpeg/base/utf8.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/json/json.h"

namespace chatpeg::stream::testing {

struct expected_call {
  std::string name;
  std::string arguments;  // JSON text, compared as parsed JSON
  std::string id = {};
};

struct expected_message {
  std::optional<std::string> content;
  std::optional<std::string> reasoning;
  std::vector<expected_call> calls;
};

inline bool is_prefix(std::string_view prefix, std::string_view whole) {
  return whole.substr(0, prefix.size()) == prefix;
}

inline void expect_object_json(const std::string& args) {
  auto v = json::parse(args);
  ASSERT_TRUE(v.has_value()) << "arguments are not JSON: " << args;
  EXPECT_TRUE(v->is_object()) << args;
}

inline void expect_message(const chat::message& got, const expected_message& want) {
  EXPECT_EQ(got.role, "assistant");
  EXPECT_EQ(got.content, want.content);
  EXPECT_EQ(got.reasoning_content, want.reasoning);
  ASSERT_EQ(got.tool_calls.size(), want.calls.size());
  for (std::size_t i = 0; i < want.calls.size(); ++i) {
    SCOPED_TRACE("call " + std::to_string(i));
    const auto& g = got.tool_calls[i];
    EXPECT_EQ(g.name, want.calls[i].name);
    EXPECT_EQ(g.id, want.calls[i].id);
    expect_object_json(g.arguments);
    auto gv = json::parse(g.arguments);
    auto wv = json::parse(want.calls[i].arguments);
    ASSERT_TRUE(wv.has_value()) << "bad test expectation " << want.calls[i].arguments;
    if (gv) {
      EXPECT_EQ(*gv, *wv) << g.arguments;
    }
  }
}

inline void expect_valid_utf8(const chat::message& m) {
  EXPECT_TRUE(base::is_valid_utf8(m.content.value_or("")));
  EXPECT_TRUE(base::is_valid_utf8(m.reasoning_content.value_or("")));
  for (const auto& c : m.tool_calls) {
    EXPECT_TRUE(base::is_valid_utf8(c.name));
    EXPECT_TRUE(base::is_valid_utf8(c.id));
    EXPECT_TRUE(base::is_valid_utf8(c.arguments));
  }
}

// `partial` (from a prefix of the output) against `later` (a longer prefix, or the final
// message): text and arguments are prefixes, calls never disappear, names and ids are final.
inline void expect_extends(const chat::message& partial, const chat::message& later) {
  const std::string pc = partial.content.value_or(""), lc = later.content.value_or("");
  const std::string pr = partial.reasoning_content.value_or("");
  const std::string lr = later.reasoning_content.value_or("");
  EXPECT_TRUE(is_prefix(pc, lc)) << "content '" << pc << "' vs '" << lc << "'";
  EXPECT_TRUE(is_prefix(pr, lr)) << "reasoning '" << pr << "' vs '" << lr << "'";
  ASSERT_LE(partial.tool_calls.size(), later.tool_calls.size());
  for (std::size_t i = 0; i < partial.tool_calls.size(); ++i) {
    const auto& p = partial.tool_calls[i];
    const auto& l = later.tool_calls[i];
    EXPECT_FALSE(p.name.empty());
    EXPECT_EQ(p.name, l.name) << "call " << i;
    if (!p.id.empty()) {
      EXPECT_EQ(p.id, l.id) << "call " << i;
    }
    EXPECT_TRUE(is_prefix(p.arguments, l.arguments))
        << "call " << i << " arguments '" << p.arguments << "' vs '" << l.arguments << "'";
  }
}

}  // namespace chatpeg::stream::testing

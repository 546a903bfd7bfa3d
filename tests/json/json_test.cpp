// Tests for the json module: error-returning parse with locations, escaping, paths.
#include "chatpeg/json/json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

namespace chatpeg::json {
namespace {

// Reference for append_escaped's bulk-run fast path: one byte at a time.
std::string reference_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    switch (b) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (b < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", b);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

TEST(Json, ParseKeepsKeyOrder) {
  auto v = parse(R"({"b":1,"a":2})");
  ASSERT_TRUE(v);
  EXPECT_EQ(dump(*v), R"({"b":1,"a":2})");
}

TEST(Json, SyntaxErrorHasLocation) {
  auto v = parse("{\n  \"a\": tru\n}");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, base::errc::syntax_error);
  EXPECT_EQ(v.error().where.line, 2u);
  EXPECT_NE(v.error().where.offset, base::npos);
}

TEST(Json, DepthLimit) {
  std::string deep(1000, '[');
  deep += std::string(1000, ']');
  auto v = parse(deep, {.max_depth = 100});
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, base::errc::limit_exceeded);
}

TEST(Json, QuoteEscapes) {
  EXPECT_EQ(quote("a\"b\\c\n\x01"), R"("a\"b\\c\n\u0001")");
  EXPECT_EQ(quote("é"), "\"é\"");
  EXPECT_EQ(quote(std::string("\b\f\r\t\x1f\x7f\0", 7)), "\"\\b\\f\\r\\t\\u001f\x7f\\u0000\"");
  EXPECT_EQ(quote(""), R"("")");
}

// Property: every byte string escapes to a JSON string that parses back to the same bytes
// (plain runs and escapes interleaved at every position), and append_escaped appends.
TEST(Json, AppendEscapedRoundTripsEveryByte) {
  std::string all;
  for (int b = 1; b < 128; ++b) all += static_cast<char>(b);
  for (std::size_t cut = 0; cut <= all.size(); cut += 7) {
    const std::string text = all.substr(cut) + "plain run" + all.substr(0, cut);
    std::string out = "prefix";
    append_escaped(out, text);
    ASSERT_EQ(out.substr(0, 6), "prefix");
    auto v = parse("\"" + out.substr(6) + "\"");
    ASSERT_TRUE(v.has_value()) << out;
    EXPECT_EQ(v->get<std::string>(), text);
  }
}

// The eight-bytes-at-a-time run scan against the byte loop: random texts of runs of every
// length (crossing the 8-byte boundaries) and bytes to escape, UTF-8 and invalid bytes.
TEST(Json, AppendEscapedMatchesByteLoop) {
  std::mt19937 rng(21);
  const char specials[] = {'"',    '\\',   '\n',   '\r',   '\t',   '\b',   '\f',
                           '\x00', '\x01', '\x1F', '\x7F', '\x80', '\xC3', '\xA9',
                           '\xFF', '/',    ' ',    '!',    '#',    ']'};
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    const std::size_t pieces = rng() % 8;
    for (std::size_t k = 0; k < pieces; ++k) {
      const std::size_t run = rng() % 20;
      for (std::size_t j = 0; j < run; ++j) text += static_cast<char>('a' + rng() % 26);
      const std::size_t n = rng() % 3;
      for (std::size_t j = 0; j < n; ++j) text += specials[rng() % sizeof specials];
    }
    std::string out = i % 2 ? "kept" : "";
    const std::string before = out;
    append_escaped(out, text);
    ASSERT_EQ(out, before + reference_escape(text)) << text;
  }
}

TEST(Json, Paths) {
  EXPECT_EQ(path_key("$", "tools"), "$.tools");
  EXPECT_EQ(path_index("$.tools", 2), "$.tools[2]");
  EXPECT_EQ(path_key("$", "a b"), "$[\"a b\"]");
}

TEST(Json, DumpReplacesInvalidUtf8) {
  value v = std::string("a\xFF");
  EXPECT_EQ(dump(v), "\"a\xEF\xBF\xBD\"");
}

TEST(Json, SameComparesObjectsAsUnorderedMaps) {
  struct same_case {
    const char* a;
    const char* b;
    bool want;
  };
  const same_case cases[] = {
      {R"({"a": 1, "b": [1, {"c": 2, "d": 3}]})", R"({"b": [1, {"d": 3, "c": 2}], "a": 1})", true},
      {R"({"a": 1})", R"({"a": 1.0})", true},
      {R"([1, 2])", R"([2, 1])", false},
      {R"({"a": 1})", R"({"a": 1, "b": null})", false},
      {R"({"a": "1"})", R"({"a": 1})", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.a) + " vs " + c.b);
    auto a = parse(c.a);
    auto b = parse(c.b);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(same(*a, *b), c.want);
  }
}

}  // namespace
}  // namespace chatpeg::json

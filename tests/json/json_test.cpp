// Tests for the json module: error-returning parse with locations, escaping, paths.
#include "chatpeg/json/json.h"

#include <gtest/gtest.h>

namespace chatpeg::json {
namespace {

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

}  // namespace
}  // namespace chatpeg::json

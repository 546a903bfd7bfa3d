// The builder's JSON rules through the matcher: valid, invalid and partial JSON (escapes,
// \u, numbers, nesting, whitespace), under the strict, lenient and complete flags.
#include <gtest/gtest.h>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {
namespace {

struct json_case {
  const char* input;
  match_flags flags;
  match_status status;
  std::size_t end;  // result end, or error offset on fail
};

class JsonMatch : public ::testing::Test {
 protected:
  void SetUp() override {
    builder b;
    auto g = b.build(b.json_value());
    ASSERT_TRUE(g.has_value()) << g.error().to_string();
    g_ = std::move(*g);
  }
  void run(const std::vector<json_case>& cases) {
    for (const auto& c : cases) {
      SCOPED_TRACE(c.input);
      const auto r = match(g_, c.input, c.flags);
      EXPECT_EQ(match_status_name(r.status), match_status_name(c.status)) << r.error.to_string();
      EXPECT_EQ(r.status == match_status::fail ? r.error.where.offset : r.end, c.end)
          << r.error.to_string();
    }
  }
  grammar g_;
};

constexpr auto C = match_flags::complete;
constexpr auto L = match_flags::lenient;
constexpr auto LC = match_flags::lenient | match_flags::complete;
constexpr auto ok = match_status::success;
constexpr auto no = match_status::fail;
constexpr auto more = match_status::need_more_input;

TEST_F(JsonMatch, Valid) {
  run({
      {"null", C, ok, 4},
      {"true", C, ok, 4},
      {"false", C, ok, 5},
      {"0", C, ok, 1},
      {"-12.5e+3", C, ok, 8},
      {"1E9", C, ok, 3},
      {"\"\"", C, ok, 2},
      {R"("a\"b\\c\/d\b\f\n\r\t")", C, ok, 22},
      {R"("\u00e9\uD83D\uDE00")", C, ok, 20},
      {"\"h\xC3\xA9llo \xF0\x9F\x98\x80\"", C, ok, 13},
      {"[]", C, ok, 2},
      {"{}", C, ok, 2},
      {"[ 1 , 2 ,3 ]", C, ok, 12},
      {"{ \"a\" : 1 , \"b\":[true,{\"c\":null}] }", C, ok, 35},
      {"{\n  \"k\": \"v\"\n}", C, ok, 14},
      {"[[[[[[]]]]]]", C, ok, 12},
  });
}

TEST_F(JsonMatch, Invalid) {
  run({
      {"{\"a\" 1}", C, no, 5},
      {"[1,]", C, no, 3},
      {"[1 2]", C, no, 3},
      {"\"\\x\"", C, no, 2},
      {"\"a\\u12G4\"", C, no, 6},
      {"\"a\nb\"", C, no, 2},
      {"01", C, no, 1},
      {"-", C, no, 1},
      {"1.", C, no, 1},  // complete: the number "1" is followed by unexpected input
      {"1e", C, no, 1},
      {"tru", C, no, 0},
      {"nul", C, no, 0},
      {"{'a':1}", C, no, 1},
      {"[1,2", C, no, 4},
      {"\"open", C, no, 5},
      {"", C, no, 0},
      {"[1] x", C, no, 3},
  });
}

TEST_F(JsonMatch, Partial) {
  run({
      {"{\"a\": [1, \"x", L, more, 12},
      {"{\"a\": tr", L, more, 8},
      {"\"abc\\", L, more, 5},
      {"\"\\u00", L, more, 5},
      {"-", L, more, 1},
      {"1.", L, more, 2},
      {"12", L, more, 2},
      {"0", L, more, 1},
      {"[1,", L, more, 3},
      {"{", L, more, 1},
      {"", L, more, 0},
      {"\"h\xC3", L, more, 3},
      {"[1] ", L, ok, 3},  // the value ended; what follows is not its business
      {"[1] ", LC, no, 3},
      {"{\"a\": x", L, no, 6},
      {"[1,]", L, no, 3},
  });
}

TEST(JsonRules, StringAst) {
  builder b;
  auto g = b.build(b.json_string());
  ASSERT_TRUE(g.has_value());
  const std::string input = R"("a\n")";
  const auto r = match(*g, input);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.ast.dump(*g, input),
            "json-string [0,5) \"\"a\\\\n\"\"\n"
            "  json-string-content [1,4) \"a\\\\n\"\n");
}

TEST(JsonRules, LongStringIsFewVisits) {
  // A 64 KB string of plain characters is one char_class run, not 64K node visits.
  builder b;
  auto g = b.build(b.json_string());
  ASSERT_TRUE(g.has_value());
  const std::string input = "\"" + std::string(64 * 1024, 'x') + "\"";
  matcher m(*g, {.max_steps = 100});
  const auto r = m.match(input, match_flags::complete);
  EXPECT_TRUE(r.ok()) << r.error.to_string();
}

TEST(JsonRules, IntegerAndBool) {
  builder b;
  auto g = b.build(b.json_integer() + b.literal(",") + b.json_bool() + b.end());
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(match(*g, "-42,true").ok());
  EXPECT_TRUE(match(*g, "0,false").ok());
  EXPECT_FALSE(match(*g, "1.5,true").ok());
  EXPECT_FALSE(match(*g, "1,null").ok());
}

}  // namespace
}  // namespace chatpeg::peg

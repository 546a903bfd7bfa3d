// Tests for base/error and base/result: formatting of locations and result access.
#include "chatpeg/base/error.h"

#include <gtest/gtest.h>

#include "chatpeg/base/result.h"

namespace chatpeg::base {
namespace {

TEST(Error, LocationFormatting) {
  location l;
  EXPECT_TRUE(l.empty());
  l.file = "t.jinja";
  l.line = 3;
  l.column = 7;
  l.offset = 42;
  EXPECT_EQ(l.to_string(), "t.jinja:3:7, byte 42");
  location p;
  p.path = "$.tools[0]";
  EXPECT_EQ(p.to_string(), "at $.tools[0]");
}

TEST(Error, OneLine) {
  location where;
  where.offset = 5;
  auto e = make_error(errc::no_match, "no match", where, "\"}\"");
  EXPECT_EQ(e.to_string(), "no match (byte 5); expected \"}\"");
}

TEST(Error, LineColumnFromOffset) {
  location where;
  where.offset = 6;
  fill_line_column(where, "ab\ncd\nef");
  EXPECT_EQ(where.line, 3u);
  EXPECT_EQ(where.column, 1u);
}

TEST(Result, ValueAndError) {
  result<int> ok = 3;
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 3);
  result<int> bad = make_error(errc::invalid_argument, "x");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, errc::invalid_argument);
  status s;
  EXPECT_TRUE(s);
  status f = make_error(errc::io_error, "y");
  EXPECT_FALSE(f);
}

}  // namespace
}  // namespace chatpeg::base

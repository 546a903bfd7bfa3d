// peg::matcher::match_growing: matching a growing input gives exactly what a fresh match()
// of the same input gives (status, span, error, AST), whatever the feeding pattern.
#include <gtest/gtest.h>

#include <string>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {
namespace {

TEST(MatcherGrowing, EveryPrefixMatchesLikeAFreshMatch) {
  builder b;
  auto g = b.build(b.content(b.until("<t>")) + b.optional(b.literal("<t>") + b.rest()));
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  const std::string text = "hello <t>world";
  matcher grow(*g);
  matcher fresh(*g);
  for (std::size_t k = 0; k <= text.size(); ++k) {
    const std::string_view prefix(text.data(), k);
    const auto a = grow.match_growing(prefix, match_flags::lenient);
    const auto e = fresh.match(prefix, match_flags::lenient);
    EXPECT_EQ(a.status, e.status) << k;
    EXPECT_EQ(a.end, e.end) << k;
    EXPECT_EQ(a.ast.dump(*g, prefix), e.ast.dump(*g, prefix)) << k;
  }
}

}  // namespace
}  // namespace chatpeg::peg

// until's scans (src/peg/matcher_scan.cpp match_until): one first byte (memchr), a few first
// bytes (eight bytes at a time) and many (a per-byte table) must give the same result. The
// few-bytes grammar is checked against the same delimiters plus four one-byte delimiters that
// never occur in the input (they force the table scan without changing any result), on random
// inputs full of delimiter prefixes at every position, runs crossing 8-byte boundaries, cut
// anywhere, under every match flag; and against a plain earliest-occurrence search.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::peg {
namespace {

grammar until_grammar(std::vector<std::string> delimiters) {
  builder b;
  auto g = b.build(b.tag(tag::content, b.until_one_of(std::move(delimiters))) +
                   b.optional(b.literal("</p>") | b.literal("\n</p>") | b.literal("<x>")));
  EXPECT_TRUE(g.has_value()) << g.error().to_string();
  return g ? std::move(*g) : grammar{};
}

std::string outcome(const grammar& g, const std::string& input, match_flags flags) {
  matcher m(g);
  const auto r = m.match(input, flags);
  return std::string(match_status_name(r.status)) + " " + std::to_string(r.end) + "\n" +
         r.ast.dump(g, input) + r.error.to_string();
}

// Earliest start of any delimiter in text (text.size() when none).
std::size_t earliest(const std::string& text, const std::vector<std::string>& ds) {
  std::size_t best = text.size();
  for (const auto& d : ds)
    best = std::min(best, text.find(d) == std::string::npos ? text.size() : text.find(d));
  return best;
}

TEST(MatcherUntil, FewFirstBytesScanMatchesTableScan) {
  const std::vector<std::vector<std::string>> sets = {
      {"</p>", "\n</p>"},
      {"</p>", "\n</p>", "<x>"},
      {"<x>", "]]", "\n\n", "|"},
  };
  const std::vector<std::string> pieces = {"a",
                                           "plain text run",
                                           "0123456789abcdefghij",
                                           "<",
                                           "</",
                                           "</p",
                                           "</p>",
                                           "\n",
                                           "\n<",
                                           "\n</p",
                                           "\n</p>",
                                           "<x",
                                           "<x>",
                                           "]",
                                           "]]",
                                           "|",
                                           "\n\n",
                                           "\xC3\xA9",
                                           "\xE2\x82",
                                           "\xFF"};
  std::mt19937 rng(41);
  const match_flags all[] = {match_flags::none, match_flags::lenient, match_flags::complete,
                             match_flags::lenient | match_flags::complete};
  for (const auto& ds : sets) {
    const grammar few = until_grammar(ds);
    auto padded = ds;
    for (const char* never : {"\x01", "\x02", "\x03", "\x04"}) padded.emplace_back(never);
    const grammar table = until_grammar(padded);
    for (int i = 0; i < 1500; ++i) {
      std::string s;
      const std::size_t n = rng() % 10;
      for (std::size_t k = 0; k < n; ++k) s += pieces[rng() % pieces.size()];
      if (rng() % 3 == 0) s.resize(rng() % (s.size() + 1));
      for (const auto flags : all) {
        ASSERT_EQ(outcome(few, s, flags), outcome(table, s, flags))
            << "input '" << s << "' flags " << static_cast<int>(flags);
      }
      // Without lenient, the content ends at the earliest delimiter.
      matcher m(few);
      const auto r = m.match(s, match_flags::none);
      ASSERT_FALSE(r.ast.nodes().empty()) << s;
      EXPECT_EQ(r.ast.nodes()[0].end, earliest(s, ds)) << s;
    }
  }
}

// A delimiter whose first byte sits at every offset of a long run (every SWAR lane).
TEST(MatcherUntil, DelimiterAtEveryLane) {
  const grammar g = until_grammar({"</p>", "\n</p>"});
  for (std::size_t at = 0; at < 40; ++at) {
    for (const std::string d : {"</p>", "\n</p>"}) {
      const std::string s = std::string(at, 'x') + d + "tail";
      matcher m(g);
      const auto r = m.match(s, match_flags::none);
      ASSERT_FALSE(r.ast.nodes().empty());
      EXPECT_EQ(r.ast.nodes()[0].end, at) << d << " at " << at;
    }
  }
}

}  // namespace
}  // namespace chatpeg::peg

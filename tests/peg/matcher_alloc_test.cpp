// "Nothing allocates per byte in the matcher's hot loops": the global allocator is counted
// while a warmed-up matcher runs, and a 64 KB input must cost exactly as many allocations as a
// 1 KB input of the same shape (the result's AST copy and nothing else that grows with the
// bytes). Covers the scanners (until, char-class runs), JSON strings with escapes, repetitions
// and the lenient / need_more_input path.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace chatpeg::peg {
namespace {

// Text of n bytes with an escape every 40 bytes and a 2-byte code point every 40 bytes.
std::string body(std::size_t n) {
  std::string s;
  while (s.size() < n) s += "The quick brown fox \\n jumps \\\"over\\\" caf\xC3\xA9 ";
  s.resize(n);
  while (!s.empty() && (static_cast<unsigned char>(s.back()) >= 0x80 || s.back() == '\\')) {
    s.pop_back();
  }
  return s;
}

std::size_t count_allocations(matcher& m, const std::string& input, match_flags flags) {
  (void)m.match(input, flags);  // warm: vectors and memo tables reach their size
  (void)m.match(input, flags);
  allocations = 0;
  counting = true;
  const auto r = m.match(input, flags);
  counting = false;
  EXPECT_NE(r.status, match_status::fail) << r.error.to_string();
  return allocations.load();
}

TEST(MatcherAllocations, IndependentOfInputLength) {
  builder b;
  auto call = b.literal("<tool_call>")
              << b.tag(tag::tool_args, b.json_value()) << b.literal("</tool_call>");
  auto g = b.build(b.content(b.until("<tool_call>")) + b.zero_or_more(call + b.space()) +
                   b.content(b.chars("[^<]", 0, unbounded)) + b.end());
  ASSERT_TRUE(g.has_value()) << g.error().to_string();
  auto input = [](std::size_t n) {
    const std::string text = body(n);
    return text + "<tool_call>{\"name\": \"w\", \"arguments\": {\"content\": \"" + text +
           "\", \"n\": [1, 2.5, true]}}</tool_call>\n" + text;
  };
  for (const auto flags : {match_flags::none, match_flags::lenient | match_flags::complete}) {
    SCOPED_TRACE(static_cast<int>(flags));
    matcher small(*g);
    matcher large(*g);
    const std::size_t a = count_allocations(small, input(1024), flags);
    const std::size_t z = count_allocations(large, input(64 * 1024), flags);
    EXPECT_EQ(a, z);
    EXPECT_LE(z, 4u);
    // A cut input (need_more_input inside the string) allocates no more either.
    const std::string cut_small = input(1024).substr(0, 1500);
    const std::string cut_large = input(64 * 1024).substr(0, 64 * 1024 + 500);
    EXPECT_EQ(count_allocations(small, cut_small, match_flags::lenient),
              count_allocations(large, cut_large, match_flags::lenient));
  }
}

}  // namespace
}  // namespace chatpeg::peg

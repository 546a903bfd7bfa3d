// Streaming work is linear for every request, counted rather than timed: every corpus
// template × {no tools, one tool offered, reasoning on} streams 16 KB and 64 KB of output in
// 4-byte chunks, and the matcher's work (session_stats::scanned_bytes, node_visits: input
// bytes its scans read, nodes it visited) stays within one constant times the output size for
// all of them, and grows at most 4.5× for 4× the output. Run twice: with the general path
// only (every feed matched and folded: the general mechanism must be linear by itself) and
// with the default paths (feed_view). A quadratic path fails this on any machine.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/stream/session.h"
#include "support/conformance.h"

namespace chatpeg::stream {
namespace {

// Bytes scanned and nodes visited per output byte, for every template and shape. (Measured
// worst: see the printed table; a rescan per feed of a 64 KB output would be ~4000.)
constexpr double kScannedPerByte = 48;
constexpr double kVisitsPerByte = 24;
constexpr double kMaxGrowth = 6;  // work(64 KB) / work(16 KB): 4 when linear, 16 when quadratic

// Text a model writes: words, punctuation that starts markers in many templates (<, {, [, |),
// quotes, escapes, newlines and multi-byte UTF-8; never a whole marker.
std::string model_text(std::size_t size, std::uint64_t seed) {
  static const char* const pieces[] = {
      "the ", "weather ", "is ",  "fine",   ". ",    "\n",           "x < y ",        "a<b ",
      "{ ",   "} ",       "[1] ", "\"q\" ", "\\n ",  "caf\xC3\xA9 ", "\xE6\x97\xA5 ", "| ",
      "- ",   ": ",       "<",    "</",     "tool ", "call "};
  std::mt19937_64 rng(seed);
  std::string out;
  while (out.size() < size) out += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
  // Cut on a UTF-8 boundary.
  std::size_t n = size;
  while (n > 0 && (static_cast<unsigned char>(out[n]) & 0xC0) == 0x80) --n;
  out.resize(n);
  return out;
}

struct work {
  std::uint64_t scanned = 0;
  std::uint64_t visits = 0;
  std::size_t size = 0;
};

// Streams output in 4-byte chunks; the session's counters after the last feed.
base::result<work> stream(const chat::prepared& p, const std::string& output, bool general) {
  session s(p, {.general_path_only = general});
  for (std::size_t at = 0; at < output.size(); at += 4) {
    const std::string_view chunk = std::string_view(output).substr(at, 4);
    if (general) {
      auto r = s.feed(chunk);
      if (!r) return std::move(r).error();
    } else {
      auto r = s.feed_view(chunk);
      if (!r) return std::move(r).error();
    }
  }
  const auto st = s.stats();
  if (auto f = s.finish(); !f) return std::move(f).error();
  return work{st.scanned_bytes, st.node_visits, output.size()};
}

struct shape {
  const char* name;
  const char* body;
  bool reasoning;
};

const shape shapes[] = {
    {"no tools", R"({"messages":[{"role":"user","content":"Hi"}]})", false},
    {"one tool", R"({"messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"function",
      "function":{"name":"get_weather","description":"Weather","parameters":{"type":"object",
      "properties":{"city":{"type":"string","description":"City"}},"required":["city"]}}}]})",
     false},
    {"reasoning", R"({"messages":[{"role":"user","content":"Hi"}],
      "chat_template_kwargs":{"enable_thinking":true},"reasoning_format":"auto"})",
     true},
};

// The output of a shape: with reasoning, inside the reasoning block (opened by the prompt or
// by the template's start marker), else plain text.
std::string output_for(const chat::chat_template& t, const chat::prepared& p, bool reasoning,
                       std::size_t size) {
  const auto& rs = t.analysis().reasoning;
  const bool opened = !p.parse_prefix.empty();
  std::string prefix = reasoning && !opened && !rs.start.empty() ? rs.start : "";
  return prefix + model_text(size, 7);
}

TEST(SessionWork, LinearForEveryTemplateAndShape) {
  CHATPEG_REQUIRE_SHARED(shared);
  int pairs = 0;
  double worst_scanned = 0, worst_visits = 0, worst_growth = 0;
  std::string worst_at;
  for (const auto& e : std::filesystem::directory_iterator(shared / "templates")) {
    if (e.path().extension() != ".jinja") continue;
    const std::string stem = e.path().stem().string();
    std::string error;
    auto t = testing::corpus_template(shared, stem + ".jinja",
                                      testing::special_tokens_for(shared, stem), &error);
    ASSERT_TRUE(t) << stem << ": " << error;
    for (const auto& sh : shapes) {
      auto req = chat::request::from_json(*json::parse(sh.body));
      ASSERT_TRUE(req) << req.error().to_string();
      auto p = chat::prepare(*t, *req);
      if (!p) continue;  // a template that cannot express tools: a typed refusal
      for (const bool general : {true, false}) {
        const std::string label = stem + " / " + sh.name + (general ? " / general" : " / default");
        SCOPED_TRACE(label);
        auto small = stream(*p, output_for(*t, *p, sh.reasoning, 16 * 1024), general);
        auto large = stream(*p, output_for(*t, *p, sh.reasoning, 64 * 1024), general);
        ASSERT_TRUE(small) << small.error().to_string();
        ASSERT_TRUE(large) << large.error().to_string();
        ++pairs;
        const double scanned = double(large->scanned) / double(large->size);
        const double visits = double(large->visits) / double(large->size);
        const double growth = double(large->scanned + large->visits) /
                              double(std::max<std::uint64_t>(small->scanned + small->visits, 1));
        if (std::getenv("CHATPEG_WORK_TABLE")) {
          std::cout << label << ": " << small->scanned << " " << small->visits << " | "
                    << large->scanned << " " << large->visits << "\n";
        }
        EXPECT_LE(scanned, kScannedPerByte);
        EXPECT_LE(visits, kVisitsPerByte);
        EXPECT_LE(growth, kMaxGrowth);
        if (scanned > worst_scanned || visits > worst_visits || growth > worst_growth) {
          worst_at = label;
        }
        worst_scanned = std::max(worst_scanned, scanned);
        worst_visits = std::max(worst_visits, visits);
        worst_growth = std::max(worst_growth, growth);
      }
    }
  }
  std::cout << "session work: " << pairs
            << " template x shape x path pairs; worst per byte: " << worst_scanned << " scanned, "
            << worst_visits << " visits; worst growth 16->64 KB " << worst_growth
            << " (last worst: " << worst_at << ")\n";
  EXPECT_GT(pairs, 250);
}

}  // namespace
}  // namespace chatpeg::stream

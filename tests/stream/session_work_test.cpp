// Streaming work is linear for every request, counted rather than timed: every corpus
// template × {no tools, one tool offered, reasoning on} streams 16 KB and 64 KB of output in
// 4-byte chunks, and the matcher's work (session_stats::scanned_bytes, node_visits: input
// bytes its scans read, nodes it visited) stays within one constant times the output size for
// all of them, and grows at most 4.5× for 4× the output. Run twice: with the general path
// only (every feed matched and folded: the general mechanism must be linear by itself) and
// with the default paths. A quadratic path fails this on any machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "support/conformance.h"

namespace chatpeg::stream {
namespace {

// Bytes scanned and nodes visited per output byte, one constant for every template and shape.
// A feed redoes the path from the root to the end of input, so it re-reads the markup on that
// path (a call's opening up to its open argument: ~200 bytes for Command R7B's JSON headers)
// and the new bytes: up to ~52 bytes and ~22 visits per byte in 4-byte chunks (the printed
// summary has the worst). A rescan per feed of a 64 KB output would be ~8000 bytes per byte.
constexpr double kScannedPerByte = 64;
constexpr double kVisitsPerByte = 32;
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

// How the stream is fed: every feed through the general path; the default paths;
// with token ids (each byte an ordinary token, the preserved markers special tokens).
enum class feeding { general, usual, tokens };
const char* name_of(feeding f) {
  return f == feeding::general ? "general" : f == feeding::usual ? "default" : "token ids";
}

// Streams output in 4-byte chunks; the session's counters after the last feed.
base::result<work> stream(const chat::prepared& p, const std::string& output, feeding how) {
  session_options options;
  options.general_path_only = how == feeding::general;
  if (how == feeding::tokens) {
    for (std::size_t i = 0; i < p.preserved_tokens.size(); ++i) {
      const std::string& text = p.preserved_tokens[i];
      const bool listed = std::any_of(options.special_tokens.begin(), options.special_tokens.end(),
                                      [&](const auto& t) { return t.first == text; });
      if (!listed) options.special_tokens.emplace_back(text, 100000 + std::int32_t(i));
    }
  }
  // Token ids: each byte an ordinary token, a preserved marker one special token (the longest
  // at each position, left to right, as a tokenizer would).
  std::vector<std::int32_t> ids(output.size(), 7);
  auto by_length = options.special_tokens;
  std::sort(by_length.begin(), by_length.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (std::size_t at = 0; at < output.size();) {
    const auto it = std::find_if(by_length.begin(), by_length.end(), [&](const auto& t) {
      return output.compare(at, t.first.size(), t.first) == 0;
    });
    if (it == by_length.end()) {
      ++at;
      continue;
    }
    ids[at] = it->second;
    std::fill(ids.begin() + std::ptrdiff_t(at + 1),
              ids.begin() + std::ptrdiff_t(at + it->first.size()), -1);
    at += it->first.size();
  }
  session s(p, std::move(options));
  for (std::size_t at = 0; at < output.size(); at += 4) {
    const std::string_view chunk = std::string_view(output).substr(at, 4);
    const auto tokens = how == feeding::tokens
                            ? std::span<const std::int32_t>(ids).subspan(at, chunk.size())
                            : std::span<const std::int32_t>();
    if (auto r = s.feed(chunk, tokens); !r) return std::move(r).error();
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

// Checks one request's work at 16 KB and 64 KB (make(size) gives the output), on both paths,
// and keeps the worst numbers for the summary line.
class work_check {
 public:
  void run(const chat::prepared& p, const std::function<std::string(std::size_t)>& make,
           const std::string& name, bool with_tokens) {
    for (const feeding how : {feeding::general, feeding::usual, feeding::tokens}) {
      if (how == feeding::tokens && !with_tokens) continue;
      const std::string label = name + " / " + name_of(how);
      SCOPED_TRACE(label);
      auto small = stream(p, make(16 * 1024), how);
      auto large = stream(p, make(64 * 1024), how);
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
      if (scanned > worst_scanned) worst_scanned_at = label;
      worst_scanned = std::max(worst_scanned, scanned);
      worst_visits = std::max(worst_visits, visits);
      worst_growth = std::max(worst_growth, growth);
    }
  }
  void print(const char* what) const {
    std::cout << what << ": " << pairs << " request x path pairs; worst per byte: " << worst_scanned
              << " bytes scanned (" << worst_scanned_at << "), " << worst_visits
              << " node visits; worst growth 16 -> 64 KB: " << worst_growth << "\n";
  }
  int pairs = 0;

 private:
  double worst_scanned = 0, worst_visits = 0, worst_growth = 0;
  std::string worst_scanned_at;
};

std::shared_ptr<const chat::chat_template> corpus(const std::filesystem::path& shared,
                                                  const std::string& stem,
                                                  const json::value& special) {
  std::string error;
  auto t = testing::corpus_template(shared, stem + ".jinja", special, &error);
  EXPECT_TRUE(t) << stem << ": " << error;
  return t;
}

TEST(SessionWork, LinearForEveryTemplateAndShape) {
  CHATPEG_REQUIRE_SHARED(shared);
  work_check check;
  for (const auto& e : std::filesystem::directory_iterator(shared / "templates")) {
    if (e.path().extension() != ".jinja") continue;
    const std::string stem = e.path().stem().string();
    auto t = corpus(shared, stem, testing::special_tokens_for(shared, stem));
    if (!t) continue;
    for (const auto& sh : shapes) {
      auto req = chat::request::from_json(*json::parse(sh.body));
      ASSERT_TRUE(req) << req.error().to_string();
      auto p = chat::prepare(*t, *req);
      if (!p) continue;  // a template that cannot express tools: a typed refusal
      check.run(
          *p, [&](std::size_t n) { return output_for(*t, *p, sh.reasoning, n); },
          stem + " / " + sh.name, /*with_tokens=*/true);
    }
  }
  check.print("session work, text");
  EXPECT_GT(check.pairs, 250);
}

// Each round-trip corpus template's own one-call case (kind b_one_call), with its template.
void for_each_one_call(const std::filesystem::path& shared,
                       const std::function<void(const chat::chat_template&, const std::string&,
                                                const json::value&)>& visit) {
  for (const auto& path : testing::roundtrip_files(shared)) {
    auto doc = json::parse(testing::read_file(path));
    ASSERT_TRUE(doc);
    const std::string stem = (*doc)["template"].get<std::string>();
    auto t = corpus(shared, stem, doc->value("special_tokens", json::value::object()));
    if (!t) continue;
    for (const auto& cs : (*doc)["cases"]) {
      if (cs["kind"] == "b_one_call") visit(*t, stem, cs);
    }
  }
}

// Reasoning that writes a call and then runs on, closed at the end or never: until the close
// (or the end) decides, the call may be reasoning or a call, and the work must still be linear.
// Each template's own one-call output (the round-trip corpus) inside its reasoning block.
TEST(SessionWork, LinearForReasoningThatHoldsACall) {
  CHATPEG_REQUIRE_SHARED(shared);
  work_check check;
  for_each_one_call(
      shared, [&](const chat::chat_template& t, const std::string& stem, const json::value& cs) {
        const auto& rs = t.analysis().reasoning;
        if (rs.end.empty() || t.analysis().tools.format == chat::tool_format::none) return;
        const std::string call = cs["model_output"].get<std::string>();
        json::value body = testing::roundtrip_request(cs["render_context"]);
        body["reasoning_format"] = "auto";
        auto req = chat::request::from_json(body);
        ASSERT_TRUE(req) << req.error().to_string();
        auto p = chat::prepare(t, *req);
        if (!p) return;
        const std::string open = p->parse_prefix.empty() ? rs.start : "";
        for (const bool closed : {false, true}) {
          check.run(
              *p,
              [&](std::size_t n) {
                return open + "I will write " + call + " " + model_text(n, 11) +
                       (closed ? rs.end + "Done." : "");
              },
              stem + " / call in reasoning / " + (closed ? "closed" : "never closed"),
              /*with_tokens=*/false);
        }
      });
  check.print("session work, calls in reasoning");
  EXPECT_GT(check.pairs, 10);
}

// Plain text for a string value in any argument syntax (no quote, escape or marker byte).
std::string argument_text(std::size_t size) {
  static const char* const words[] = {"lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "42. "};
  std::string out;
  for (std::size_t i = 0; out.size() < size; ++i) out += words[(i * 7 + i / 3) % 6];
  out.resize(size);
  return out;
}

// A call with one long string argument: each template's own rendering of get_weather (the
// round-trip corpus's one-call case) with the city stretched, under auto and required; and a
// response_format answer with one long string, on every template.
TEST(SessionWork, LinearForLongArgumentsAndJsonAnswers) {
  CHATPEG_REQUIRE_SHARED(shared);
  work_check check;
  std::string skipped;
  for_each_one_call(
      shared, [&](const chat::chat_template& t, const std::string& stem, const json::value& cs) {
        const std::string output = cs["model_output"].get<std::string>();
        const std::size_t city = output.find("Paris");
        if (city == std::string::npos) return;
        for (const char* choice : {"auto", "required"}) {
          json::value body = testing::roundtrip_request(cs["render_context"]);
          body["tool_choice"] = choice;
          auto req = chat::request::from_json(body);
          ASSERT_TRUE(req) << req.error().to_string();
          auto p = chat::prepare(t, *req);
          ASSERT_TRUE(p) << stem << ": " << p.error().to_string();
          check.run(
              *p,
              [&](std::size_t n) {
                return output.substr(0, city) + argument_text(n) + output.substr(city + 5);
              },
              stem + " / long argument / " + choice, /*with_tokens=*/true);
        }
      });
  for (const auto& e : std::filesystem::directory_iterator(shared / "templates")) {
    if (e.path().extension() != ".jinja") continue;
    const std::string stem = e.path().stem().string();
    auto t = corpus(shared, stem, testing::special_tokens_for(shared, stem));
    if (!t) continue;
    auto req =
        chat::request::from_json(*json::parse(R"({"messages":[{"role":"user","content":"Hi"}],
      "response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object",
      "properties":{"answer":{"type":"string"}},"required":["answer"]}}}})"));
    ASSERT_TRUE(req);
    auto p = chat::prepare(*t, *req);
    if (!p) continue;
    // Right away, or after the reasoning block when the prompt opens one.
    std::string before;
    const auto answer = [&](std::size_t n) {
      return before + "{\"answer\": \"" + argument_text(n) + "\"}";
    };
    if (!parse(*p, answer(8))) before = t->analysis().reasoning.end + "\n";
    if (!parse(*p, answer(8))) {
      skipped += " " + stem;  // answers need more than that (e.g. a recipient header)
      continue;
    }
    check.run(*p, answer, stem + " / response_format", /*with_tokens=*/false);
  }
  check.print("session work, arguments");
  std::cout << "  response_format skipped (the answer is not a bare object there):" << skipped
            << "\n";
  EXPECT_GT(check.pairs, 150);
}

}  // namespace
}  // namespace chatpeg::stream

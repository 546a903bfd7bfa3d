// Streaming cost over the whole template corpus: every template in ../shared/templates
// (CHATPEG_SHARED overrides) × {no tools, one tool offered, reasoning on}, 64 KB of model text
// in 4-byte chunks through a fresh stream::session (feed, as the gateway feeds), then
// finish(). Per pair: ns per feed (all feeds and finish, thread CPU time, the best of the
// iterations), the average of the first and of the last 64 feeds (timed one by one) and their
// ratio. Counters: pairs, worst_feed_ns and worst_last_x_first over all pairs (budget: ≤
// kFeedBudgetNs = 250 ns per feed, ≤ 2), parse_feed_ns (the baseline: one stream::parse of the same
// output, per feed, for the pair with the worst feed). The table of the ten slowest pairs goes to
// stderr. Without ../shared the benchmark skips with a visible message. CHATPEG_BENCH_ONLY=TEXT
// runs only the pairs whose name holds TEXT. Measurements: docs/perf.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "chatpeg/base/file.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "shared_corpus.h"

namespace {

using namespace chatpeg;

constexpr std::size_t kChunk = 4;
constexpr std::size_t kSize = 64 * 1024;
constexpr double kFeedBudgetNs = 250;  // per 4-byte feed, every pair

using bench::shared_dir;

// The special tokens of a template from the render goldens' table (bos/eos for templates that
// print them), else none.
json::value special_tokens(const std::filesystem::path& shared, const std::string& stem) {
  auto text = base::read_file((shared / "conformance" / "render" / "special_tokens.json").string());
  if (!text) return json::value::object();
  auto all = json::parse(*text);
  if (!all || !all->contains(stem) || !(*all)[stem].contains("tokens")) {
    return json::value::object();
  }
  return (*all)[stem]["tokens"];
}

// Text a model writes: words, marker-like punctuation, quotes, escapes, multi-byte UTF-8.
std::string model_text(std::size_t size) {
  static const char* const pieces[] = {"the ", "weather ", "is ",  "fine",         ". ",
                                       "\n",   "x < y ",   "a<b ", "{ ",           "} ",
                                       "[1] ", "\"q\" ",   "\\n ", "caf\xC3\xA9 ", "\xE6\x97\xA5 ",
                                       "| ",   ": ",       "</",   "tool "};
  std::mt19937_64 rng(7);
  std::string out;
  while (out.size() < size) out += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
  std::size_t n = size;
  while (n > 0 && (static_cast<unsigned char>(out[n]) & 0xC0) == 0x80) --n;
  out.resize(n);
  return out;
}

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct pair_case {
  std::string name;
  chat::prepared prepared;
  std::string output;
};

struct pair_result {
  double feed_ns = 1e18, first_ns = 1e18, last_ns = 1e18, parse_feed_ns = 1e18;
};

const char* const shape_bodies[][2] = {
    {"no tools", R"({"messages":[{"role":"user","content":"Hi"}]})"},
    {"one tool", R"({"messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"function",
      "function":{"name":"get_weather","description":"Weather","parameters":{"type":"object",
      "properties":{"city":{"type":"string","description":"City"}},"required":["city"]}}}]})"},
    {"reasoning", R"({"messages":[{"role":"user","content":"Hi"}],
      "chat_template_kwargs":{"enable_thinking":true},"reasoning_format":"auto"})"},
};

std::vector<pair_case> corpus_pairs(const std::filesystem::path& shared) {
  std::vector<pair_case> out;
  const std::string text = model_text(kSize);
  const char* only = std::getenv("CHATPEG_BENCH_ONLY");  // a part of the pair's name
  for (const auto& e : std::filesystem::directory_iterator(shared / "templates")) {
    if (e.path().extension() != ".jinja") continue;
    const std::string stem = e.path().stem().string();
    auto source = base::read_file(e.path().string());
    if (!source) continue;
    chat::template_options options;
    options.file = e.path().filename().string();
    options.special_tokens = special_tokens(shared, stem);
    auto t = chat::chat_template::create(*source, options);
    if (!t) continue;
    for (const auto& [shape, body] : shape_bodies) {
      auto req = chat::request::from_json(*json::parse(body));
      if (!req) continue;
      auto p = chat::prepare(**t, *req);
      if (!p) continue;
      // With reasoning: inside the block (opened by the prompt, or by its start marker).
      const auto& rs = (*t)->analysis().reasoning;
      const bool reasoning = std::string_view(shape) == "reasoning";
      const std::string opener = reasoning && p->parse_prefix.empty() ? rs.start : "";
      std::string name = stem + " / " + shape;
      if (only != nullptr && name.find(only) == std::string::npos) continue;
      out.push_back({std::move(name), std::move(*p), opener + text});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

// One stream of the pair: the feeds' total CPU time and the first / last 64 feeds one by one.
void run_once(const pair_case& c, pair_result& best) {
  using clock = std::chrono::steady_clock;
  stream::session s(c.prepared);
  const std::size_t feeds = (c.output.size() + kChunk - 1) / kChunk;
  double first = 0, last = 0;
  const double c0 = thread_seconds();
  for (std::size_t i = 0; i < feeds; ++i) {
    const std::string_view chunk = std::string_view(c.output).substr(i * kChunk, kChunk);
    const bool timed = i < 64 || i + 64 >= feeds;
    const auto f0 = timed ? clock::now() : clock::time_point{};
    auto r = s.feed(chunk);
    if (timed) {
      const double ns = std::chrono::duration<double, std::nano>(clock::now() - f0).count();
      (i < 64 ? first : last) += ns;
    }
    benchmark::DoNotOptimize(r);
  }
  auto f = s.finish();
  benchmark::DoNotOptimize(f);
  const double total = thread_seconds() - c0;
  best.feed_ns = std::min(best.feed_ns, total * 1e9 / static_cast<double>(feeds));
  best.first_ns = std::min(best.first_ns, first / 64);
  best.last_ns = std::min(best.last_ns, last / 64);
  const double p0 = thread_seconds();
  auto parsed = stream::parse(c.prepared, c.output);
  benchmark::DoNotOptimize(parsed);
  best.parse_feed_ns =
      std::min(best.parse_feed_ns, (thread_seconds() - p0) * 1e9 / static_cast<double>(feeds));
}

void BM_session_corpus_sweep(benchmark::State& state) {
  const auto shared = shared_dir();
  if (!shared) {
    state.SkipWithError("../shared/templates not found (set CHATPEG_SHARED)");
    return;
  }
  const std::vector<pair_case> pairs = corpus_pairs(*shared);
  std::vector<pair_result> results(pairs.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < pairs.size(); ++i) run_once(pairs[i], results[i]);
  }
  double worst_feed = 0, worst_ratio = 0, parse_of_worst = 0;
  int over_budget = 0;
  std::vector<std::size_t> order(pairs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return results[a].feed_ns > results[b].feed_ns; });
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& r = results[i];
    if (r.feed_ns > worst_feed) {
      worst_feed = r.feed_ns;
      parse_of_worst = r.parse_feed_ns;
    }
    worst_ratio = std::max(worst_ratio, r.last_ns / r.first_ns);
    if (r.feed_ns > kFeedBudgetNs || r.last_ns > 2 * r.first_ns) ++over_budget;
  }
  std::fprintf(stderr, "%-60s %9s %9s %9s %9s\n", "slowest pairs (64 KB, 4-byte feeds)", "feed_ns",
               "first64", "last64", "parse/fd");
  for (std::size_t k = 0; k < std::min<std::size_t>(10, order.size()); ++k) {
    const auto& r = results[order[k]];
    std::fprintf(stderr, "%-60s %9.1f %9.1f %9.1f %9.2f\n", pairs[order[k]].name.c_str(), r.feed_ns,
                 r.first_ns, r.last_ns, r.parse_feed_ns);
  }
  state.counters["pairs"] = static_cast<double>(pairs.size());
  state.counters["over_budget"] = over_budget;
  state.counters["worst_feed_ns"] = worst_feed;
  state.counters["worst_last_x_first"] = worst_ratio;
  state.counters["parse_feed_ns"] = parse_of_worst;
}

}  // namespace

BENCHMARK(BM_session_corpus_sweep)->Unit(benchmark::kMillisecond)->Iterations(3);

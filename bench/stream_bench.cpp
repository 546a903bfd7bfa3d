// Streaming cost of peg::matcher::match_growing: a response fed in 4-byte chunks, matched
// leniently after every chunk and with `complete` at the end, against one match() of the
// finished text. Four shapes, each at 1/4/16/64 KB:
//   qwen3_json    <tool_call>\n{"name":"write","arguments":{"content":"…"}}\n</tool_call>
//                 (schema-typed arguments, the content a JSON string with escapes)
//   qwen3_coder   <tool_call>\n<function=write>\n<parameter=content>\n…\n</parameter>\n…
//   content       plain content, no call
//   reasoning     <think>\n…\n</think>\n\n then a short answer
// Counters (minimum over the benchmark's iterations, robust on a shared machine): stream_ms
// (all feeds, thread CPU time), parse_ms (one match of the finished text), stream_x_parse
// (their ratio), feeds, feed_ns (budget for BM_session_*: ≤ 250 ns per feed), first64_ns /
// last64_ns (average cost of the first and last 64 feeds) and last_x_first (budget ≤ 2: a feed
// does not get slower as the response grows).
// BM_session_* run the same outputs through stream::session (chat::prepare of a small
// Qwen3-like template with a `write` tool): matching plus folding and delta diffing.
// BM_session_general_only runs them on the general path alone (general_path_only): the gain
// of the shortcuts over it.
// Baseline: BM_rematch_* re-matches the whole prefix after every chunk, which is what the
// reference does (1.4 s Qwen3 JSON, 4.9–5.1 s Qwen3-Coder, 2.8 s content only at 64 KB). The
// corpus-wide sweep is bench/stream_corpus_bench.cpp.
// Measurements and their history: docs/perf.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chatpeg/base/file.h"
#include "chatpeg/base/result.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/json/json.h"
#include "chatpeg/peg/builder.h"
#include "chatpeg/peg/matcher.h"
#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"

namespace {

using namespace chatpeg;
using clock_type = std::chrono::steady_clock;

constexpr std::size_t kChunk = 4;

// Code-like text with '<' (the first byte of every marker), quotes, backslashes and
// multi-byte UTF-8, cut on a code point boundary.
std::string payload(std::size_t size) {
  const std::string lines[] = {
      "for (int i = 0; i < n; ++i) {\n",
      "  if (a[i] < b[i]) out += \"caf\xC3\xA9 \\\\ \xE2\x82\xAC\";\n",
      "  // The quick brown fox jumps over the lazy dog.\n",
      "}\n",
      "<div class=\"note\">x &lt; y</div>\n",
  };
  std::string out;
  for (std::size_t i = 0; out.size() < size; ++i) out += lines[i % 5];
  out.resize(size);
  while (!out.empty() && ((static_cast<unsigned char>(out.back()) & 0xC0) == 0x80 ||
                          static_cast<unsigned char>(out.back()) >= 0xC0)) {
    out.pop_back();
  }
  return out;
}

struct shape {
  peg::grammar grammar;
  std::string text;
};

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "stream_bench: %s\n", what);
  std::abort();
}

// content, then Qwen3 JSON tool calls with schema-typed arguments.
peg::grammar qwen3_json_grammar() {
  peg::builder b;
  auto schema = json::parse(
      R"({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["content"]})");
  auto args = grammar::compile_schema(b, *schema, {.name = "write-args"});
  if (!args) die("schema");
  auto call = b.tag(peg::tag::tool_open, b.literal("{"))
              << b.literal("\"name\"") << b.literal(":")
              << b.atomic(b.literal("\"") + b.tag(peg::tag::tool_name, b.literal("write")) +
                          b.literal("\""))
              << b.literal(",") << b.literal("\"arguments\"") << b.literal(":")
              << b.tag(peg::tag::tool_args, args->parser)
              << b.tag(peg::tag::tool_close, b.literal("}"));
  auto calls = b.zero_or_more(b.literal("<tool_call>") << b.tag(peg::tag::tool, call)
                                                       << b.literal("</tool_call>") << b.space());
  auto g = b.build(b.content(b.until("<tool_call>")) + calls + b.end());
  if (!g) die("qwen3 json grammar");
  return std::move(*g);
}

// content, then Qwen3-Coder tagged calls: raw string parameter values.
peg::grammar qwen3_coder_grammar() {
  peg::builder b;
  auto param = b.tag(peg::tag::tool_arg_open, b.literal("<parameter=")) +
               b.tag(peg::tag::tool_arg_name, b.chars("[a-zA-Z0-9_]", 1, peg::unbounded)) +
               b.literal(">\n") +
               b.tag(peg::tag::tool_arg_value,
                     b.tag(peg::tag::tool_arg_string_value, b.until("\n</parameter>"))) +
               b.tag(peg::tag::tool_arg_close, b.literal("\n</parameter>")) + b.literal("\n");
  auto call =
      b.tag(peg::tag::tool,
            b.tag(peg::tag::tool_open, b.literal("<tool_call>\n<function=")) +
                b.atomic(b.tag(peg::tag::tool_name, b.chars("[a-zA-Z0-9_]", 1, peg::unbounded)) +
                         b.literal(">\n")) +
                b.zero_or_more(param) +
                b.tag(peg::tag::tool_close, b.literal("</function>\n</tool_call>")));
  auto g = b.build(b.content(b.until("<tool_call>")) + b.zero_or_more(call + b.space()) + b.end());
  if (!g) die("qwen3 coder grammar");
  return std::move(*g);
}

// Optional reasoning, then content.
peg::grammar reasoning_grammar() {
  peg::builder b;
  auto think = b.literal("<think>") + b.reasoning(b.until("</think>")) + b.literal("</think>");
  auto g = b.build(b.optional(think) + b.space() + b.content(b.until("<tool_call>")) + b.end());
  if (!g) die("reasoning grammar");
  return std::move(*g);
}

shape make_shape(int kind, std::size_t size) {
  switch (kind) {
    case 0:
      return {qwen3_json_grammar(), "<tool_call>\n{\"name\":\"write\",\"arguments\":{\"content\":" +
                                        json::quote(payload(size)) + "}}\n</tool_call>"};
    case 1:
      return {qwen3_coder_grammar(), "<tool_call>\n<function=write>\n<parameter=content>\n" +
                                         payload(size) +
                                         "\n</parameter>\n</function>\n</tool_call>"};
    case 2:
      return {qwen3_json_grammar(), payload(size)};
    default:
      return {reasoning_grammar(),
              "<think>\n" + payload(size) + "\n</think>\n\nDone: the file is written."};
  }
}

double seconds(clock_type::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU time of this thread: unlike wall time it does not count preemption on a busy machine.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// One matcher per stream, as a session has.
void stream_growing(benchmark::State& state, int kind) {
  const shape s = make_shape(kind, static_cast<std::size_t>(state.range(0)) * 1024);
  const std::string& text = s.text;
  std::vector<double> feed_ns;
  // Minimum over iterations: the machine may be shared, and preemption only adds time.
  double stream_best = 1e9, parse_best = 1e9, first_best = 1e18, last_best = 1e18;
  for (auto _ : state) {
    peg::matcher m(s.grammar);
    feed_ns.clear();
    const double c0 = thread_seconds();
    for (std::size_t k = kChunk; k < text.size() + kChunk; k += kChunk) {
      const std::size_t n = std::min(k, text.size());
      const auto f0 = clock_type::now();
      auto r = m.match_growing(std::string_view(text.data(), n), peg::match_flags::lenient);
      feed_ns.push_back(seconds(clock_type::now() - f0) * 1e9);
      if (r.status == peg::match_status::fail) state.SkipWithError("feed failed");
      benchmark::DoNotOptimize(r.end);
    }
    auto fin = m.match_growing(text, peg::match_flags::complete);
    if (!fin.ok()) state.SkipWithError("finish failed");
    stream_best = std::min(stream_best, thread_seconds() - c0);
    state.PauseTiming();
    const std::size_t w = std::min<std::size_t>(64, feed_ns.size());
    double first = 0, last = 0;
    for (std::size_t i = 0; i < w; ++i) {
      first += feed_ns[i];
      last += feed_ns[feed_ns.size() - 1 - i];
    }
    first_best = std::min(first_best, first / static_cast<double>(w));
    last_best = std::min(last_best, last / static_cast<double>(w));
    peg::matcher one(s.grammar);
    for (int i = 0; i < 5; ++i) {
      const double p0 = thread_seconds();
      auto r = one.match(text, peg::match_flags::complete);
      parse_best = std::min(parse_best, thread_seconds() - p0);
      if (!r.ok()) state.SkipWithError("parse failed");
    }
    state.ResumeTiming();
  }
  const double stream_s = stream_best, first = first_best, last = last_best;
  state.counters["bytes"] = static_cast<double>(text.size());
  state.counters["feeds"] = static_cast<double>(feed_ns.size() + 1);
  state.counters["stream_ms"] = stream_s * 1e3;
  state.counters["parse_ms"] = parse_best * 1e3;
  state.counters["stream_x_parse"] = stream_s / parse_best;
  state.counters["feed_ns"] = stream_s * 1e9 / static_cast<double>(feed_ns.size() + 1);
  state.counters["first64_ns"] = first;
  state.counters["last64_ns"] = last;
  state.counters["last_x_first"] = last / first;
}

// The baseline: a fresh match of the whole prefix after every chunk.
void stream_rematch(benchmark::State& state, int kind) {
  const shape s = make_shape(kind, static_cast<std::size_t>(state.range(0)) * 1024);
  const std::string& text = s.text;
  double total = 0;
  std::size_t streams = 0;
  for (auto _ : state) {
    peg::matcher m(s.grammar);
    const auto t0 = clock_type::now();
    for (std::size_t k = kChunk; k < text.size() + kChunk; k += kChunk) {
      const std::size_t n = std::min(k, text.size());
      auto r = m.match(std::string_view(text.data(), n), peg::match_flags::lenient);
      benchmark::DoNotOptimize(r.end);
    }
    auto fin = m.match(text, peg::match_flags::complete);
    if (!fin.ok()) state.SkipWithError("finish failed");
    total += seconds(clock_type::now() - t0);
    ++streams;
  }
  state.counters["stream_ms"] = total / static_cast<double>(streams) * 1e3;
}

// The bundled example template (examples/chatml_tools.jinja): Qwen3-like, calls as
// <tool_call> JSON, reasoning in <think> blocks.
std::string example_template() {
  auto text = base::read_file(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
  if (!text) die("examples/chatml_tools.jinja");
  return *text;
}

const chat::prepared& session_request() {
  static const chat::prepared p = [] {
    auto tmpl = chat::chat_template::create(example_template());
    if (!tmpl) die("template");
    auto body = json::parse(R"({"messages":[{"role":"user","content":"Write the file."}],
      "tools":[{"type":"function","function":{"name":"write","parameters":{"type":"object",
      "properties":{"content":{"type":"string"}},"required":["content"]}}}]})");
    if (!body) die("request json");
    auto req = chat::request::from_json(*body);
    if (!req) die("request");
    auto prepared = chat::prepare(**tmpl, *req);
    if (!prepared) die(prepared.error().to_string().c_str());
    return std::move(*prepared);
  }();
  return p;
}

// Qwen3-Coder tagged calls have no bundled template: a prepared request around the grammar.
const chat::prepared& coder_request() {
  static const chat::prepared p = [] {
    chat::prepared out;
    out.parser = std::make_shared<const peg::grammar>(qwen3_coder_grammar());
    return out;
  }();
  return p;
}

// Which of the session's paths a run may take: every path, or the general path alone
// (session_options::general_path_only), which shows what the shortcuts on top of it gain.
enum class paths { all, general_only };

// The same outputs through stream::session: feed 4-byte chunks, then finish(). parse_ms is
// one stream::parse of the finished output (match + map): stream_x_parse = all feeds and
// finish() / parse_ms.
void stream_session(benchmark::State& state, int kind, paths taken = paths::all) {
  const chat::prepared& p = kind == 1 ? coder_request() : session_request();
  stream::session_options options;
  options.general_path_only = taken == paths::general_only;
  const std::string text = make_shape(kind, static_cast<std::size_t>(state.range(0)) * 1024).text;
  std::vector<double> feed_ns;
  double stream_best = 1e9, first_best = 1e18, last_best = 1e18, parse_best = 1e9;
  std::size_t deltas = 0;
  for (auto _ : state) {
    stream::session s(p, options);
    feed_ns.clear();
    deltas = 0;
    const double c0 = thread_seconds();
    // Only the first and last 64 feeds are timed one by one: a clock read costs about as much
    // as a fast feed on this machine (~70 ns), and stream_ms is the session's time.
    const std::size_t feeds = (text.size() + kChunk - 1) / kChunk;
    for (std::size_t k = 0, i = 0; k < text.size(); k += kChunk, ++i) {
      const bool timed = i < 64 || i + 64 >= feeds;
      const auto f0 = timed ? clock_type::now() : clock_type::time_point{};
      const std::string_view chunk = std::string_view(text).substr(k, kChunk);
      auto fed = s.feed(chunk);
      if (!fed) {
        state.SkipWithError(fed.error().to_string().c_str());
        return;
      }
      if (timed) feed_ns.push_back(seconds(clock_type::now() - f0) * 1e9);
      deltas += fed->size();
    }
    auto fin = s.finish();
    if (!fin) {
      state.SkipWithError(fin.error().to_string().c_str());
      return;
    }
    stream_best = std::min(stream_best, thread_seconds() - c0);
    const std::size_t w = std::min<std::size_t>(64, feed_ns.size());
    double first = 0, last = 0;
    for (std::size_t i = 0; i < w; ++i) {
      first += feed_ns[i];
      last += feed_ns[feed_ns.size() - 1 - i];
    }
    first_best = std::min(first_best, first / static_cast<double>(w));
    last_best = std::min(last_best, last / static_cast<double>(w));
    for (int i = 0; i < 3; ++i) {
      const double p0 = thread_seconds();
      auto one = stream::parse(p, text);
      parse_best = std::min(parse_best, thread_seconds() - p0);
      if (!one) state.SkipWithError(one.error().to_string().c_str());
    }
  }
  state.counters["deltas"] = static_cast<double>(deltas);
  state.counters["stream_ms"] = stream_best * 1e3;
  state.counters["parse_ms"] = parse_best * 1e3;
  state.counters["stream_x_parse"] = stream_best / parse_best;
  state.counters["feed_ns"] =
      stream_best * 1e9 / static_cast<double>((text.size() + kChunk - 1) / kChunk + 1);
  state.counters["first64_ns"] = first_best;
  state.counters["last64_ns"] = last_best;
  state.counters["last_x_first"] = last_best / first_best;
}

void BM_growing_qwen3_json(benchmark::State& s) {
  stream_growing(s, 0);
}
void BM_growing_qwen3_coder(benchmark::State& s) {
  stream_growing(s, 1);
}
void BM_growing_content(benchmark::State& s) {
  stream_growing(s, 2);
}
void BM_growing_reasoning(benchmark::State& s) {
  stream_growing(s, 3);
}
void BM_session_qwen3_json(benchmark::State& s) {
  stream_session(s, 0);
}
void BM_session_qwen3_coder(benchmark::State& s) {
  stream_session(s, 1);
}
void BM_session_content(benchmark::State& s) {
  stream_session(s, 2);
}
void BM_session_reasoning(benchmark::State& s) {
  stream_session(s, 3);
}
// The same four shapes on the general path alone.
void BM_session_general_only(benchmark::State& s) {
  stream_session(s, static_cast<int>(s.range(1)), paths::general_only);
}
void BM_rematch_qwen3_json(benchmark::State& s) {
  stream_rematch(s, 0);
}
void BM_rematch_qwen3_coder(benchmark::State& s) {
  stream_rematch(s, 1);
}
void BM_rematch_content(benchmark::State& s) {
  stream_rematch(s, 2);
}
void BM_rematch_reasoning(benchmark::State& s) {
  stream_rematch(s, 3);
}

#define STREAM_SIZES ->Arg(1)->Arg(4)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_growing_qwen3_json) STREAM_SIZES;
BENCHMARK(BM_growing_qwen3_coder) STREAM_SIZES;
BENCHMARK(BM_growing_content) STREAM_SIZES;
BENCHMARK(BM_growing_reasoning) STREAM_SIZES;
BENCHMARK(BM_session_qwen3_json) STREAM_SIZES;
BENCHMARK(BM_session_qwen3_coder) STREAM_SIZES;
BENCHMARK(BM_session_content) STREAM_SIZES;
BENCHMARK(BM_session_reasoning) STREAM_SIZES;
// 64 KB, shapes 0..3 (Qwen3 JSON, Qwen3-Coder, content, reasoning).
#define PATH_SHAPES \
  ->ArgsProduct({{64}, {0, 1, 2, 3}})->ArgNames({"kb", "shape"})->Unit(benchmark::kMillisecond)
BENCHMARK(BM_session_general_only) PATH_SHAPES;
#undef PATH_SHAPES
// Quadratic: 1 and 16 KB show the growth, 64 KB once for the headline number.
#define REMATCH_SIZES ->Arg(1)->Arg(16)->Arg(64)->Iterations(1)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_rematch_qwen3_json) REMATCH_SIZES;
BENCHMARK(BM_rematch_qwen3_coder) REMATCH_SIZES;
BENCHMARK(BM_rematch_content) REMATCH_SIZES;
BENCHMARK(BM_rematch_reasoning) REMATCH_SIZES;
#undef STREAM_SIZES
#undef REMATCH_SIZES

}  // namespace

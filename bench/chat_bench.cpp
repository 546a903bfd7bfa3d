// Chat-layer costs on real templates from ../shared/templates:
//   BM_analyze/<template>   chat_template::create: parse + capability probes + the whole
//                           differential analysis (or dedicated row) + the verify stage (one
//                           prepare, renders and matches of the template's own calls).
//                           Target ≤ 10 ms each.
//   BM_prepare/<template>   prepare() of a two-tool auto request: prompt renders, generation
//                           prompt, PEG parser and lazy GBNF.
//   BM_prepare_tools/<N>    prepare() (parser + GBNF) of an auto request offering N tools, each
//                           described, {"a": string (required), "b": integer}
//                           (tests/support/many_tools.h), on the bundled template
//                           (examples/chatml_tools.jinja). Budget: 2000 tools in < 100 ms.
//                           Baseline (the quadratic code, docs/perf.md 2026-12-06): 115 ms,
//                           2.34 s, 15.5 s for 250, 1000, 2000 tools; now 10-12, 43-46,
//                           89-95 ms (shared 2-core machine, CPU time).
//   BM_parse_64k/<format>   stream::parse (one shot, final parse) of a finished 64 KB tool call:
//                           Qwen3 JSON arguments and Qwen3-Coder tagged arguments.
// Baseline: the reference implementation takes 0.2–0.8 ms for the 64 KB one-shot parses (target:
// at least 2× faster); it has no separate analysis step to compare with (10 ms is the goal).
// Without ../shared (or CHATPEG_SHARED) every benchmark skips with a visible message.
// Measured 2026-11-29 (Release, 2 shared cores, CPU time): analysis 1.1–2.3 ms per template
// (session 4, with the verify stage: 2.7–4.3 ms);
// prepare 0.45–1.0 ms; 64 KB parse (session 3: JSON-string loop plans in the matcher, bulk
// JSON escaping): Qwen3 JSON 0.33–0.40 ms (was 0.78), Qwen3-Coder tagged 0.32–0.37 ms (was
// 0.42–0.58); callgrind per parse: JSON 3.7 M instructions, tagged 2.7 M.
// Session 5 (bulk runs: base::stop_scanner, 16 bytes per step with SSE2 else 8 with SWAR, finds
// the next byte to act on in JSON escaping, UTF-8 validation, the JSON-string loop plan and
// until's candidates; sanitize_utf8 validates once and copies; value_converter copies verbatim
// string runs, escapes included, in one append; outputs reserved once), same machine, CPU time
// over 3–4 runs: Qwen3 JSON 0.38–0.54 → 0.10–0.12 ms, Qwen3-Coder tagged 0.27–0.41 → 0.14–0.16
// ms; callgrind per stream::parse: JSON 3.67 M → 0.88 M instructions, tagged 2.74 M → 1.05 M
// (about 0.2 M of each is libc memcpy of the 64 KB copies: input, sanitized text, arguments).
// Paired run under heavier load (before = 295745a built alike, alternating, 3 runs each): JSON
// 0.35–0.57 → 0.15–0.18 ms, tagged 0.30–0.42 → 0.13–0.19 ms.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "chatpeg/base/file.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/parse.h"
#include "shared_corpus.h"
#include "support/many_tools.h"

namespace {

using namespace chatpeg;

constexpr std::size_t kPayload = 64 * 1024;

using bench::shared_dir;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Source and options (bos/eos from special_tokens.json) of a corpus template.
struct corpus_template {
  std::string source;
  chat::template_options options;
};

std::optional<corpus_template> load(const std::string& stem) {
  auto dir = shared_dir();
  if (!dir) return std::nullopt;
  corpus_template t;
  t.source = read_file(*dir / "templates" / (stem + ".jinja"));
  if (t.source.empty()) return std::nullopt;
  t.options.file = stem + ".jinja";
  auto special = json::parse(read_file(*dir / "conformance/render/special_tokens.json"));
  if (special && special->contains(stem)) t.options.special_tokens = (*special)[stem]["tokens"];
  return t;
}

// The analysed template for a benchmark, or nullptr after reporting why it is skipped.
std::shared_ptr<const chat::chat_template> created_template(benchmark::State& state,
                                                            const std::string& stem) {
  auto t = load(stem);
  if (!t) {
    state.SkipWithError("../shared/templates not found (set CHATPEG_SHARED)");
    return nullptr;
  }
  auto tmpl = chat::chat_template::create(t->source, t->options);
  if (!tmpl) {
    state.SkipWithError(tmpl.error().to_string().c_str());
    return nullptr;
  }
  return *tmpl;
}

const char* const kTemplates[] = {
    "Qwen-Qwen3-0.6B",
    "Qwen3-Coder",
    "openai-gpt-oss-120b",
    "meta-llama-Llama-3.1-8B-Instruct",
    "Mistral-Small-3.2-24B-Instruct-2506",
};

chat::request two_tool_request() {
  auto body = json::parse(R"({"messages":[{"role":"user","content":"Weather in Paris?"}],
    "tools":[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object",
      "properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}},
     {"type":"function","function":{"name":"write","description":"Write.","parameters":{"type":"object",
      "properties":{"content":{"type":"string"}},"required":["content"]}}}],
    "tool_choice":"auto"})");
  auto r = chat::request::from_json(*body);
  if (!r) std::abort();
  return *r;
}

void BM_analyze(benchmark::State& state, const char* stem) {
  auto t = load(stem);
  if (!t) {
    state.SkipWithError("../shared/templates not found (set CHATPEG_SHARED)");
    return;
  }
  for (auto _ : state) {
    auto created = chat::chat_template::create(t->source, t->options);
    if (!created) {
      state.SkipWithError(created.error().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(created);
  }
}

void BM_prepare(benchmark::State& state, const char* stem) {
  auto tmpl = created_template(state, stem);
  if (!tmpl) return;
  const chat::request req = two_tool_request();
  for (auto _ : state) {
    auto p = chat::prepare(*tmpl, req);
    if (!p) {
      state.SkipWithError(p.error().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(p);
  }
}

// An auto request offering `count` tools with two typed arguments each.
chat::request many_tools_request(std::size_t count) {
  auto r = chat::request::from_json(testing::many_tools_body(count));
  if (!r) std::abort();
  return *r;
}

void BM_prepare_tools(benchmark::State& state) {
  auto source = base::read_file(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
  if (!source) {
    state.SkipWithError(source.error().to_string().c_str());
    return;
  }
  auto tmpl = chat::chat_template::create(*source);
  if (!tmpl) {
    state.SkipWithError(tmpl.error().to_string().c_str());
    return;
  }
  const chat::request req = many_tools_request(static_cast<std::size_t>(state.range(0)));
  std::size_t gbnf_bytes = 0;
  for (auto _ : state) {
    auto p = chat::prepare(**tmpl, req);
    if (!p) {
      state.SkipWithError(p.error().to_string().c_str());
      return;
    }
    gbnf_bytes = p->gbnf.size();
    benchmark::DoNotOptimize(p);
  }
  state.counters["gbnf_bytes"] = static_cast<double>(gbnf_bytes);
}

// 64 KB of prose with escapes-relevant bytes (quotes, backslashes, newlines, UTF-8) and '<'.
std::string payload() {
  const std::string line =
      "The \"quick\" brown fox \\ jumps over the lazy dog < 3; caf\xC3\xA9 \xE2\x82\xAC 42.\n";
  std::string out;
  while (out.size() + line.size() <= kPayload) out += line;
  return out;
}

void BM_parse_64k(benchmark::State& state, const char* stem, bool tagged) {
  auto tmpl = created_template(state, stem);
  if (!tmpl) return;
  auto prepared = chat::prepare(*tmpl, two_tool_request());
  if (!prepared) {
    state.SkipWithError(prepared.error().to_string().c_str());
    return;
  }
  const std::string text = payload();
  const std::string output =
      tagged
          ? "<tool_call>\n<function=write>\n<parameter=content>\n" + text +
                "\n</parameter>\n</function>\n</tool_call>"
          : "<tool_call>\n{\"name\": \"write\", \"arguments\": {\"content\": " + json::quote(text) +
                "}}\n</tool_call>";
  {
    auto check = stream::parse(*prepared, output);
    if (!check || check->tool_calls.size() != 1) {
      state.SkipWithError(check ? "the output did not parse to one call"
                                : check.error().to_string().c_str());
      return;
    }
  }
  for (auto _ : state) {
    auto m = stream::parse(*prepared, output);
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(output.size()));
}

void register_all() {
  for (const char* stem : kTemplates) {
    benchmark::RegisterBenchmark((std::string("BM_analyze/") + stem).c_str(), BM_analyze, stem)
        ->Unit(benchmark::kMillisecond);
  }
  for (const char* stem : kTemplates) {
    benchmark::RegisterBenchmark((std::string("BM_prepare/") + stem).c_str(), BM_prepare, stem)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("BM_prepare_tools", BM_prepare_tools)
      ->Arg(250)
      ->Arg(1000)
      ->Arg(2000)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_parse_64k/qwen3_json", BM_parse_64k, "Qwen-Qwen3-0.6B", false)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_parse_64k/qwen3_coder_tagged", BM_parse_64k, "Qwen3-Coder", true)
      ->Unit(benchmark::kMicrosecond);
}

const int registered = (register_all(), 0);

}  // namespace

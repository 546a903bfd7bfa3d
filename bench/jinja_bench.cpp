// Jinja engine throughput: compile once, render many, on real chat templates from
// ../shared/templates with the conformance scenarios (one turn and the agentic loop).
// Baseline (issue 3): Python Jinja2 on this machine, µs per render — Qwen3-0.6B 46 / 147,
// Llama-3.1-8B 16 / 109, gpt-oss-120b 31 / 298, gemma-4-31B 69 / 518. Target: < 1/4 of that.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>

#include "chatpeg/jinja/jinja.h"

namespace {

namespace fs = std::filesystem;

fs::path shared_dir() {
  if (const char* env = std::getenv("CHATPEG_SHARED"); env && *env) return env;
  return fs::path(__FILE__).parent_path() / ".." / ".." / "shared";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// `python_us` is Python Jinja2's time for the same row, printed next to ours as a counter.
void render_bench(benchmark::State& state, const char* stem, const char* scenario,
                  double python_us) {
  state.counters["python_us"] = python_us;
  using namespace chatpeg;
  fs::path root = shared_dir();
  auto prog = jinja::parse_template(slurp(root / "templates" / (std::string(stem) + ".jinja")));
  auto scen = json::parse(
      slurp(root / "conformance" / "render" / "scenarios" / (std::string(scenario) + ".json")));
  auto tokens = json::parse(slurp(root / "conformance" / "render" / "special_tokens.json"));
  if (!prog || !scen || !tokens) {
    state.SkipWithError("shared templates/scenarios not found (set CHATPEG_SHARED)");
    return;
  }
  json::value special = tokens->contains(stem) ? (*tokens)[stem]["tokens"] : json::value::object();
  json::value ctx = jinja::make_chat_context(*scen, special);
  auto clock = jinja::fixed_clock("2025-03-14T09:26:53");
  jinja::render_options opts{.now = *clock};
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto out = jinja::render(**prog, ctx, opts);
    if (!out) {
      state.SkipWithError(out.error().to_string().c_str());
      return;
    }
    bytes += out->size();
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

BENCHMARK_CAPTURE(render_bench, qwen3_one_turn, "Qwen-Qwen3-0.6B", "01_system_user", 46.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(render_bench, qwen3_agent_loop, "Qwen-Qwen3-0.6B", "14_agentic_full", 147.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(render_bench, llama31_one_turn, "meta-llama-Llama-3.1-8B-Instruct",
                  "01_system_user", 16.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(render_bench, llama31_agent_loop, "meta-llama-Llama-3.1-8B-Instruct",
                  "14_agentic_full", 109.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(render_bench, gpt_oss_one_turn, "openai-gpt-oss-120b", "01_system_user", 31.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(render_bench, gpt_oss_agent_loop, "openai-gpt-oss-120b", "14_agentic_full", 298.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(render_bench, gemma4_one_turn, "google-gemma-4-31B-it", "01_system_user", 69.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(render_bench, gemma4_agent_loop, "google-gemma-4-31B-it", "14_agentic_full",
                  518.0)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

// Response templates against chatpeg's own parser on the same 64 KB outputs of the bundled
// ChatML template (examples/chatml_tools.jinja): one-shot (response::parse vs stream::parse)
// and streamed in 4-byte chunks (response::parser and response::delta_stream vs
// stream::session). Shapes: plain content, reasoning then content, one call with a 64 KB
// string argument. Baseline: chatpeg's own parser, BM_own_* (its numbers are in docs/perf.md).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "chatpeg/base/file.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/response/response.h"
#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"

namespace {

using namespace chatpeg;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "response_bench: %s\n", what.c_str());
  std::abort();
}

const char* kTemplate = R"({"defaults": {"role": "assistant"},
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "reasoning_content": {"open": "<think>", "close": "</think>"},
    "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": true,
                   "content": "json", "transform": {"type": "function", "function": "{content}"}},
    "content": {"close": "<|im_end|>"}}})";

const response::template_ptr& response_template() {
  static const response::template_ptr t = [] {
    auto r = response::response_template::from_text(kTemplate);
    if (!r) die(r.error().to_string());
    return *r;
  }();
  return t;
}

const chat::prepared& own_request() {
  static const chat::prepared p = [] {
    auto text = base::read_file(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
    if (!text) die("examples/chatml_tools.jinja");
    auto tmpl = chat::chat_template::create(*text);
    if (!tmpl) die(tmpl.error().to_string());
    auto body = json::parse(R"({"messages":[{"role":"user","content":"Write the file."}],
      "tools":[{"type":"function","function":{"name":"write","parameters":{"type":"object",
      "properties":{"content":{"type":"string"}},"required":["content"]}}}]})");
    auto req = chat::request::from_json(*body);
    if (!req) die(req.error().to_string());
    auto prepared = chat::prepare(**tmpl, *req);
    if (!prepared) die(prepared.error().to_string());
    return std::move(*prepared);
  }();
  return p;
}

std::string filler(std::size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += "The quick brown fox jumps over the lazy dog, again and again. ";
  s.resize(bytes);
  return s;
}

// 0: content, 1: reasoning then content, 2: one call with a large string argument.
const std::string& output(int shape) {
  static const std::string outputs[] = {
      filler(64 * 1024),
      "<think>\n" + filler(48 * 1024) + "\n</think>\n\n" + filler(16 * 1024),
      "<tool_call>\n{\"name\": \"write\", \"arguments\": {\"content\": \"" + filler(64 * 1024) +
          "\"}}\n</tool_call>",
  };
  return outputs[shape];
}

void BM_response_one_shot(benchmark::State& state) {
  const std::string& out = output(static_cast<int>(state.range(0)));
  response::parse_options o;
  o.prefix = own_request().prompt;
  for (auto _ : state) {
    auto r = response::parse(*response_template(), out, o);
    if (!r) die(r.error().to_string());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_own_one_shot(benchmark::State& state) {
  const std::string& out = output(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto r = stream::parse(own_request(), out);
    if (!r) die(r.error().to_string());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_response_stream_events(benchmark::State& state) {
  const std::string& out = output(static_cast<int>(state.range(0)));
  response::parse_options o;
  o.prefix = own_request().prompt;
  for (auto _ : state) {
    response::parser p(response_template(), o);
    for (std::size_t i = 0; i < out.size(); i += 4) {
      auto e = p.feed(std::string_view(out).substr(i, 4));
      if (!e) die(e.error().to_string());
      benchmark::DoNotOptimize(e);
    }
    auto r = p.finalize();
    if (!r) die(r.error().to_string());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_response_stream_deltas(benchmark::State& state) {
  const std::string& out = output(static_cast<int>(state.range(0)));
  response::parse_options o;
  o.prefix = own_request().prompt;
  for (auto _ : state) {
    response::delta_stream s(response_template(), o);
    for (std::size_t i = 0; i < out.size(); i += 4) {
      auto d = s.feed(std::string_view(out).substr(i, 4));
      if (!d) die(d.error().to_string());
      benchmark::DoNotOptimize(d);
    }
    auto r = s.finish();
    if (!r) die(r.error().to_string());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void BM_own_stream(benchmark::State& state) {
  const std::string& out = output(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    stream::session s(own_request());
    for (std::size_t i = 0; i < out.size(); i += 4) {
      auto d = s.feed(std::string_view(out).substr(i, 4));
      if (!d) die(d.error().to_string());
      benchmark::DoNotOptimize(d);
    }
    auto r = s.finish();
    if (!r) die(r.error().to_string());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

#define SHAPES ->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_response_one_shot) SHAPES;
BENCHMARK(BM_own_one_shot) SHAPES;
BENCHMARK(BM_response_stream_events) SHAPES;
BENCHMARK(BM_response_stream_deltas) SHAPES;
BENCHMARK(BM_own_stream) SHAPES;

}  // namespace

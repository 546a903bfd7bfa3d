// Public API of the Jinja engine: parse a Hugging Face chat template once into an immutable
// program, then render it many times (concurrently if wished) against JSON contexts, with
// Python Jinja2 semantics as transformers configures it (trim_blocks, lstrip_blocks, loop
// controls, sandboxed, tojson/raise_exception/strftime_now) and hard resource limits.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/json/json.h"

namespace chatpeg::jinja {

struct parse_options {
  std::string file;                         // used in error locations
  std::size_t max_source_bytes = 4u << 20;  // larger sources are errc::limit_exceeded
  std::size_t max_nesting = 200;            // expression/statement nesting while parsing
  // Height of one expression's syntax tree, counting left-leaning chains (`a ~ b ~ c ...`,
  // `x.a.b.c`, `v|f|g`) that the parser builds without recursing: bounds the recursion of
  // evaluating and destroying it.
  std::size_t max_expression_height = 400;
};

// A parsed template. Immutable and safe to render from several threads at once.
class program;

base::result<std::shared_ptr<const program>> parse_template(std::string_view source,
                                                            const parse_options& options = {});

// Each limit stops rendering with errc::limit_exceeded and its own message ("recursion depth
// limit", "loop iteration limit", "output size limit", "render time limit", "memory limit";
// range() beyond max_range raises Jinja's own "Range too big").
// Memory: a render's heap stays below max_total_bytes (what its live values hold) plus about
// 3 x max_output_bytes (the output buffer and the value being built, each checked against
// max_output_bytes before it is allocated).
struct render_limits {
  std::size_t max_depth = 256;                    // macro calls / recursive loops / nesting
  std::uint64_t max_loop_iterations = 1'000'000;  // summed over all loops of one render
  // Rendered text, any captured block and any one value built (a list slot counts 32 bytes).
  std::size_t max_output_bytes = 16u << 20;
  std::chrono::milliseconds max_time{2000};  // wall time of one render
  std::size_t max_range = 100'000;           // range() length (Jinja's sandbox bound)
  // Bytes of the strings, list slots and dict entries a render's values hold at once.
  std::uint64_t max_total_bytes = 256u << 20;
};

// What one render used, for callers that watch their bounds (filled on success and failure).
struct render_stats {
  std::uint64_t peak_bytes = 0;       // most bytes held by live values, against max_total_bytes
  std::uint64_t bytes_allocated = 0;  // cumulative
  std::uint64_t loop_iterations = 0;  // against max_loop_iterations
  std::size_t peak_depth = 0;         // against max_depth
  std::size_t output_bytes = 0;       // against max_output_bytes
};

struct render_options {
  render_limits limits;
  // Clock used by strftime_now(): returns the local broken-down time. Empty: the system
  // clock (localtime).
  std::function<std::tm()> now;
  std::string file;  // used in error locations
  // Compatibility environment, off by default (then the engine is transformers'
  // ImmutableSandboxedEnvironment exactly). On: a mutable sandbox (list append/extend/
  // insert/pop/remove/clear/reverse) and tojson serializing generators as lists: what the
  // round-trip corpus renders with when the transformers-configured render raises (e.g.
  // `tools | map(attribute='function') | tojson`, `ids.append(x)`).
  bool compat = false;
  render_stats* stats = nullptr;  // optional: filled when render() returns
};

// Renders with the given variables (a JSON object; key order is kept, as Python dicts do).
// Template errors (raise_exception, type errors, undefined calls, ...) are
// errc::template_error; raise_exception(msg) yields exactly msg as the message.
base::result<std::string> render(const program& prog, const json::value& context,
                                 const render_options& options = {});

// One variable of a render context given by reference: the name and the value must outlive
// render().
struct context_entry {
  std::string_view name;
  const json::value* value = nullptr;
};

// The same with the context as a list of variables (names unique), read where they are: no
// copy of the JSON (a request's tools can be large).
base::result<std::string> render(const program& prog, std::span<const context_entry> context,
                                 const render_options& options = {});

// Convenience: the variables transformers passes to a chat template for a request-like
// object: special tokens merged under the context, `tools`/`documents` defaulting to None and
// add_generation_prompt to false.
json::value make_chat_context(const json::value& request, const json::value& special_tokens);

// make_chat_context as references into request and special_tokens (the defaults are static
// values), in the same order.
std::vector<context_entry> chat_context_entries(const json::value& request,
                                                const json::value& special_tokens);

// Parses ISO 8601 "YYYY-MM-DDTHH:MM:SS" into a clock for render_options::now.
base::result<std::function<std::tm()>> fixed_clock(std::string_view iso8601);

}  // namespace chatpeg::jinja

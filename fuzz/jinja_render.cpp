// Fuzz target jinja_render: a template × a JSON context. The input is template text, a NUL
// byte, then the context as JSON (an object; anything else, or no NUL, renders against a
// small chat context: messages with reasoning and a tool call, tools, special tokens).
// Checks: never throws or crashes; the render limits (depth, loop iterations, output bytes,
// time, range) stop hostile templates with an error; a successful render is within the
// output limit; errors are typed (never internal_error) and carry a message. A render the
// strict sandbox refuses is retried in the compat environment, as chat_template does.
#include <chrono>
#include <cstdint>

#include "chatpeg/jinja/jinja.h"
#include "chatpeg/json/json.h"
#include "fuzz_util.h"

namespace {

const chatpeg::json::value& default_context() {
  static const chatpeg::json::value ctx = [] {
    auto request = chatpeg::json::value::parse(R"({
      "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "reasoning_content": "Call the tool.", "content": "",
         "tool_calls": [{"id": "call_1", "type": "function", "function": {
           "name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
        {"role": "user", "content": "Thanks \u00e9\u4e16"}
      ],
      "tools": [{"type": "function", "function": {"name": "get_weather",
        "description": "Weather", "parameters": {"type": "object",
        "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
      "add_generation_prompt": true,
      "enable_thinking": true
    })");
    auto special = chatpeg::json::value::parse(R"({"bos_token": "<s>", "eos_token": "</s>"})");
    return chatpeg::jinja::make_chat_context(request, special);
  }();
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chatpeg;
  const auto [source, context_text] = fuzz::split_nul(fuzz::as_view(data, size));
  FUZZ_NO_THROW_BEGIN
  auto prog = jinja::parse_template(source, {.file = "fuzz.jinja"});
  if (!prog) return 0;
  json::value context = default_context();
  if (!context_text.empty()) {
    auto parsed = json::parse(context_text, {.max_depth = 64});
    if (parsed && parsed->is_object()) context = std::move(*parsed);
  }
  jinja::render_options options;
  options.limits = {.max_depth = 64,
                    .max_loop_iterations = 100'000,
                    .max_output_bytes = 1u << 20,
                    .max_time = std::chrono::milliseconds(500),
                    .max_range = 10'000};
  options.now = [] {
    std::tm t{};
    t.tm_year = 126;
    t.tm_mday = 1;
    return t;
  };
  for (const bool compat : {false, true}) {
    options.compat = compat;
    auto out = jinja::render(**prog, context, options);
    if (out) {
      FUZZ_CHECK(out->size() <= options.limits.max_output_bytes,
                 "render output of %zu bytes exceeds the output limit", out->size());
      break;
    }
    FUZZ_CHECK(!out.error().message.empty(), "render error without a message");
    FUZZ_CHECK(out.error().code != base::errc::internal_error, "internal error: %s",
               out.error().message.c_str());
  }
  FUZZ_NO_THROW_END
  return 0;
}

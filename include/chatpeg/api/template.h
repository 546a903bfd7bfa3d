// The C++ API a server needs: a chat template loaded and analysed once, then per request
// prepare() (prompt, grammar, triggers, stops), parse() of a whole output and stream() for a
// response arriving in pieces. Requests are OpenAI /v1/chat/completions bodies
// (nlohmann::ordered_json) with chatpeg's extras (reasoning_format, chat_template_kwargs,
// continue_final_message). Every call throws chatpeg::api::error on bad input.
//
// Threads: a chat_template is immutable; copies share it and any number of threads may call
// its const members at once. A response_stream belongs to one thread at a time.
//
// Example:
//
//   #include <chatpeg/chatpeg.h>
//   using chatpeg::api::json;
//
//   // Once per model: load and analyse the template.
//   const auto tmpl = chatpeg::api::chat_template::from_string(
//       "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
//       "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}");
//   const json request = json::parse(R"({"messages": [{"role": "user", "content": "Hi"}]})");
//
//   // Per request: what the inference server runs (prompt, grammar, triggers, stops) ...
//   chatpeg::api::prepared_request p = tmpl.prepare(request);
//   // p.prompt == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
//
//   // ... then the model's output read back whole ...
//   json message = tmpl.parse("Hello!", request);  // {"role":"assistant","content":"Hello!"}
//
//   // ... or as it arrives: the deltas each piece completes, then the end.
//   chatpeg::api::response_stream s = tmpl.stream(request);
//   json d1 = s.feed("Hel");  // [{"content":"Hel"}]
//   json d2 = s.feed("lo!");  // [{"content":"lo!"}]
//   chatpeg::api::stream_result done = s.finish();  // finish_reason "stop", message as above
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "chatpeg/api/error.h"
#include "chatpeg/api/export.h"

namespace chatpeg::api {

using json = nlohmann::ordered_json;

struct load_options {
  std::string name;  // variant of a tokenizer_config.json / GGUF file; empty = "default"
  std::optional<std::string> bos_token;  // overrides the file's special tokens
  std::optional<std::string> eos_token;
};

// A grammar trigger: once the model writes it, the lazy grammar starts constraining.
struct trigger {
  std::string type;  // "word", "pattern", "pattern_full" (regex over the whole output), "token"
  std::string value;
};

// What an inference server needs to run one request.
struct prepared_request {
  std::string prompt;             // the rendered prompt, ending with the generation prompt
  std::string generation_prompt;  // the assistant header the model continues from
  std::string grammar;            // GBNF; empty when decoding needs no constraint
  bool grammar_lazy = false;      // constrain only from the first trigger on
  std::vector<trigger> triggers;
  std::vector<std::string> preserved_tokens;  // special tokens the tokenizer must keep whole
  std::vector<std::string> stops;             // stop strings

  // {"prompt","generation_prompt","grammar","grammar_lazy","grammar_triggers":[{"type",
  // "value"}],"preserved_tokens","stops"}
  CHATPEG_API json to_json() const;
};

struct stream_options {
  // Marker text → its special token id, for feed() calls that pass token ids: a marker counts
  // only when its own token produced it, not when ordinary tokens spell the same bytes.
  std::vector<std::pair<std::string, std::int32_t>> special_tokens;
};

struct stream_result {
  json deltas = json::array();  // the deltas still held back at the end
  json message;                 // the final assistant message (as parse() returns it)
  std::string finish_reason;    // "stop", "tool_calls" or "length"
};

// One streamed response. Deltas are OpenAI choices[0].delta objects: content and
// reasoning_content pieces, and per tool call a header {index, id, type, function:{name,
// arguments:""}} then argument fragments. Concatenated, they are exactly the final message.
class CHATPEG_API response_stream {
 public:
  response_stream(response_stream&&) noexcept;
  response_stream& operator=(response_stream&&) noexcept;
  ~response_stream();

  // Appends the next piece of model output (it may cut a marker or a UTF-8 sequence anywhere)
  // and returns the deltas it completes, as a JSON array. token_ids, when given, are the
  // token ids of the piece: one id (the whole piece is one token) or one per byte with -1 where
  // a token continues. Throws error (no_match, with the output offset) when the output leaves
  // the template's format; what was sent stays sent.
  json feed(std::string_view text, std::span<const std::int32_t> token_ids = {});
  // The output is complete. hit_token_limit: the model stopped at max_tokens (a call cut
  // short is kept with finish_reason "length" instead of being an error).
  stream_result finish(bool hit_token_limit = false);
  // The message as parsed so far: what the deltas returned so far add up to.
  json current() const;
  std::size_t received() const;  // bytes of output fed so far

  struct impl;  // opaque: the reader behind the stream

 private:
  friend class chat_template;
  friend class response_template;
  explicit response_stream(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

class response_template;  // chatpeg/api/response_template.h

class CHATPEG_API chat_template {
 public:
  // A .jinja file, a tokenizer_config.json (chat_template string or named list) or a GGUF
  // model file (metadata only is read), told apart by content and extension.
  static chat_template from_file(const std::string& path, const load_options& options = {});
  // Template source text.
  static chat_template from_string(std::string source, const load_options& options = {});
  // A parsed tokenizer_config.json.
  static chat_template from_tokenizer_config(const json& config, const load_options& options = {});
  // The bytes of a GGUF file (at least its metadata header).
  static chat_template from_gguf(std::string_view bytes, const load_options& options = {});

  // The analysis (`chatpeg analyze --json`): capabilities, reasoning and tool-call format.
  json analysis() const;
  // The prompt for a request (with the generation prompt unless add_generation_prompt=false).
  std::string render(const json& request) const;
  prepared_request prepare(const json& request) const;
  // A whole model output → the OpenAI assistant message {"role","content",
  // "reasoning_content","tool_calls"} (calls without a model id get "call_…" ids).
  json parse(std::string_view output, const json& request) const;
  // A stream for one response to the request.
  response_stream stream(const json& request, const stream_options& options = {}) const;

  // A Hugging Face response template that reads this template's output as the analysis sees
  // it (`chatpeg analyze --response-template`). Throws unsupported, with the reason, for a
  // format the v1 format cannot express (Python-literal calls, channels).
  json write_response_template() const;
  // The response template the file ships beside the chat template (tokenizer_config.json's
  // "response_template", GGUF's tokenizer.response_template); nullopt when it has none.
  // Throws when the shipped one does not validate.
  std::optional<response_template> shipped_response_template() const;

 private:
  struct impl;
  explicit chat_template(std::shared_ptr<const impl> p);
  std::shared_ptr<const impl> impl_;
};

}  // namespace chatpeg::api

// Hugging Face response templates (the `response_template` of tokenizer_config.json or GGUF
// metadata): a declarative description of a model's output that reads it back into fields,
// as transformers' parse_response does. Loaded and validated once, then parse() a whole
// output, as the template's own dict or as an OpenAI assistant message, or stream() one.
// chat_template::write_response_template() writes one from chatpeg's analysis of any chat
// template.
//
// Threads: a response_template is immutable; copies share it and any number of threads may
// call its const members at once.
//
// Example:
//
//   using chatpeg::api::json;
//   const auto rt = chatpeg::api::response_template::from_json(json::parse(R"({
//       "version": 1, "start_anchor": "<|im_start|>assistant\n",
//       "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"},
//                  "content": {}}})"));
//   json fields = rt.parse("<think>Sunny?</think>It is sunny.");
//   // {"reasoning_content":"Sunny?","content":"It is sunny."}
//   json message = rt.parse_message("<think>Sunny?</think>It is sunny.");
//   // {"role":"assistant","content":"It is sunny.","reasoning_content":"Sunny?"}
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chatpeg/api/error.h"
#include "chatpeg/api/export.h"
#include "chatpeg/api/template.h"

namespace chatpeg::api {

struct response_parse_options {
  // The rendered prompt (chat_template::render or prepare().prompt): it is cut after the last
  // start-anchor match, and its rest is read before the output (a prompt that opens a
  // reasoning block puts the output's start in it). Empty: the output is read alone.
  std::string prefix;
  // The request's OpenAI tools: string argument values of tool calls are cast to the type
  // their schema declares ("3" → 3 for an integer parameter).
  json tools = json::array();
};

class CHATPEG_API response_template {
 public:
  // A JSON file holding the template object or a tokenizer_config.json with one under
  // "response_template", or a GGUF model file (tokenizer.response_template). A file without
  // one is error invalid_argument; one with only the older "response_schema" is unsupported;
  // a template that breaks a rule of the format is invalid_argument / syntax_error with the
  // JSON path (at $.fields.content.open_pattern).
  static response_template from_file(const std::string& path);
  // A parsed template object, or a tokenizer_config.json object holding one.
  static response_template from_json(const json& template_or_config);

  // The template object as loaded.
  const json& source() const;
  // A whole output → the dict transformers' parse_response returns: the template's own keys,
  // defaults kept, empty values dropped, tool-call arguments as objects. Throws no_match (the
  // field's JSON path and the output offset) when a region's body does not parse.
  json parse(std::string_view output, const response_parse_options& options = {}) const;
  // The same as an OpenAI assistant message {"role","content","reasoning_content",
  // "tool_calls"} (thinking / reasoning → reasoning_content; calls get "call_…" ids).
  json parse_message(std::string_view output, const response_parse_options& options = {}) const;
  // A stream of OpenAI deltas with response_stream's contract. Calls are parsed when their
  // region closes, so a call's arguments arrive in one fragment at its close. Token ids given
  // to feed() are checked for their layout and otherwise unused: a response template reads text.
  response_stream stream(const response_parse_options& options = {}) const;

 private:
  friend class chat_template;
  struct impl;
  explicit response_template(std::shared_ptr<const impl> p);
  std::shared_ptr<const impl> impl_;
};

}  // namespace chatpeg::api

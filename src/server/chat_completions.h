// Translation between the OpenAI chat API and chatpeg: request body → chat::request +
// sampling parameters, prepared request → backend parameters, and the OpenAI response
// shapes (completion, chunk, error object). Pure functions, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "chatpeg/base/error.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/json/json.h"
#include "chatpeg/server/backend.h"
#include "chatpeg/stream/session.h"

namespace chatpeg::server::detail {

struct openai_error {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // JSON path of the offending field, empty = null
  std::string code;   // empty = null

  // {"error":{"message","type","param","code"}}
  json::value to_json() const;
};

struct chat_call {
  chat::request request;
  completion_params params;  // prompt and grammar filled by apply_prepared
  bool stream = false;
  bool include_usage = false;
  std::vector<std::string> stop_sequences;  // the request's own stop strings
};

// Parses and validates a /v1/chat/completions (or /v1/chat/prepare) body.
std::optional<openai_error> parse_chat_body(std::string_view body, chat_call& out);
// The same for a body already parsed (another API's body translated to this one).
std::optional<openai_error> parse_chat_json(const json::value& body, chat_call& out);

// A chat::prepare error as a 400 (template errors carry the template's message).
openai_error error_from(const base::error& e);
// A backend failure as a 502.
openai_error error_from(const backend_error& e);

// Fills prompt, grammar, lazy flag, triggers, preserved tokens and stops (the request's stop
// strings after the template's).
void apply_prepared(const chat::prepared& p, completion_params& params);

// The /v1/chat/prepare answer: what would be sent to the backend and how.
json::value prepare_report(const chat::prepared& p, const completion_params& params,
                           const backend_options& backend);

struct usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  json::value to_json() const;
};

struct response_meta {
  std::string id;  // "chatcmpl-..."
  std::int64_t created = 0;
  std::string model;
};
response_meta new_response_meta(std::string model);

json::value completion_json(const response_meta& meta, const chat::message& message,
                            stream::finish_reason reason, const usage& u);
// One chunk: choices[0].delta = delta, finish_reason = finish (null when absent).
json::value chunk_json(const response_meta& meta, json::value delta,
                       std::optional<stream::finish_reason> finish);
// The usage chunk of stream_options.include_usage (choices: []).
json::value usage_chunk_json(const response_meta& meta, const usage& u);

}  // namespace chatpeg::server::detail

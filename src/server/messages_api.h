// Anthropic's Messages API on the gateway's one pipeline: a translator in (a /v1/messages body
// → the Chat Completions body the pipeline reads, with Anthropic's JSON paths in its errors)
// and serializers out (the message object, the stream's events, the error shape). Pure
// functions and a per-response event writer, no I/O.
#pragma once

#include <optional>
#include <string>

#include "chat_completions.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/json/json.h"
#include "chatpeg/server/backend.h"
#include "chatpeg/stream/session.h"
#include "wire_api.h"

namespace chatpeg::server::detail {

// The Chat Completions body for a Messages body (system, messages with text / tool_use /
// tool_result / thinking blocks, tools, tool_choice, max_tokens, stop_sequences, temperature,
// top_p, thinking → chat_template_kwargs.enable_thinking, stream). `count_only`: the
// count_tokens body, where max_tokens is not required.
std::optional<openai_error> messages_to_chat(const json::value& body, json::value& chat,
                                             bool count_only = false);

// {"type":"error","error":{"type","message"}}, the type from the status.
json::value anthropic_error_json(const openai_error& e);

// Anthropic's stop_reason for how the answer ended (by_stop_sequence: a stop string ended it).
std::string_view anthropic_stop_reason(stream::finish_reason reason, bool by_stop_sequence);

// The message object: id msg_..., content blocks thinking / text / tool_use (input an object);
// stop_sequence: the request's stop string that ended it ("" → null).
json::value anthropic_message_json(const response_meta& meta, const chat::message& m,
                                   std::string_view stop_reason, const usage& u,
                                   const std::string& stop_sequence = {});

// The stream's events for one response, from OpenAI-shaped deltas: message_start, ping, then
// content_block_start / content_block_delta (text_delta, thinking_delta, input_json_delta) /
// content_block_stop per block, message_delta (stop_reason, usage) and message_stop.
class anthropic_events final : public event_writer {
 public:
  explicit anthropic_events(response_meta meta) : meta_(std::move(meta)) {}
  std::string start() override;
  std::string delta(const stream::delta_view& d) override;
  std::string finish(const answer_end& end) override;
  std::string error(const openai_error& e) override;

 private:
  enum class block : std::uint8_t { none, thinking, text, tool };
  std::string open(block kind, json::value content_block);
  std::string close();
  response_meta meta_;
  block open_ = block::none;
  int index_ = -1;
  std::optional<std::int64_t> tool_index_;  // the OpenAI index of the open tool_use block
};

// "event: NAME\ndata: JSON\n\n".
std::string named_sse(std::string_view event, const json::value& data);

}  // namespace chatpeg::server::detail

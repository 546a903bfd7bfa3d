// OpenAI's Responses API on the gateway's one pipeline: a translator in (a /v1/responses body →
// the Chat Completions body the pipeline reads, with the Responses body's JSON paths in its
// errors) and serializers out (the response object with reasoning / message / function_call
// output items, and the stream's named events with sequence numbers). Stateless: a
// previous_response_id or store: true is refused. Pure functions and a per-response event
// writer, no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chat_completions.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/json/json.h"
#include "wire_api.h"

namespace chatpeg::server::detail {

std::optional<openai_error> responses_to_chat(const json::value& body, json::value& chat);

// The response object (status completed, or incomplete with reason max_output_tokens).
json::value response_object_json(const response_meta& meta, const chat::message& m,
                                 stream::finish_reason reason, const usage& u);

// response.created, response.in_progress, then per output item response.output_item.added,
// its parts and deltas (reasoning_text / output_text / function_call_arguments) and
// response.output_item.done, and response.completed or response.incomplete; each event with
// its type and a sequence_number.
class response_events final : public event_writer {
 public:
  explicit response_events(response_meta meta) : meta_(std::move(meta)) {}
  std::string start() override;
  std::string delta(const stream::delta_view& d) override;
  std::string finish(const answer_end& end) override;
  std::string error(const openai_error& e) override;

 private:
  enum class item : std::uint8_t { none, reasoning, message, call };
  std::string event(std::string_view type, json::value data);
  std::string open(item kind, json::value added);
  std::string close();
  json::value shell(std::string_view status) const;  // the response object so far
  response_meta meta_;
  std::int64_t sequence_ = 0;
  item open_ = item::none;
  std::optional<std::int64_t> call_index_;     // the OpenAI index of the open function_call
  std::string text_;                           // the open item's text or arguments so far
  json::value current_;                        // the open item
  json::value output_ = json::value::array();  // the items done
};

}  // namespace chatpeg::server::detail

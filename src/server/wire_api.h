// The APIs the gateway speaks, each a translator in and a serializer out around one pipeline:
// Chat Completions, Anthropic's Messages and OpenAI's Responses. This header holds what the
// gateway needs to answer in a request's API (routes.h says which API a path speaks): its error
// shape, its whole answer and its stream events (a writer per streamed response). Internal to
// the server module.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "chat_completions.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/json/json.h"
#include "chatpeg/stream/session.h"

namespace chatpeg::server::detail {

enum class api_kind : std::uint8_t { chat_completions, anthropic_messages, responses };

// The error object in the API's shape.
json::value error_json(api_kind api, const openai_error& e);

// How an answer ended, as every API reports it.
struct answer_end {
  stream::finish_reason reason = stream::finish_reason::stop;
  std::string stop_sequence;  // the request's stop string that ended it, if one did
  usage u;
  bool include_usage = false;  // Chat Completions: stream_options.include_usage
};

// The whole (non-streamed) answer.
json::value answer_json(api_kind api, const response_meta& meta, const chat::message& m,
                        const answer_end& end);

// A streamed answer's bytes, from the pipeline's typed deltas (views into the stream's buffers,
// read during the call only).
class event_writer {
 public:
  virtual ~event_writer() = default;
  virtual std::string start() = 0;
  virtual std::string delta(const stream::delta_view& d) = 0;
  virtual std::string finish(const answer_end& end) = 0;
  // The backend failed after the stream started: the stream's last bytes.
  virtual std::string error(const openai_error& e) = 0;
};
std::unique_ptr<event_writer> make_event_writer(api_kind api, const response_meta& meta);

// The request's stop string that ended the backend's answer ("" when none of them did: the
// template's own stops, the end of sequence, or a backend that does not say which).
std::string matched_stop_sequence(const chat_call& call, const backend_done& done);

// The string member `key` of v, else `fallback` (absent, null, another type, v no object):
// reading an untrusted body never throws.
std::string string_or(const json::value& v, const char* key, std::string fallback = {});

// For the translators of other APIs' bodies: a 400 naming the body's JSON path.
openai_error field_error(const std::string& path, const std::string& message);
// Appends the object member `key` (a string) to out, or an error naming path.key.
std::optional<openai_error> append_string_field(const json::value& v, const char* key,
                                                const std::string& path, std::string& out);
// The function object of one tool of another API's body (`tool` is an object at `path`).
using tool_function_reader = std::optional<openai_error> (*)(const json::value& tool,
                                                             const std::string& path,
                                                             json::value& function);
// The body's `tools` (absent or null: none) as Chat Completions tools in chat["tools"]: an
// array of objects, each turned into {"type":"function","function":...} by `function_of`.
std::optional<openai_error> translate_tools(const json::value& body, json::value& chat,
                                            tool_function_reader function_of);
// The text of `content`: a string, or an array of parts {type (one of `types`), text} joined.
std::optional<openai_error> text_of_parts(const json::value& content, const std::string& path,
                                          std::initializer_list<std::string_view> types,
                                          std::string& out);

}  // namespace chatpeg::server::detail

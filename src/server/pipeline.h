// The gateway's only contact points with the chat and stream layers: preparing a request
// (chat::prepare) and turning model output into OpenAI deltas (stream::session). Everything
// else in the server goes through these two functions, so switching implementations is a
// change in pipeline.cpp only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"
#include "chatpeg/response/response.h"
#include "chatpeg/server/special_tokens.h"
#include "chatpeg/stream/session.h"

namespace chatpeg::server::detail {

struct stream_finish {
  std::vector<stream::delta> deltas;
  chat::message message;
  stream::finish_reason reason = stream::finish_reason::stop;
  std::string warning;  // non-empty when the output stopped matching (delivered as content)
};

// Model output → deltas. Never fails because of model output: text that stops matching the
// parser is delivered as content and reported through stream_finish::warning.
class response_stream {
 public:
  virtual ~response_stream() = default;
  // The deltas as views into the stream's buffers, valid until the next feed or finish.
  virtual std::span<const stream::delta_view> feed(std::string_view chunk,
                                                   std::span<const std::int32_t> tokens) = 0;
  virtual stream_finish finish(bool hit_token_limit) = 0;
};

// How model output is read: chatpeg's own parser of the prepared request, or a response
// template (then `tools` are the request's, for casting arguments by their schemas).
struct output_reader {
  response::template_ptr response_template;  // null: chatpeg's own parser
  json::value tools = json::value::array();
};

// With a response template, a request with tools whose tool syntax chatpeg's analysis does not
// know is still prepared: the prompt carries the tools, no grammar constrains the output, and
// the response template reads the calls.
base::result<chat::prepared> prepare_request(const chat::chat_template& tmpl,
                                             const chat::request& req,
                                             const response::template_ptr& response_template = {});

// `specials`: the prepared request's markers that are single special tokens of the backend
// (special_tokens.h), so a marker counts only when produced by that token (own parser only).
std::unique_ptr<response_stream> make_response_stream(
    const chat::prepared& p, const std::vector<special_token>& specials = {},
    const output_reader& reader = {});

// Which implementation is wired in (for /health and logs).
std::string_view pipeline_description(const response::template_ptr& response_template = {});

}  // namespace chatpeg::server::detail

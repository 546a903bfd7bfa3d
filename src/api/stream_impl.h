// The state behind api::response_stream: a stream::reader of model output that turns it into
// OpenAI deltas, chatpeg's own (a stream::session over a prepared request) or a response
// template's (response::delta_stream).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "chatpeg/api/template.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/response/response.h"
#include "chatpeg/stream/session.h"

namespace chatpeg::api {

struct response_stream::impl {
  // What the reader reads, kept alive with it: the compiled template the prepared parser came
  // from and the prepared request a session refers to (both null for a response template).
  std::shared_ptr<const chat::chat_template> compiled;
  std::unique_ptr<chat::prepared> prepared;
  std::unique_ptr<stream::reader> reader;
  std::vector<std::int32_t> byte_tokens;  // feed(): token ids laid out one per byte
};

namespace detail {

// chatpeg's own reader: the session keeps a reference to the prepared request, so both live
// in the stream's heap object, with the compiled template the prepared parser came from.
std::unique_ptr<response_stream::impl> session_stream(
    std::shared_ptr<const chat::chat_template> compiled, chat::prepared prepared,
    const stream_options& options);

// A response template's reader.
std::unique_ptr<response_stream::impl> template_stream(response::template_ptr t,
                                                       response::parse_options options);

}  // namespace detail
}  // namespace chatpeg::api

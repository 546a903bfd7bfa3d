// The state behind api::response_stream: the prepared request and the stream::session that
// reads it (the session keeps a reference, so both live in one heap object), plus the
// compiled template the prepared parser came from.
#pragma once

#include <memory>

#include "chatpeg/api/template.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/stream/session.h"

namespace chatpeg::api {

struct response_stream::impl {
  impl(std::shared_ptr<const chat::chat_template> t, chat::prepared p,
       const stream_options& options);

  std::shared_ptr<const chat::chat_template> compiled;
  chat::prepared prepared;
  stream::session session;                // reads `prepared`: declared after it
  std::vector<std::int32_t> byte_tokens;  // feed(): token ids laid out one per byte
};

}  // namespace chatpeg::api

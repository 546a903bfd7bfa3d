// The state behind api::chat_template (shared by its copies): the compiled template and the
// response template its file ships, for the members in template.cpp and response_template.cpp.
#pragma once

#include <memory>
#include <string>

#include "chatpeg/api/template.h"
#include "chatpeg/chat/template.h"

namespace chatpeg::api {

struct chat_template::impl {
  std::shared_ptr<const chat::chat_template> compiled;
  std::string response_template;  // shipped beside it (JSON text), empty when none
};

}  // namespace chatpeg::api

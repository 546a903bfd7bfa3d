// Internal: the template variables of a request without `tools`, for prepare(), which renders
// the request several times with its tools read where they are (chat_template::render_request
// with tools given apart) instead of copied into the variables.
#pragma once

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"

namespace chatpeg::chat::detail {

// template_variables(tmpl, req) minus its "tools" entry.
base::result<json::value> template_variables_without_tools(const chat_template& tmpl,
                                                           const request& req);

}  // namespace chatpeg::chat::detail

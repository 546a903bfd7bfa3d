// One-shot parse of a model output (non-streaming): match prepared.parse_prefix + output
// with the request's parser and map the AST to a message. The final parse of a complete
// output that does not match is a typed error (errc::no_match) with the byte offset into
// `output` and what was expected there.
#pragma once

#include <string_view>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/prepare.h"

namespace chatpeg::stream {

struct parse_options {
  bool partial = false;  // output is a prefix of a response still streaming (lenient parse)
};

base::result<chat::message> parse(const chat::prepared& p, std::string_view output,
                                  const parse_options& options = {});

}  // namespace chatpeg::stream

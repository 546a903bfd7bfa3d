// AST → chat message: one generic fold over the tags of DESIGN.md §6 (no per-model code).
// Arguments that arrive before the function name are buffered; tool-arg-string-value text is
// JSON-escaped with a pending closing quote; tool-arg-value text is JSON (normalized); on
// tool-close the buffer is flushed, a pending quote closed and open braces closed. At every
// moment each call's arguments are a prefix of its final arguments.
#pragma once

#include <string_view>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/peg/grammar.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::stream {

struct map_options {
  bool partial = false;  // the match was lenient and may be incomplete
};

// Folds the AST of a match of `input` into a message. Errors (errc::internal_error) only for
// ASTs that break the tag contract (a tool-arg-name outside a tool, ...).
base::result<chat::message> map_ast(const peg::grammar& g, const peg::match_result& m,
                                    std::string_view input, const map_options& options = {});

}  // namespace chatpeg::stream

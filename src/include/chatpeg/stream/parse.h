// One-shot parse of a model output (non-streaming): match prepared.parse_prefix + output
// with the request's parser and map the AST to a message. The final parse of a complete
// output that does not match is a typed error (errc::no_match) with the byte offset into
// `output` and what was expected there.
//
// Truncated output: when the complete parse fails but the output is a valid prefix (the
// lenient parse needs more input — e.g. generation stopped at max_tokens inside a call), the
// error says "output ends inside <what>" at offset output.size(); with allow_truncated the
// partial message is returned instead, its open calls closed (arguments are JSON objects: a
// string cut mid-text keeps its text, a key whose value has not begun is left out), and
// parse_detailed() reports truncated = true (finish_reason "length"). With
// allow_truncated the cut-off reading also wins over a complete parse that reads the output
// differently (a grammar with a content fallback reads "[f(a=1" as text), so what a
// streaming session already sent is kept.
#pragma once

#include <string_view>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::stream {

struct parse_options {
  bool partial = false;  // output is a prefix of a response still streaming (lenient parse)
  // Final parse only: accept output cut off inside a construct (see above).
  bool allow_truncated = false;
  peg::matcher_options matcher = {};
};

struct parse_outcome {
  chat::message message;
  // partial: the lenient match needed more input (the message may still grow).
  bool incomplete = false;
  // final parse with allow_truncated: the output ended inside a construct; open calls were
  // closed.
  bool truncated = false;
};

base::result<parse_outcome> parse_detailed(const chat::prepared& p, std::string_view output,
                                           const parse_options& options = {});

base::result<chat::message> parse(const chat::prepared& p, std::string_view output,
                                  const parse_options& options = {});

}  // namespace chatpeg::stream

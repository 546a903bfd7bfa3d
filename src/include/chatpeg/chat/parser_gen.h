// The parser generator on its own: chat::analysis + request → the PEG parser and the GBNF
// grammar (with laziness, triggers, preserved tokens and stops) for one request. prepare()
// renders the prompt and calls this; tests and `chatpeg grammar --analysis FILE` call it
// directly with an analysis that did not come from a template.
#pragma once

#include <string>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/analysis.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/prepare.h"

namespace chatpeg::chat {

struct generate_options {
  // The text the parser reads in front of the model output (prepared::parse_prefix): the tail
  // of the generation prompt from the reasoning start marker, or the prefilled part of a
  // continued assistant message. The GBNF constrains only what follows it.
  std::string parse_prefix;
  bool build_gbnf = true;
  prepare_stats* stats = nullptr;  // filled when set and generate() succeeds
};

// Fills every field of `prepared` except prompt and generation_prompt. Errors:
// errc::invalid_argument (tools together with a user grammar, a named tool that is not in
// tools, a tool schema that does not compile), errc::analysis_failed (tools requested but
// the analysis has no tool syntax; the message carries analysis.tool_error).
base::result<prepared> generate(const analysis& a, const request& req,
                                const generate_options& options = {});

}  // namespace chatpeg::chat

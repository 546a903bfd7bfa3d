// AST → chat message: one generic fold over the tags of peg/tags.h (no per-model code).
// Arguments that arrive before the function name are buffered; tool-arg-string-value text is
// JSON-escaped with a pending closing quote; tool-arg-value text is JSON (normalized); on
// tool-close the buffer is flushed, a pending quote closed and open braces closed. At every
// moment each call's arguments are a prefix of its final arguments.
//
// Tag semantics (peg::tag):
//   reasoning, content   text appended (several nodes concatenate; a text tag nested in
//                        another one is not counted twice). Text is valid UTF-8; a partial
//                        node holds back an incomplete trailing sequence.
//   tool                 one call; the call ends with its tool-close or, when the node is
//                        complete, with the node.
//   tool-open            starts a call unless it opens the enclosing tool node's call.
//   tool-close           ends the current call: flush, close a pending quote and braces.
//   tool-name            the function name (trimmed; a JSON string is unquoted). A partial
//                        name node is ignored, so a half-written name is never reported.
//   tool-id              the call id (same unquoting); partial ids are ignored.
//   tool-args            a whole JSON (or Python dict) arguments object, normalized by
//                        stream::value_converter (whitespace dropped, Python → JSON).
//   tool-arg-name        starts one argument of an object assembled by the mapper; its key
//                        is written with the first byte of its value (pending_key).
//   tool-arg-value       the argument's value as JSON or a Python literal; one that holds
//                        a tool-arg-string-value (or another value tag) defers to it.
//   tool-arg-string-value raw text of a string argument, JSON-escaped; consecutive string
//                        nodes of one argument concatenate.
//   tool-arg-open/close  bracket one argument (close ends its value).
//
// Calls appear in the message once they have a name. For a complete (non-partial) AST every
// call must have a name and the final arguments are a JSON object ("{}" when empty).
//
// Content and reasoning: reasoning_content is set when non-empty; content is set when
// non-empty, and "" when there is no content and no tool call (OpenAI sends null content
// only beside tool calls).
#pragma once

#include <memory>
#include <string_view>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/peg/grammar.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::stream {

struct map_options {
  bool partial = false;  // the match was lenient and may be incomplete
  // With partial: end calls that are still open as if they were closed (pending quote,
  // unfinished literal and open braces closed) so every argument string is a JSON object; a
  // string cut mid-text keeps its text, a key whose value has not begun is left out. Used for
  // output cut off by max_tokens (finish_reason "length").
  bool close_open_calls = false;
};

// A reusable mapper. map() folds the whole AST; the object keeps its buffers between calls (a
// streaming session folds incrementally with the same fold, stream/fold.h).
class mapper {
 public:
  mapper();
  ~mapper();
  mapper(mapper&&) noexcept;
  mapper& operator=(mapper&&) noexcept;

  // Errors (errc::internal_error) only for ASTs that break the tag contract (an argument
  // value before any argument name, tool-args mixed with tool-arg-name, a complete call
  // without a name, argument text that is neither JSON nor a Python literal, ...).
  base::result<chat::message> map(const peg::grammar& g, const peg::match_result& m,
                                  std::string_view input, const map_options& options = {});

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// Folds the AST of a match of `input` into a message (a one-shot mapper).
base::result<chat::message> map_ast(const peg::grammar& g, const peg::match_result& m,
                                    std::string_view input, const map_options& options = {});

}  // namespace chatpeg::stream

// Per-request preparation: everything an inference server needs for one chat completion —
// the prompt, and for constrained decoding the GBNF grammar (lazy or not, with triggers),
// preserved tokens and stop strings — plus the PEG grammar the response is parsed with.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/peg/grammar.h"

namespace chatpeg::chat {

enum class trigger_type : std::uint8_t { word, pattern, pattern_full, token };

struct grammar_trigger {
  trigger_type type = trigger_type::word;
  std::string value;
};

struct prepared {
  std::string prompt;             // rendered, ending with the generation prompt
  std::string generation_prompt;  // the assistant header the model continues from
  // The parser: matches generation_prompt-tail + model output (see parse_prefix).
  std::shared_ptr<const peg::grammar> parser;
  // Text the parser expects in front of the model output: the tail of the generation prompt
  // it matches (e.g. "<think>\n" when the prompt opens reasoning), so that the parse starts
  // where the model starts. Parsers read parse_prefix + output. With reasoning_format none
  // the grammar puts that text in content, as the reference implementation does.
  std::string parse_prefix;
  std::string gbnf;  // empty when no grammar is needed (plain content)
  bool grammar_lazy = false;
  std::vector<grammar_trigger> triggers;
  std::vector<std::string> preserved_tokens;
  std::vector<std::string> stops;
  bool extract_reasoning = false;  // reasoning_format != none and the template has reasoning
  // tolerance::unclosed_call: a final parse of an output that ends inside a call finishes the
  // call with what was read (as a stream that announced it does) instead of failing or reading
  // it as text.
  bool finish_cut_calls = false;
};

// Work counts of one prepare() (or generate()), for tests that check they grow linearly with
// the request: the size of what was built and what building it looked at.
struct prepare_stats {
  std::size_t parser_nodes = 0;    // nodes of the parser's grammar
  std::size_t gbnf_nodes = 0;      // nodes of the grammar the GBNF is exported from
  std::size_t rules = 0;           // rules of both grammars
  std::size_t nodes_examined = 0;  // nodes the compilers looked up while building (both)
  std::size_t gbnf_bytes = 0;      // size of the exported GBNF
};

struct prepare_options {
  bool build_gbnf = true;
  prepare_stats* stats = nullptr;  // filled when set and prepare() succeeds
};

// Fails with errc::invalid_argument for contradictory requests (tools + grammar, a named
// tool_choice that is not in tools), errc::analysis_failed when tools are requested but the
// template's tool syntax is unknown, errc::template_error when the template raises.
base::result<prepared> prepare(const chat_template& tmpl, const request& req,
                               const prepare_options& options = {});

// The template variables transformers would pass for this request (messages adapted to the
// template's capabilities: arguments strings → objects when needed, system merged into the
// first user turn when there is no system role, ...).
base::result<json::value> template_variables(const chat_template& tmpl, const request& req);

// The same from capabilities alone (what template_variables does with tmpl.caps()).
base::result<json::value> adapt_variables(const template_caps& caps, const request& req);

// What the model writes for an assistant turn, as the template renders it. `body` is an
// OpenAI request (messages, tools, ...) for the conversation in front of the turn; `before` is
// that conversation prepared with the generation prompt on, and `output` the text the
// template writes after its prompt for `turn` (an OpenAI assistant message), up to the end of
// the turn (the end-of-turn text a plain content turn ends with is cut off). errc::unsupported
// when the rendered conversation does not start with the prompt (the template writes history
// turns differently from fresh ones).
struct turn_output {
  prepared before;
  std::string output;
};
base::result<turn_output> render_turn_output(const chat_template& tmpl, const json::value& body,
                                             const json::value& turn);

}  // namespace chatpeg::chat

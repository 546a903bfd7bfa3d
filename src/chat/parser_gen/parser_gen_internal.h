// Internals shared by the parser generator (parser_gen*.cpp) and the dedicated format
// builders (dedicated_parsers*.cpp): the per-build context, whitespace/marker helpers and
// the tool-call builders. Not a public header.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/analysis.h"
#include "chatpeg/chat/message.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/tolerance.h"
#include "chatpeg/grammar/schema.h"
#include "chatpeg/peg/builder.h"

namespace chatpeg::chat::detail {

// Where the parse starts relative to the reasoning block (decided from parse_prefix).
enum class prefix_state : std::uint8_t {
  none,             // nothing about reasoning is in front of the output
  reasoning_open,   // the prefix opened reasoning: the output starts inside it
  reasoning_closed  // the prefix holds a whole reasoning block: the output has none
};

// What the root is made of.
enum class body_kind : std::uint8_t { content, json_schema, tools };

// Free whitespace in grammars is bounded so a sampler cannot wander. 16 covers a
// line break plus the indentation templates write around tool-call JSON (Command R+ puts
// keys at 8 spaces: "{\n        \"tool_name\"", 9 characters; 8 was too tight).
inline constexpr std::uint32_t max_free_space = max_marker_space;

struct gen_context {
  peg::builder& b;
  const analysis& a;
  const request& req;
  std::vector<const json::value*> tools;  // the tools the answer may call (named: just one)
  body_kind body = body_kind::content;
  bool tool_required = false;      // tool_choice required or named: at least one call
  bool extract_reasoning = false;  // reasoning text goes to reasoning_content
  bool has_reasoning = false;      // the template has reasoning markers
  bool thinking_asked = false;     // the request turns thinking on (thinking_asked())
  prefix_state state = prefix_state::none;
  bool for_gbnf = false;  // building the grammar the model output alone must satisfy
  std::string parse_prefix;
  int rule_counter = 0;
  peg::parser py_value{};  // the shared Python literal rule, once defined
  peg::parser ws_node{};   // ws(), made once: one node serves every use
  // DSML: each tagged value opens with `true">` (raw string) or `false">` (JSON value).
  bool string_flag_values = false;

  peg::parser ws();  // 0..max_free_space whitespace characters (one shared node)
  // A marker with its leading/trailing whitespace made flexible: "\n</tool_call>\n" →
  // ws "</tool_call>" ws. A marker without surrounding whitespace is an exact literal; a
  // marker of whitespace only is ws. Under tolerance::flexible_space (the parser) whitespace
  // may also surround every marker and separate two tags inside it ("</arg_key>\n<arg_value>"),
  // except after the marker where `space_after` is false (text follows that keeps its own).
  peg::parser mark(std::string_view marker, bool space_after = true);
  // Whether the parser being built takes tolerance t (never the grammar for GBNF).
  bool tolerant(tolerance t) const { return !for_gbnf && tolerates(a, t); }
  std::string unique_rule(std::string_view base);  // "tool-get-weather-2"
  // Schema options for a value: rules named after `name`; undeclared object keys closed in the
  // grammar unless the schema opens the object, any in the parser (grammar::undeclared_keys).
  grammar::schema_options schema_options(std::string name) const;
  // Whether a call with these parameters may carry arguments they do not declare: always in
  // the parser (it reads what a model writes), in the grammar only when the schema opens the
  // object (grammar::admits_undeclared_keys).
  bool admits_undeclared(const json::value& params) const;
  // Whether a tool-call block holds more than one call: in the parser always (it reads every
  // call a model writes), in the grammar as the request's parallel_tool_calls says.
  bool parallel_calls() const { return req.parallel_tool_calls || !for_gbnf; }
};

// What a format builder returns: the root of the grammar, and for lazy grammars the node
// the GBNF is exported from (the tool-call block, starting at its trigger).
struct gen_result {
  peg::parser root;
  peg::parser lazy_from{};  // owner == nullptr: not lazy
  std::vector<grammar_trigger> triggers;
  std::vector<std::string> stops;
};

// Nothing, where none of `names` followed by `after` begins (a lookahead). An undeclared
// argument's name starts with it, so a declared argument whose value does not fit its schema
// is not read as an undeclared one. GBNF drops lookahead; there undeclared arguments appear
// only where the schema admits any key.
peg::parser none_of(peg::builder& b, const std::vector<std::string>& names, peg::parser after);

// Trimmed core of a marker ("\n<tool_call>\n" → "<tool_call>").
std::string_view marker_core(std::string_view marker);
// Rule-name-safe spelling of a tool name.
std::string sanitize(std::string_view name);

// The tool's name and parameter schema ({"type":"object"} when absent; the reference lives
// as long as the tool).
std::string tool_name(const json::value& tool);
const json::value& tool_parameters(const json::value& tool);

// The typed JSON arguments object of a tool (tagged tool_args by the caller).
base::result<peg::parser> json_arguments(gen_context& c, const json::value& tool);
// A Python literal value (pythonic calls): 'str', "str", numbers, True/False/None, lists,
// dicts, tuples. Shared rule (grammar::any_value).
peg::parser python_value(gen_context& c);
// A tool argument's value in the grammar (for_gbnf) of a format whose values are not JSON:
// typed by its schema in that spelling, objects closed as schema_options says, tagged
// tool-arg-value. The parser reads such values untyped (python_value, Gemma's value).
base::result<peg::parser> grammar_value(gen_context& c, const json::value& schema,
                                        const std::string& rule, grammar::literal_syntax syntax);

// Generic (analysis-driven) pieces.
// eps when there is no reasoning. `calls` (optional): the tool-call block, which may follow an
// opened-but-unclosed block directly; `call_openers`: the markers that start it (the unclosed
// block's text stops at one of them to try the calls).
peg::parser reasoning_block(gen_context& c, peg::parser calls = {},
                            std::span<const std::string> call_openers = {});
base::result<gen_result> build_generic(gen_context& c);
// The tool-call block of a tool_syntax: section(s) with one or more calls.
base::result<peg::parser> calls_block(gen_context& c, const tool_syntax& ts);
// Wraps a tool-call block with what comes before it (content, reasoning) per tool_choice.
// `call_opening` (optional): matches the opening of a call up to its function name; where it
// matches and no call parses (a tool that is not offered, a call that breaks off) the output
// fails the parse instead of being read as content.
gen_result assemble_tools(gen_context& c, peg::parser calls, std::vector<std::string> trigger_words,
                          peg::parser call_opening = {});

// The whole answer as content, for an answer a format's parser does not read — only when no
// call to an offered tool starts in it (`openers`: each offered call's opening text), so a
// malformed answer that calls a tool fails the parse instead of being returned as text.
peg::parser content_without_calls(gen_context& c, const std::vector<std::string>& openers);

// Dedicated formats, keyed by analysis.handler. Returns nullptr when there is none.
using dedicated_builder = base::result<gen_result> (*)(gen_context& c);
dedicated_builder find_dedicated(std::string_view handler);

}  // namespace chatpeg::chat::detail

// Tolerances: what the parser reads beyond the syntax a template renders. Real models drift
// from their template (they indent, write text after a call, repeat an opener, lose a special
// token, stop before a closer); each such drift the parser forgives is one named rule here,
// applied by the parser generator to every format whose analysis has the pieces the rule is
// about. The grammar (GBNF) never takes a tolerance: constrained output stays the template's
// own canonical syntax, and the parser reads it as before.
//
//   for (const auto& t : chat::tolerances_in_effect(analysis)) print(t.name, t.reads);
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "chatpeg/chat/analysis.h"

namespace chatpeg::chat {

enum class tolerance : std::uint8_t {
  flexible_space,        // whitespace around every marker and between two tags of one marker
  text_around_calls,     // text after and between calls is content
  call_separators,       // calls separated by ';' or ',' (and whitespace) besides the template's
  payload_variants,      // "arguments" or "parameters" for the arguments key
  serialized_arguments,  // JSON arguments as an object or as a JSON string holding one
  lost_markers,          // a special-token marker between a name and its JSON arguments missing
  unclosed_call,         // a call cut by the end of the output is finished with what was read
  missing_wrapper,       // a call without its outer wrapper tag, when its own opener is distinct
  missing_value_end,     // a tagged argument whose closer is missing before the next argument
  tag_attributes,        // extra key="value" attributes inside an argument's opening tag
  reopened_reasoning,    // the reasoning opener written again after the prompt opened the block
  loose_python,          // zero-padded numbers and unescaped quotes inside a Python string
  python_separators,     // Python keyword arguments separated by a comma or by whitespace
  missing_namespace,     // a function name without its namespace prefix ("functions.")
};

struct tolerance_rule {
  tolerance id;
  std::string_view name;   // "flexible-space"
  std::string_view reads;  // what the parser accepts, in one line
  // Whether the rule has anything to act on in this analysis (a rule about Python values
  // does nothing for a JSON format).
  bool (*applies)(const analysis&);
};

// Every rule, in the order above.
const std::vector<tolerance_rule>& tolerance_rules();
// The rules that act on this analysis (what `chatpeg analyze` lists).
std::vector<tolerance_rule> tolerances_in_effect(const analysis& a);
bool tolerates(const analysis& a, tolerance t);

// Where the closing tag of a call's outer wrapper starts in tools.call_end ("</tool_call>" of
// "</function>\n</tool_call>" when call_start is "<tool_call>\n" and the call has its own opener
// "<function="), else npos. What tolerance::missing_wrapper lets the parser go without.
std::size_t wrapper_close_at(const tool_syntax& ts);

}  // namespace chatpeg::chat

// The tolerance table (chat/tolerance.h): one row per drift the parser forgives, with the
// condition under which it has something to act on. The parser generator asks tolerates() at
// the one place each rule applies; `chatpeg analyze` prints tolerances_in_effect().
#include "chatpeg/chat/tolerance.h"

#include <string>

namespace chatpeg::chat {
namespace {

bool trimmed_empty(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

bool has_tools(const analysis& a) {
  return a.tools.format != tool_format::none || !a.handler.empty();
}

bool any_marker(const analysis& a) {
  return has_tools(a) || a.reasoning.mode != reasoning_mode::none || !a.content.start.empty();
}

bool json_calls(const analysis& a) {
  return a.tools.format == tool_format::json_native;
}

bool named_json_calls(const analysis& a) {
  return json_calls(a) && !a.tools.function_name_as_key && !a.tools.arguments_as_string;
}

bool keyed_json_calls(const analysis& a) {
  return json_calls(a) && !a.tools.function_name_as_key;
}

bool marker_before_json_arguments(const analysis& a) {
  return a.tools.format == tool_format::tag_with_json &&
         (!trimmed_empty(a.tools.args_start) || !trimmed_empty(a.tools.name_suffix));
}

// The tag a marker opens with ("<tool_call>" of "<tool_call>\n"), if it is one whole tag.
std::string_view whole_tag(std::string_view marker) {
  const std::size_t b = marker.find_first_not_of(" \t\r\n");
  const std::size_t e = marker.find_last_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  std::string_view core = marker.substr(b, e + 1 - b);
  if (core.size() < 3 || core.front() != '<' || core.back() != '>') return {};
  if (core.find('<', 1) != std::string_view::npos) return {};
  return core;
}

bool wrapped_call(const analysis& a) {
  return wrapper_close_at(a.tools) != std::string::npos;
}

bool tagged_with_value_end(const analysis& a) {
  return a.tools.format == tool_format::tag_with_tagged && !a.tools.pythonic &&
         !trimmed_empty(a.tools.arg_value_end) && !trimmed_empty(a.tools.arg_name_prefix);
}

bool attribute_name_tags(const analysis& a) {
  const std::string_view s = a.tools.arg_name_suffix;
  const std::size_t b = s.find_first_not_of(" \t\r\n");
  const std::size_t e = s.find_last_not_of(" \t\r\n");
  return a.tools.format == tool_format::tag_with_tagged && b != std::string_view::npos &&
         s[b] == '"' && s[e] == '>';
}

bool reasoning_opener(const analysis& a) {
  return a.reasoning.mode != reasoning_mode::none && !trimmed_empty(a.reasoning.start);
}

bool namespaced_names(const analysis& a) {
  const std::string_view p = a.tools.name_prefix;
  const std::size_t e = p.find_last_not_of(" \t\r\n");
  return e != std::string_view::npos && p[e] == '.' && !trimmed_empty(a.tools.call_start);
}

bool python_calls(const analysis& a) {
  return a.tools.pythonic;
}

bool python_values(const analysis& a) {
  return a.tools.values == value_syntax::python;
}

}  // namespace

const std::vector<tolerance_rule>& tolerance_rules() {
  static const std::vector<tolerance_rule> rules = {
      {tolerance::flexible_space, "flexible-space",
       "whitespace (up to 16 characters) around every marker and between two "
       "tags of one marker",
       any_marker},
      {tolerance::text_around_calls, "text-around-calls",
       "text after the calls and between them is content", has_tools},
      {tolerance::call_separators, "call-separators",
       "calls separated by ';' or ',' as well as by the template's separator", json_calls},
      {tolerance::payload_variants, "payload-variants",
       "\"arguments\" or \"parameters\" as the arguments key", named_json_calls},
      {tolerance::serialized_arguments, "serialized-arguments",
       "JSON arguments written as an object or as a JSON string that holds one "
       "(\"arguments\": \"{\\\"a\\\": 1}\")",
       keyed_json_calls},
      {tolerance::lost_markers, "lost-markers",
       "the marker between a function name and its JSON arguments may be missing (a backend "
       "that drops special tokens)",
       marker_before_json_arguments},
      {tolerance::unclosed_call, "unclosed-call",
       "a call cut by the end of the output is finished with what was read (closers missing)",
       has_tools},
      {tolerance::missing_wrapper, "missing-wrapper",
       "a call without its outer wrapper tag, opening or closing, where the call's own opener "
       "follows",
       wrapped_call},
      {tolerance::missing_value_end, "missing-value-end",
       "an argument's closing marker may be missing where the next argument follows",
       tagged_with_value_end},
      {tolerance::tag_attributes, "tag-attributes",
       "extra key=\"value\" attributes in an argument's opening tag", attribute_name_tags},
      {tolerance::reopened_reasoning, "reopened-reasoning",
       "the reasoning opener written again where the prompt already opened the block, before "
       "reasoning text",
       reasoning_opener},
      {tolerance::loose_python, "loose-python",
       "zero-padded numbers (07) and unescaped quotes inside a Python string argument",
       python_values},
      {tolerance::python_separators, "python-separators",
       "Python keyword arguments separated by a comma or by whitespace, whichever the template "
       "writes",
       python_calls},
      {tolerance::missing_namespace, "missing-namespace",
       "a function name without its namespace prefix (\"functions.\") after the call's opener",
       namespaced_names},
  };
  return rules;
}

std::vector<tolerance_rule> tolerances_in_effect(const analysis& a) {
  std::vector<tolerance_rule> out;
  for (const auto& r : tolerance_rules()) {
    if (r.applies(a)) out.push_back(r);
  }
  return out;
}

std::size_t wrapper_close_at(const tool_syntax& ts) {
  const std::string_view open = whole_tag(ts.call_start);
  if (open.empty() || trimmed_empty(ts.name_prefix)) return std::string::npos;
  const std::string close = "</" + std::string(open.substr(1));
  const std::size_t at = ts.call_end.rfind(close);
  if (at == std::string::npos || at == 0 || trimmed_empty(ts.call_end.substr(0, at)) ||
      !trimmed_empty(std::string_view(ts.call_end).substr(at + close.size()))) {
    return std::string::npos;
  }
  // The closing tag with the whitespace before it.
  std::size_t from = at;
  while (from > 0 && std::string_view(" \t\r\n").find(ts.call_end[from - 1]) != std::string::npos)
    --from;
  return from;
}

bool tolerates(const analysis& a, tolerance t) {
  for (const auto& r : tolerance_rules()) {
    if (r.id == t) return r.applies(a);
  }
  return false;
}

}  // namespace chatpeg::chat

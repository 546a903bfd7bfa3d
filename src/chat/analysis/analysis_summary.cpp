// analysis::summary(): the readable multi-line text `chatpeg analyze` prints: where the
// analysis came from, reasoning and content markers, the tool format with every non-empty
// marker, preserved tokens, capabilities, and the tool error when there is one. Markers are
// shown as JSON strings so whitespace and newlines are visible.
#include "chat/analysis/analysis_detail.h"
#include "chatpeg/chat/tolerance.h"

namespace chatpeg::chat {
namespace {

const char* source_name(analysis_source s) {
  switch (s) {
    case analysis_source::differential:
      return "differential";
    case analysis_source::dedicated:
      return "dedicated";
    case analysis_source::loaded:
      return "loaded";
  }
  return "?";
}
const char* mode_name(reasoning_mode m) {
  switch (m) {
    case reasoning_mode::none:
      return "none";
    case reasoning_mode::tag_based:
      return "tag_based";
    case reasoning_mode::tools_only:
      return "tools_only";
  }
  return "?";
}
const char* format_name(tool_format f) {
  switch (f) {
    case tool_format::none:
      return "none";
    case tool_format::json_native:
      return "json_native";
    case tool_format::tag_with_json:
      return "tag_with_json";
    case tool_format::tag_with_tagged:
      return "tag_with_tagged";
  }
  return "?";
}
const char* values_name(value_syntax v) {
  switch (v) {
    case value_syntax::json:
      return "json";
    case value_syntax::python:
      return "python";
    case value_syntax::raw:
      return "raw";
  }
  return "?";
}
const char* id_name(id_position p) {
  switch (p) {
    case id_position::none:
      return "none";
    case id_position::before_name:
      return "before_name";
    case id_position::after_name:
      return "after_name";
    case id_position::after_args:
      return "after_args";
  }
  return "?";
}

void marker(std::string& out, std::string_view label, const std::string& value) {
  if (value.empty()) return;
  out += "    ";
  out += label;
  out += ": ";
  out += json::quote(value);
  out += "\n";
}

}  // namespace

std::string analysis::summary() const {
  std::string out = "source: ";
  out += source_name(source);
  if (!handler.empty()) out += " (handler " + handler + ")";
  out += "\n";
  if (!fixups.empty()) {
    out += "fix-ups:";
    for (const auto& f : fixups) out += " " + f;
    out += "\n";
  }
  if (!render_decoding.empty()) out += "renders read decoded: " + render_decoding + "\n";
  out += "reasoning: ";
  out += mode_name(reasoning.mode);
  out += "\n";
  marker(out, "start", reasoning.start);
  marker(out, "end", reasoning.end);
  out += content.start.empty() && content.end.empty() ? "content: bare\n" : "content: wrapped\n";
  marker(out, "start", content.start);
  marker(out, "end", content.end);
  const tool_syntax& t = tools;
  out += "tools: ";
  out += format_name(t.format);
  if (t.pythonic) out += " (pythonic)";
  out += "\n";
  if (t.format != tool_format::none) {
    marker(out, "section_start", t.section_start);
    marker(out, "section_end", t.section_end);
    marker(out, "call_separator", t.call_separator);
    marker(out, "call_start", t.call_start);
    marker(out, "call_end", t.call_end);
    if (t.format == tool_format::json_native) {
      if (t.function_name_as_key) out += "    function name is the key\n";
      marker(out, "name_key", t.name_key);
      marker(out, "arguments_key", t.arguments_key);
      marker(out, "id_key", t.id_key);
    }
    marker(out, "name_prefix", t.name_prefix);
    marker(out, "name_suffix", t.name_suffix);
    if (t.id_pos != id_position::none) out += std::string("    id: ") + id_name(t.id_pos) + "\n";
    marker(out, "id_prefix", t.id_prefix);
    marker(out, "id_suffix", t.id_suffix);
    marker(out, "args_start", t.args_start);
    marker(out, "args_end", t.args_end);
    marker(out, "arg_name_prefix", t.arg_name_prefix);
    marker(out, "arg_name_suffix", t.arg_name_suffix);
    marker(out, "arg_value_end", t.arg_value_end);
    marker(out, "arg_separator", t.arg_separator);
    marker(out, "content_gap", t.content_gap);
    out += std::string("    values: ") + values_name(t.values) + "\n";
    std::string flags;
    if (t.array_wrapped) flags += " array_wrapped";
    if (t.section_per_call) flags += " section_per_call";
    if (t.arguments_as_string) flags += " arguments_as_string";
    if (t.fixed_argument_order) flags += " fixed_argument_order";
    if (t.close_ends_turn) flags += " close_ends_turn";
    if (!flags.empty()) out += "    flags:" + flags + "\n";
  }
  if (!markers.empty()) {
    out += "markers:\n";
    for (const auto& [name, value] : markers) marker(out, name, value);
  }
  if (!tool_error.empty()) out += "tool error: " + tool_error + "\n";
  if (!note.empty()) out += "note: " + note + "\n";
  if (const auto rules = tolerances_in_effect(*this); !rules.empty()) {
    out += "tolerances (the parser also reads):\n";
    for (const auto& r : rules)
      out += "    " + std::string(r.name) + ": " + std::string(r.reads) + "\n";
  }
  out += "preserved tokens:";
  for (const auto& tok : preserved_tokens) out += " " + json::quote(tok);
  out += "\n";
  const template_caps& c = caps;
  std::string caps_line;
  auto flag = [&](bool on, const char* name) {
    if (on) caps_line += std::string(" ") + name;
  };
  flag(c.supports_system_role, "system_role");
  flag(c.supports_tools, "tools");
  flag(c.supports_tool_calls, "tool_calls");
  flag(c.supports_tool_responses, "tool_responses");
  flag(c.supports_parallel_tool_calls, "parallel_tool_calls");
  flag(c.requires_object_arguments, "object_arguments");
  flag(c.supports_string_content, "string_content");
  flag(c.supports_typed_content, "typed_content");
  flag(c.supports_reasoning, "reasoning");
  flag(c.supports_enable_thinking, "enable_thinking");
  out += "caps:" + (caps_line.empty() ? std::string(" (none)") : caps_line) + "\n";
  return out;
}

}  // namespace chatpeg::chat

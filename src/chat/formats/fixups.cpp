// Fix-ups: targeted edits of an analysis for known templates whose markers diffing cannot see
// (the step after differential analysis). One table row per fix-up: a predicate on the template
// source (and the analysis so far) and an edit. Applied rows are listed in analysis.fixups. Each
// row has a fixture in tests/chat/formats/fixups_test.cpp.
#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat::detail {
namespace {

bool has(std::string_view src, std::string_view needle) {
  return src.find(needle) != std::string_view::npos;
}

// Old Qwen-style templates (QwQ, DeepSeek-R1-Distill) strip "...</think>" from history with
// content.split('</think>') and never read reasoning_content: the model still thinks (in
// whatever tag the template strips: "</X>" gives <X>...</X>).
std::string split_closing_tag(std::string_view s) {
  for (std::string_view open : {"split('</", "split(\"</"}) {
    for (std::size_t k = s.find(open); k != std::string_view::npos; k = s.find(open, k + 1)) {
      const char quote = open[6];
      const std::size_t tag = k + open.size() - 2;  // at "</"
      const std::size_t close = s.find(std::string{'>', quote, ')'}, tag);
      if (close == std::string_view::npos || close - tag > 40) continue;
      std::string t(s.substr(tag, close + 1 - tag));
      if (t.find_first_of(" \n'\"") == std::string::npos) return t;
    }
  }
  return {};
}
bool splits_think(std::string_view s, const analysis& a) {
  return a.source != analysis_source::dedicated && !split_closing_tag(s).empty() &&
         !has(s, "reasoning_content");
}
void set_think(std::string_view s, analysis& a) {
  const std::string end = split_closing_tag(s);
  a.reasoning = {reasoning_mode::tag_based, "<" + end.substr(2), end};
  a.caps.supports_reasoning = true;
}

// Granite 3.3: thinking in <think></think>, the answer in <response></response> (only the
// system prompt says so); tool calls are "<|tool_call|>[{...}]", never rendered in history.
bool granite_3_3(std::string_view s, const analysis&) {
  return has(s, "<think></think>") && has(s, "<response></response>");
}
void set_granite_3_3(std::string_view, analysis& a) {
  a.reasoning = {reasoning_mode::tag_based, "<think>", "</think>"};
  a.content = {"<response>", "</response>"};
  a.caps.supports_reasoning = true;
  tool_syntax t;
  t.format = tool_format::json_native;
  t.section_start = "<|tool_call|>";
  t.array_wrapped = true;
  t.call_separator = ", ";
  a.tools = t;
  a.tool_error.clear();
  a.preserved_tokens = {"<think>", "</think>", "<response>", "</response>", "<|tool_call|>"};
}

// Command R+ (tool_use): content follows <|CHATBOT_TOKEN|>; calls are
// "Action:\n```json\n[{"tool_name": ..., "parameters": {...}}]\n```".
bool command_r_plus(std::string_view s, const analysis&) {
  return has(s, "<|CHATBOT_TOKEN|>") && has(s, "Action:") && !has(s, "<|START_ACTION|>");
}
void set_command_r_plus(std::string_view, analysis& a) {
  a.content = {"<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"};
  tool_syntax t;
  t.format = tool_format::json_native;
  t.section_start = "Action:\n```json\n";
  t.section_end = "\n```";
  t.array_wrapped = true;
  t.call_separator = ",";
  t.name_key = "tool_name";
  t.arguments_key = "parameters";
  a.tools = t;
  a.tool_error.clear();
  a.preserved_tokens = {"Action:\n```json", "```", "<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"};
}

// DeepSeek-R1-Distill tool tokens:
// "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>
// NAME\n```json\n{...}```<｜tool▁call▁end｜><｜tool▁calls▁end｜>".
bool deepseek_r1_tools(std::string_view s, const analysis&) {
  return has(s, "<｜tool▁call▁begin｜>") && has(s, "```json") && has(s, "<｜tool▁sep｜>");
}
void set_deepseek_r1_tools(std::string_view, analysis& a) {
  tool_syntax t;
  t.format = tool_format::tag_with_json;
  t.section_start = "<｜tool▁calls▁begin｜>";
  t.section_end = "<｜tool▁calls▁end｜>";
  t.call_start = "<｜tool▁call▁begin｜>";
  t.name_prefix = "function<｜tool▁sep｜>";
  t.name_suffix = "\n```json\n";
  t.args_end = "```";
  t.call_end = "<｜tool▁call▁end｜>";
  t.call_separator = "\n";
  a.tools = t;
  a.tool_error.clear();
  a.caps.supports_tool_calls = true;
  a.preserved_tokens = {"<｜tool▁calls▁begin｜>",
                        "<｜tool▁calls▁end｜>",
                        "<｜tool▁call▁begin｜>",
                        "<｜tool▁call▁end｜>",
                        "function<｜tool▁sep｜>",
                        "```json",
                        "```"};
  if (a.reasoning.mode != reasoning_mode::none) {
    a.preserved_tokens.push_back(a.reasoning.start);
    a.preserved_tokens.push_back(a.reasoning.end);
  }
}

}  // namespace

const std::vector<fixup>& fixups() {
  static const std::vector<fixup> rows = {
      {"think-split-reasoning", splits_think, set_think},
      {"granite-3.3", granite_3_3, set_granite_3_3},
      {"command-r-plus", command_r_plus, set_command_r_plus},
      {"deepseek-r1-tool-tokens", deepseek_r1_tools, set_deepseek_r1_tools},
  };
  return rows;
}

}  // namespace chatpeg::chat::detail

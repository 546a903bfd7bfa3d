// Dedicated formats: templates whose output syntax differential analysis cannot infer
// (channels, name-first headers, sections with indices, DSML, Python calls, custom quoting).
// One table row per format: a predicate on the template source and a function filling the
// analysis (reasoning/content/tool syntax and preserved tokens; gpt-oss, DSML and Gemma 4 fill
// it from their format descriptions, with the family's own markers). Rows are tried in order; the
// first match wins. Each row has a fixture in tests/chat/formats/dedicated_formats_test.cpp.
// Handler names are the contract with the parser generator (custom parsers for gpt-oss, gemma-4,
// kimi-k2, cohere, functionary-v3.2 and deepseek-v3.2-dsml; the generic generator for the
// others).
#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat::detail {
namespace {

bool has(std::string_view src, std::string_view needle) {
  return src.find(needle) != std::string_view::npos;
}

void think_tags(analysis& a, std::string start = "<think>", std::string end = "</think>") {
  a.reasoning = {reasoning_mode::tag_based, std::move(start), std::move(end)};
}

// gpt-oss harmony, DeepSeek V3.2 DSML and Gemma 4: the format descriptions, with the family's
// own markers.
void describe_as(std::string_view name, analysis& a) {
  apply_format_description(*find_format_description(name), nullptr, a);
}

// Functionary v3.2: ">>>NAME\n{json}" per call, ">>>all\ntext" for content.
void functionary_v3_2(analysis& a) {
  a.content = {">>>all\n", ""};
  tool_syntax& t = a.tools;
  t.format = tool_format::tag_with_json;
  t.name_prefix = ">>>";
  t.name_suffix = "\n";
  a.preserved_tokens = {">>>all"};
}

// Ministral 3 / Devstral: "[TOOL_CALLS]NAME[ARGS]{json}"; Mistral Small 3.2 adds
// "[CALL_ID]ID" between the name and [ARGS].
void ministral_3(std::string_view src, analysis& a) {
  // Reasoning models of the family think in [THINK]...[/THINK]; the marker pair is harmless
  // (optional) for the others, as in the reference.
  bool think = has(src, "[THINK]") || !has(src, "[CALL_ID]");
  if (think) a.reasoning = {reasoning_mode::tag_based, "[THINK]", "[/THINK]"};
  tool_syntax& t = a.tools;
  t.format = tool_format::tag_with_json;
  t.call_start = "[TOOL_CALLS]";
  if (has(src, "[CALL_ID]")) {
    t.id_pos = id_position::after_name;
    t.id_prefix = "[CALL_ID]";
  }
  t.args_start = "[ARGS]";
  a.preserved_tokens.clear();
  if (think) a.preserved_tokens = {"[THINK]", "[/THINK]"};
  a.preserved_tokens.push_back("[TOOL_CALLS]");
  if (has(src, "[CALL_ID]")) a.preserved_tokens.push_back("[CALL_ID]");
  a.preserved_tokens.push_back("[ARGS]");
}

// Kimi K2: a section of calls "<|tool_call_begin|>functions.NAME:IDX
// <|tool_call_argument_begin|>{json}<|tool_call_end|>"; the id is "functions.NAME:IDX".
void kimi_k2(analysis& a) {
  think_tags(a);
  tool_syntax& t = a.tools;
  t.format = tool_format::tag_with_json;
  t.section_start = "<|tool_calls_section_begin|>";
  t.section_end = "<|tool_calls_section_end|>";
  t.call_start = "<|tool_call_begin|>";
  t.name_prefix = "functions.";
  t.id_pos = id_position::after_name;
  t.id_prefix = ":";
  t.args_start = "<|tool_call_argument_begin|>";
  t.call_end = "<|tool_call_end|>";
  a.preserved_tokens = {"<|tool_calls_section_begin|>",
                        "<|tool_calls_section_end|>",
                        "<|tool_call_begin|>",
                        "<|tool_call_argument_begin|>",
                        "<|tool_call_end|>",
                        "<think>",
                        "</think>"};
}

// Cohere command-R7B / command-A: thinking, response text and a JSON action list.
void cohere(std::string_view src, analysis& a) {
  a.reasoning = {reasoning_mode::tag_based, "<|START_THINKING|>", "<|END_THINKING|>"};
  bool text = has(src, "<|START_TEXT|>");
  a.content = text ? content_syntax{"<|START_TEXT|>", "<|END_TEXT|>"}
                   : content_syntax{"<|START_RESPONSE|>", "<|END_RESPONSE|>"};
  tool_syntax& t = a.tools;
  t.format = tool_format::json_native;
  t.section_start = "<|START_ACTION|>";
  t.section_end = "<|END_ACTION|>";
  t.array_wrapped = true;
  t.call_separator = ",";
  t.name_key = "tool_name";
  t.arguments_key = "parameters";
  t.id_key = "tool_call_id";
  if (text) {
    a.preserved_tokens = {
        "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>",
        "<|USER_TOKEN|>",          "<|SYSTEM_TOKEN|>",      "<|START_THINKING|>",
        "<|END_THINKING|>",        "<|START_TEXT|>",        "<|END_TEXT|>",
        "<|START_ACTION|>",        "<|END_ACTION|>",        "<|START_TOOL_RESULT|>",
        "<|END_TOOL_RESULT|>"};
  } else {
    a.preserved_tokens = {"<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>",
                          "<|END_RESPONSE|>",   "<|START_ACTION|>", "<|END_ACTION|>"};
  }
}

// LFM2 / LFM2.5: pythonic calls "<|tool_call_start|>[name(a=1, b='x'), ...]<|tool_call_end|>".
void lfm2(std::string_view src, analysis& a) {
  think_tags(a);
  tool_syntax& t = a.tools;
  t.format = tool_format::tag_with_tagged;
  t.pythonic = true;
  t.values = value_syntax::python;
  t.section_start = "<|tool_call_start|>";
  t.section_end = "<|tool_call_end|>";
  t.array_wrapped = true;
  t.call_separator = ", ";
  t.name_suffix = "(";
  t.arg_name_suffix = "=";
  t.arg_separator = ", ";
  t.args_end = ")";
  a.preserved_tokens = {"<|tool_call_start|>", "<|tool_call_end|>", "<think>", "</think>"};
  if (has(src, "<|tool_list_start|>"))
    a.preserved_tokens.insert(a.preserved_tokens.end(),
                              {"<|tool_list_start|>", "<|tool_list_end|>"});
}

// GigaChat 3: "<|message_sep|>\n\nfunction call<|role_sep|>\n{json}"; 3.1:
// "<|function_call|>{json}".
void gigachat_3(std::string_view src, analysis& a) {
  tool_syntax& t = a.tools;
  t.format = tool_format::json_native;
  if (has(src, "<|function_call|>")) {
    t.call_start = "<|function_call|>";
    a.preserved_tokens = {"<|function_call|>"};
  } else {
    t.call_start = "<|message_sep|>\n\nfunction call<|role_sep|>\n";
    a.preserved_tokens = {"<|message_sep|>\n\n", "<|role_sep|>\n"};
  }
}

// Firefunction v2: " functools[{json}, ...]" (the template needs a `functions` variable, so
// probing renders cannot show it).
void firefunction_v2(analysis& a) {
  tool_syntax& t = a.tools;
  t.format = tool_format::json_native;
  t.section_start = " functools";
  t.array_wrapped = true;
  t.call_separator = ", ";
  a.preserved_tokens = {"functools"};
  // The template reads `functions` instead of `tools`, so the capability probes (which pass
  // `tools`) see nothing: what it renders is known here. It writes each call's arguments with
  // `tojson`, so they must be objects (a JSON string would be quoted again).
  a.caps.supports_tools = true;
  a.caps.supports_tool_calls = true;
  a.caps.supports_parallel_tool_calls = true;
  a.caps.requires_object_arguments = true;
}

}  // namespace

const std::vector<dedicated_format>& dedicated_formats() {
  static const std::vector<dedicated_format> rows = {
      {"gpt-oss", [](std::string_view s) { return has(s, "<|channel|>"); },
       [](std::string_view, analysis& a) { describe_as("gpt-oss", a); }},
      {"functionary-v3.2",
       [](std::string_view s) { return has(s, ">>>all") && has(s, ">>>${recipient}"); },
       [](std::string_view, analysis& a) { functionary_v3_2(a); }, ">>>"},
      {"ministral-3", [](std::string_view s) { return has(s, "[TOOL_CALLS]") && has(s, "[ARGS]"); },
       ministral_3},
      {"kimi-k2", [](std::string_view s) { return has(s, "<|tool_calls_section_begin|>"); },
       [](std::string_view, analysis& a) { kimi_k2(a); }},
      {"deepseek-v3.2-dsml", [](std::string_view s) { return has(s, "DSML"); },
       [](std::string_view, analysis& a) { describe_as("deepseek-v3.2-dsml", a); }},
      {"cohere", [](std::string_view s) { return has(s, "<|START_ACTION|>"); }, cohere},
      {"lfm2",
       [](std::string_view s) {
         // LFM2 templates that never render calls still list tools the LFM2 way.
         return has(s, "<|tool_call_start|>") || has(s, "List of tools: <|tool_list_start|>[") ||
                (has(s, "List of tools: [") && has(s, "<|im_start|>"));
       },
       lfm2},
      {"gigachat-3",
       [](std::string_view s) {
         return has(s, "<|role_sep|>") && (has(s, "function call") || has(s, "<|function_call|>"));
       },
       gigachat_3},
      {"gemma-4", [](std::string_view s) { return has(s, "<|tool_call>") && has(s, "call:"); },
       [](std::string_view, analysis& a) { describe_as("gemma-4", a); }},
      {"firefunction-v2", [](std::string_view s) { return has(s, "functools["); },
       [](std::string_view, analysis& a) { firefunction_v2(a); }},
  };
  return rows;
}

std::string_view dedicated_prompt_opener(std::string_view handler) {
  for (const auto& row : dedicated_formats())
    if (row.name == handler) return row.prompt_opener;
  return {};
}

}  // namespace chatpeg::chat::detail

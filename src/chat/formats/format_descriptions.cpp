// Format descriptions: output formats the probe renders cannot give to differential analysis
// (the name in a message's recipient header, messages on channels, custom string quoting),
// written as data. A row is a set of probe patterns — the template's own renders of a prompt,
// a content turn and a call turn, with the format's markers as ${holes} —
// and an analysis fragment that uses the same holes. Applying a row binds each hole to the
// markup token the template writes there (so a variant with renamed markers is read with its
// own), keeps the family's literal for holes no render shows, and overlays the fragment. The
// template chooser tries the rows whose required patterns match against the verify stage; the
// first that reads back the template's own calls wins. The dedicated rows of gpt-oss and
// Gemma 4 fill their analysis from the same rows with the family's literals.
#include <algorithm>

#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat::detail {
namespace {

// The gpt-oss (harmony) family: each message is "[start]assistant" + a header naming a channel
// (analysis, final, commentary) and, for a call, a recipient " to=functions.NAME" (before or
// after the channel), then "message" + body + "end" / "return" / "call".
constexpr std::string_view harmony_fragment = R"({
  "reasoning": {"mode": "tag_based", "start": "${channel}analysis${message}", "end": "${end}"},
  "content": {"start": "${channel}final${message}", "end": ""},
  "tools": {"format": "tag_with_json", "name_prefix": "${recipient}", "args_start": "${message}"},
  "markers": {"channel": "${channel}", "message": "${message}", "start": "${start}",
              "end": "${end}", "return": "${return}", "call": "${call}",
              "constrain": "${constrain}"},
  "preserved_tokens": ["${channel}", "${constrain}", "${message}", "${start}", "${end}"]
})";

// DeepSeek V3.2 DSML: XML-like invoke/parameter elements in a calls block, each parameter with
// a string="true|false" flag (raw text, or a JSON value); the element names are holes, bound
// to the opening part of each tag ("<｜DSML｜invoke" before its attributes).
constexpr std::string_view dsml_fragment = R"({
  "reasoning": {"mode": "tag_based", "start": "<think>", "end": "</think>"},
  "tools": {"format": "tag_with_tagged", "section_start": "${calls_open}\n",
            "section_end": "${calls_close}${after_calls}", "name_prefix": "${invoke_open} name=\"",
            "name_suffix": "\">\n", "call_end": "${invoke_close}\n",
            "arg_name_prefix": "${param_open} name=\"", "arg_name_suffix": "\" string=\"",
            "arg_value_end": "${param_close}\n", "values": "raw"},
  "preserved_tokens": ["${family}", "<think>", "</think>"]
})";

// Gemma 4: "call_open call:NAME{key:<|"|>str<|"|>,n:1} call_close", reasoning in
// "channel_open thought\n ... channel_close". A variant may quote a top-level string argument
// with another token (FunctionGemma's <escape>); strings inside lists and dicts keep the
// family's <|"|>, which the grammar and the value converter spell.
constexpr std::string_view gemma_fragment = R"({
  "reasoning": {"mode": "tag_based", "start": "${channel_open}thought", "end": "${channel_close}"},
  "tools": {"format": "tag_with_tagged", "call_start": "${call_open}", "name_prefix": "call:",
            "name_suffix": "{", "arg_name_suffix": ":", "arg_separator": ",", "args_end": "}",
            "call_end": "${call_close}", "values": "raw"},
  "markers": {"quote": "${quote}"},
  "preserved_tokens": ["${channel_open}", "${channel_close}", "${call_open}", "${call_close}",
                       "${turn}", "${quote}"]
})";

// Harmony's markers, and its recipient prefix (a literal, not a token).
std::vector<std::pair<std::string_view, std::string_view>> harmony_defaults(
    std::string_view recipient) {
  return {{"channel", "<|channel|>"},     {"message", "<|message|>"},
          {"start", "<|start|>"},         {"end", "<|end|>"},
          {"return", "<|return|>"},       {"call", "<|call|>"},
          {"constrain", "<|constrain|>"}, {"recipient", recipient}};
}

// Harmony's probes, with the call's recipient header as the template writes it.
std::vector<description_probe> harmony_probes(std::string_view call_header) {
  return {{probe_render::prompt, "${message}USER_QU1${end}${start}assistant", true},
          {probe_render::content_turn, "${channel}final${message}CONTENT_QC5", true},
          {probe_render::content_turn, "CONTENT_QC5${return}", false},
          {probe_render::call_turn, call_header, true},
          {probe_render::call_turn, "\"VAL_QV3\"}${call}", false},
          {probe_render::call_turn, "${constrain}json${message}", false}};
}

const std::vector<format_description>& rows() {
  static const std::vector<format_description> table = {
      {.name = "gpt-oss",
       .handler = "gpt-oss",
       .why = "the function name sits in a recipient header and every message opens a channel; "
              "the renders show one header order, the model writes either",
       .defaults = harmony_defaults(" to=functions."),
       .probes = harmony_probes(" to=functions.XYZZY_FN"),
       .fragment = harmony_fragment},
      {.name = "harmony-bare-recipient",
       .handler = "gpt-oss",
       .why = "harmony's channels and recipient headers, with a tool's name as the recipient "
              "(no functions. namespace)",
       .defaults = harmony_defaults(" to="),
       .probes = harmony_probes(" to=XYZZY_FN"),
       .fragment = harmony_fragment},
      {.name = "deepseek-v3.2-dsml",
       .handler = "deepseek-v3.2-dsml",
       .why = "each parameter says whether its value is raw text or JSON (string=\"true|false\"), "
              "which the renders of one string argument cannot show",
       .defaults = {{"calls_open", "<｜DSML｜function_calls>"},
                    {"calls_close", "</｜DSML｜function_calls>"},
                    {"invoke_open", "<｜DSML｜invoke"},
                    {"invoke_close", "</｜DSML｜invoke>"},
                    {"param_open", "<｜DSML｜parameter"},
                    {"param_close", "</｜DSML｜parameter>"},
                    {"family", "｜DSML｜"},
                    {"after_calls", ""}},
       .probes = {{probe_render::call_turn,
                   "${calls_open}\n${invoke_open} name=\"XYZZY_FN\">\n${param_open} "
                   "name=\"ARG_QX7\" string=\"true\">VAL_QV3${param_close}\n${invoke_close}\n"
                   "${calls_close}",
                   true},
                  // Markup the template writes right after the calls block (a tool-output
                  // opener): part of what the turn shows, so part of the block's end.
                  {probe_render::call_turn, "${calls_close}${after_calls}", false}},
       .fragment = dsml_fragment},
      {.name = "gemma-4",
       .handler = "gemma-4",
       .why = "argument strings are quoted with a token (<|\"|>, <escape>) and keys are bare, "
              "which no JSON or tagged syntax describes",
       .defaults = {{"call_open", "<|tool_call>"},
                    {"call_close", "<tool_call|>"},
                    {"channel_open", "<|channel>"},
                    {"channel_close", "<channel|>"},
                    {"turn", "<|turn>"},
                    {"quote", "<|\"|>"}},
       .probes = {{probe_render::call_turn,
                   "${call_open}call:XYZZY_FN{ARG_QX7:${quote}VAL_QV3${quote}}${call_close}", true},
                  {probe_render::prompt, "${turn}model", false},
                  {probe_render::prompt, "${channel_open}thought\n${channel_close}", false}},
       .fragment = gemma_fragment},
  };
  return table;
}

// A hole binds one markup token — "<...>" or "[...]", no whitespace and no bracket inside — or
// the opening part of a tag before its attributes ("<invoke" of '<invoke name="f">').
constexpr std::size_t kMaxToken = 64;

bool opens_token(char c) {
  return c == '<' || c == '[';
}
bool closes_token(char c) {
  return c == '>' || c == ']';
}
bool inside_token(char c) {
  return !opens_token(c) && !closes_token(c) && c != ' ' && c != '\t' && c != '\n' && c != '\r';
}

// A pattern split into literal text and hole names, in order.
struct piece {
  std::string_view text;
  bool hole = false;
};

std::vector<piece> split_pattern(std::string_view p) {
  std::vector<piece> out;
  std::size_t i = 0;
  while (i < p.size()) {
    const std::size_t h = p.find("${", i);
    if (h == std::string_view::npos) {
      out.push_back({p.substr(i)});
      break;
    }
    if (h > i) out.push_back({p.substr(i, h - i)});
    const std::size_t e = p.find('}', h);
    out.push_back({p.substr(h + 2, e - h - 2), true});
    i = e + 1;
  }
  return out;
}

// Matches pieces[k..] at text[at..], binding holes (undone on failure).
bool match_at(const std::vector<piece>& pieces, std::size_t k, std::string_view text,
              std::size_t at, marker_bindings& bound) {
  if (k == pieces.size()) return true;
  const piece& p = pieces[k];
  if (!p.hole || bound.contains(std::string(p.text))) {
    const std::string_view lit = p.hole ? std::string_view(bound.at(std::string(p.text))) : p.text;
    return text.substr(at, lit.size()) == lit &&
           match_at(pieces, k + 1, text, at + lit.size(), bound);
  }
  if (at >= text.size() || !opens_token(text[at])) return false;
  const std::string name(p.text);
  for (std::size_t e = at + 1; e < text.size() && e - at < kMaxToken; ++e) {
    const bool closes = closes_token(text[e]);
    if (closes || text[e] == ' ') {
      const std::size_t end = closes ? e + 1 : e;  // a whole token, or a tag's opening part
      bound[name] = std::string(text.substr(at, end - at));
      if (match_at(pieces, k + 1, text, end, bound)) return true;
      bound.erase(name);
      break;  // a token ends at its first closing bracket or space
    }
    if (!inside_token(text[e])) break;
  }
  return false;
}

// Substitutes bound holes in every string of a JSON fragment.
void substitute(json::value& j, const marker_bindings& bound) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
      const std::size_t h = s.find("${", i);
      const std::size_t e = h == std::string::npos ? h : s.find('}', h);
      if (e == std::string::npos) {
        out.append(s, i);
        break;
      }
      out.append(s, i, h - i);
      const auto it = bound.find(s.substr(h + 2, e - h - 2));
      out += it != bound.end() ? it->second : s.substr(h, e + 1 - h);
      i = e + 1;
    }
    j = out;
  } else if (j.is_structured()) {
    for (auto& child : j) substitute(child, bound);
  }
}

}  // namespace

const std::vector<format_description>& format_descriptions() {
  return rows();
}

const format_description* find_format_description(std::string_view name) {
  for (const auto& row : rows())
    if (row.name == name) return &row;
  return nullptr;
}

std::string format_description::marker(const analysis& a, const std::string& name) const {
  if (auto it = a.markers.find(name); it != a.markers.end() && !it->second.empty())
    return it->second;
  for (const auto& [hole, literal] : defaults)
    if (hole == name) return std::string(literal);
  return {};
}

bool bind_pattern(std::string_view pattern, std::string_view text, marker_bindings& bound) {
  const std::vector<piece> pieces = split_pattern(pattern);
  for (std::size_t at = 0; at < text.size(); ++at)
    if (match_at(pieces, 0, text, at, bound)) return true;
  return false;
}

description_renders render_for_descriptions(const probe_renderer& r, bool args_as_string,
                                            const std::vector<std::string>& turn_ends) {
  description_renders out;
  const json::value user = json::value::array({user_message()});
  const auto prompt = r.render(user, true, true);
  if (prompt) out.prompt = *prompt;
  // A turn as history renders it, from where the generation prompt ends.
  const auto turn = [&](const json::value& msg) -> std::string {
    const auto full = r.render(json::value::array({user_message(), msg}), true, false);
    if (!full || !prompt) return {};
    return full->substr(common_prefix_length(*prompt, *full));
  };
  out.content_turn = turn(assistant_content());
  out.call_turn = turn(assistant_calls(
      json::value::array({probe_call(probe::fn1, probe::id1, args1(), args_as_string)})));
  // What the model writes for the call ends where the turn does (after the call's name).
  const std::size_t name = out.call_turn.find(probe::fn1);
  out.call_turn = cut_turn_end(out.call_turn, name == std::string::npos ? 0 : name, turn_ends);
  return out;
}

std::string apply_format_description(const format_description& row,
                                     const description_renders* renders, analysis& out,
                                     marker_bindings* from_renders) {
  marker_bindings bound;
  if (renders) {
    for (const auto& p : row.probes) {
      const std::string& text = p.render == probe_render::prompt         ? renders->prompt
                                : p.render == probe_render::content_turn ? renders->content_turn
                                                                         : renders->call_turn;
      if (!bind_pattern(p.pattern, text, bound) && p.required)
        return "the pattern " + json::quote(p.pattern) + " is not in the template's " +
               std::string(probe_render_name(p.render));
    }
    if (from_renders) *from_renders = bound;
  }
  for (const auto& [hole, literal] : row.defaults) bound.emplace(hole, literal);
  json::value fragment = json::value::parse(row.fragment);
  substitute(fragment, bound);
  json::value j = out.to_json();
  j.merge_patch(fragment);
  auto filled = analysis::from_json(j);
  if (!filled) return filled.error().message;  // the table's own fragments are valid
  out = std::move(*filled);
  return {};
}

std::string_view probe_render_name(probe_render r) {
  switch (r) {
    case probe_render::prompt:
      return "prompt";
    case probe_render::content_turn:
      return "content turn";
    case probe_render::call_turn:
      return "call turn";
  }
  return "render";
}

}  // namespace chatpeg::chat::detail

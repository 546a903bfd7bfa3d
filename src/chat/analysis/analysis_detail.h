// Internals of template analysis shared by caps.cpp, diff.cpp, analysis*.cpp,
// dedicated_formats.cpp and fixups.cpp: the probe vocabulary (one place), the probe renderer,
// the diff split, the three differential stages, and the two tables.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/chat/analysis.h"
#include "chatpeg/jinja/jinja.h"
#include "chatpeg/json/json.h"

namespace chatpeg::chat {
class chat_template;
}

namespace chatpeg::chat::detail {

// ---- Probe vocabulary -----------------------------------------------------------------------
// Unusual tokens that never occur in template text, so finding one in a render means the
// template printed the probe value.
namespace probe {
inline constexpr std::string_view fn1 = "XYZZY_FN";
inline constexpr std::string_view fn2 = "PLUGH_FN";
inline constexpr std::string_view arg1 = "ARG_QX7";
inline constexpr std::string_view arg2 = "ARG_QZ9";
inline constexpr std::string_view val1 = "VAL_QV3";
inline constexpr std::string_view val2 = "VAL_QW4";
inline constexpr std::string_view val3 = "VAL_QY5";
inline constexpr std::string_view id1 = "QIDX7K9Z1";  // 9 alphanumerics: Mistral's id rule
inline constexpr std::string_view id2 = "QIDX7K9Z2";
inline constexpr std::string_view user = "USER_QU1";
inline constexpr std::string_view system = "SYSTEM_QS2";
inline constexpr std::string_view content = "CONTENT_QC5";
inline constexpr std::string_view reasoning = "REASON_QR8";
inline constexpr std::string_view tool_result = "RESULT_QT4";
}  // namespace probe

// Probe messages and tool list.
json::value probe_tools();
json::value user_message();
json::value system_message();
json::value tool_message(std::string_view id);
// A call of fn with the given arguments (object), as an object or a JSON string.
json::value probe_call(std::string_view fn, std::string_view id, const json::value& args,
                       bool args_as_string);
json::value args1();  // {arg1: val1}
json::value args2();  // {arg1: val1, arg2: val2}
// Assistant turns: the probe content as text; empty content with the given calls.
json::value assistant_content();
json::value assistant_calls(const json::value& calls);

// ---- Render decodings (render_decodings.cpp) --------------------------------------------------
// A template whose renders encode what the model writes (HTML-escaped arguments): the row
// names the evidence (empty: none) in the source and a call's render, and the decoding.
struct render_decoding {
  std::string_view name;
  std::string_view reads;  // what the analysis then reads, for `chatpeg analyze`
  std::function<std::string(std::string_view source, std::string_view call_render)> evidence;
  std::function<std::string(std::string_view)> decode;
};
const std::vector<render_decoding>& render_decodings();
const render_decoding* find_render_decoding(std::string_view name);
std::string decode_html_entities(std::string_view text);

// Renders probe conversations; a template that raises yields nullopt (it lacks whatever the
// probe exercised). Deterministic: the clock is fixed. Renders are memoized. One analysis uses
// one renderer on one thread.
class probe_renderer {
 public:
  probe_renderer(const jinja::program& prog, json::value special_tokens);
  // messages rendered with the probe tools (when with_tools) and extra template variables.
  std::optional<std::string> render(const json::value& messages, bool with_tools,
                                    bool add_generation_prompt,
                                    const json::value& extra = json::value::object()) const;
  // The text of an assistant turn: [user, turn] against [user, empty turn] (or [user]), starting
  // no earlier than the generation prompt ends. Empty when it does not render.
  std::string assistant_middle(const json::value& turn, bool with_tools) const;
  std::size_t renders() const { return renders_; }
  // Every render from now on is read through the decoding (nullptr: as rendered).
  void decode_with(const render_decoding* decoding) {
    decoding_ = decoding;
    cache_.clear();
  }

 private:
  const jinja::program& prog_;
  const render_decoding* decoding_ = nullptr;
  json::value special_tokens_;
  jinja::render_options options_;
  mutable std::size_t renders_ = 0;
  mutable std::map<std::string, std::optional<std::string>> cache_;  // request JSON -> render
};

// ---- Diffing --------------------------------------------------------------------------------
struct diff_split {
  std::string prefix;
  std::string suffix;
  std::string left;   // middle of a
  std::string right;  // middle of b
};

// Common prefix / suffix of a and b, kept off the inside of markup tokens ("<...>", "[...]")
// so a shared '<' never splits a marker between the prefix and a middle.
diff_split split_diff(std::string_view a, std::string_view b);
// Longest common prefix / suffix, with the same marker-boundary adjustment.
std::size_t common_prefix_length(std::string_view a, std::string_view b);
std::size_t common_suffix_length(std::string_view a, std::string_view b);
// A whitespace-trimmed copy.
std::string trimmed(std::string_view s);
// The first / last marker-like token of s: a "<...>" or "[...]" run (spaces allowed inside
// brackets), else a whitespace-delimited word.
std::string first_token(std::string_view s);
std::string last_token(std::string_view s);
// "<think>" -> "</think>", "[THINK]" -> "[/THINK]"; empty when t is not a tag.
std::string closing_of(std::string_view t);

// ---- Stages ---------------------------------------------------------------------------------
struct analysis_context {
  const probe_renderer& renderer;
  std::string_view source;
  bool args_as_string = false;  // render probe arguments as JSON strings (template prefers it)
  std::vector<std::string> turn_ends;  // end-of-turn markers (cut off tool-call middles)
  bool align_fresh_turn = false;       // analyze_options::align_fresh_turn
};

// End-of-turn markers of the template: what follows a plain content turn, the eos token, and
// the usual ones.
std::vector<std::string> find_turn_ends(const probe_renderer& r, const json::value& tokens);
// The end-of-turn and end-of-message markers common across model families (<|eot_id|>,
// <|eom_id|>, <|im_end|>, ...), after the ones a template's own renders show.
const std::vector<std::string>& usual_turn_ends();
// Cuts a tool-call middle at the first end-of-turn marker after position from.
std::string cut_turn_end(const std::string& middle, std::size_t from,
                         const std::vector<std::string>& turn_ends);

// prefer_string_args: set when arguments render correctly only as a JSON string.
template_caps probe_caps(const probe_renderer& r, bool& prefer_string_args);
void analyze_reasoning(const analysis_context& ctx, analysis& out);
void analyze_content(const analysis_context& ctx, analysis& out);
void analyze_tools(const analysis_context& ctx, analysis& out);
// A template that renders no assistant tool_calls but shows a call in its tools' system prompt
// ('<tool_call>{"name": ..., "arguments": ...}</tool_call>'): the tool syntax from that example,
// and a note quoting it (described_calls.cpp). False when the prompt shows no call.
bool describe_calls_from_prompt(const analysis_context& ctx, analysis& out);
// After the content stage: tools.content_gap, what a turn with content and a call writes
// between them beyond the content's own end marker.
void find_content_gap(const analysis_context& ctx, analysis& out);
// Every non-empty marker, whitespace-trimmed, deduplicated, in a stable order.
std::vector<std::string> collect_preserved_tokens(const analysis& a);

// ---- Tables ---------------------------------------------------------------------------------
struct dedicated_format {
  std::string_view name;
  std::function<bool(std::string_view source)> matches;
  std::function<void(std::string_view source, analysis& out)> describe;  // fills syntax + tokens
  // Text a generation prompt may end with that opens the output's syntax (functionary's
  // ">>>" before the recipient): the parser then reads it in front of the output.
  std::string_view prompt_opener = {};
};
const std::vector<dedicated_format>& dedicated_formats();
// The prompt_opener of the dedicated format named `handler` (empty for any other).
std::string_view dedicated_prompt_opener(std::string_view handler);

struct fixup {
  std::string_view name;
  std::function<bool(std::string_view source, const analysis& a)> applies;
  std::function<void(std::string_view source, analysis& a)> apply;
};
const std::vector<fixup>& fixups();

// Format descriptions (format_descriptions.cpp): formats written as data — probe patterns
// with ${hole}s for the markers and an analysis fragment using the same holes.
enum class probe_render : std::uint8_t { prompt, content_turn, call_turn };
std::string_view probe_render_name(probe_render r);

struct description_probe {
  probe_render render;
  std::string_view pattern;  // literal text (probe values included) and ${hole}s
  bool required = true;      // the row applies only when every required pattern is found
};

struct format_description {
  std::string_view name;     // shown by `chatpeg analyze`
  std::string_view handler;  // analysis.handler: the parser builder
  std::string_view why;      // what the renders alone cannot give
  // hole -> the family's literal (also holes no probe binds: a prefix such as " to=functions.")
  std::vector<std::pair<std::string_view, std::string_view>> defaults;
  std::vector<description_probe> probes;
  std::string_view fragment;  // analysis JSON (merged over the probed one), ${hole}s in strings
  // The marker `name` as the analysis binds it, else the family's literal.
  std::string marker(const analysis& a, const std::string& name) const;
};
const std::vector<format_description>& format_descriptions();
const format_description* find_format_description(std::string_view name);

// The probe renders the patterns are matched on: the prompt of a user message with the probe
// tools (generation prompt included), and a content turn and a one-call turn as history renders
// them, from where the generation prompt ends.
struct description_renders {
  std::string prompt;
  std::string content_turn;
  std::string call_turn;
};
// The call turn is cut at the first end-of-turn marker after the call's name.
description_renders render_for_descriptions(const probe_renderer& r, bool args_as_string,
                                            const std::vector<std::string>& turn_ends);

using marker_bindings = std::map<std::string, std::string>;
// Finds `pattern` in `text`: each unbound ${hole} binds one markup token ("<...>" or "[...]",
// no whitespace), a bound one must read its value. False (bindings unchanged) when absent.
bool bind_pattern(std::string_view pattern, std::string_view text, marker_bindings& bound);
// Fills `out` (its caps kept) from the row: holes bound from `renders` when given, the family's
// literals for the rest. Returns "" or why the row does not apply (a required pattern absent);
// `from_renders` receives what the renders bound.
std::string apply_format_description(const format_description& row,
                                     const description_renders* renders, analysis& out,
                                     marker_bindings* from_renders = nullptr);

// The whole pipeline: caps, dedicated table (unless dedicated_rows is false) or differential
// stages, fix-ups (unless fixups is false), tokens.
struct analyze_options {
  bool dedicated_rows = true;
  bool fixups = true;
  // Differential analysis: align the calls' opener and closer with a fresh turn
  // (align_with_fresh_turn); tried when the plain derivation does not read back.
  bool align_fresh_turn = false;
  // Instead of the dedicated table and the differential stages: this format description, its
  // markers bound from the template's renders. A row whose required patterns are not found
  // leaves the tool syntax empty and says why in tool_error.
  const format_description* description = nullptr;
};
analysis analyze(const jinja::program& prog, std::string_view source,
                 const json::value& special_tokens, analyze_options options = {});

// The verify stage (verify.cpp), run on a built template whose tool syntax was derived: the
// syntax must read back the template's own rendering of one call (and of two, when the template
// writes parallel calls). Returns "" when it does (or when the check does not apply), else why
// not; the caller records it as analysis.tool_error.
std::string verify_tool_syntax(const chat_template& t);

}  // namespace chatpeg::chat::detail

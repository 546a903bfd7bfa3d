// The verify stage of template analysis: a derived tool syntax must read back the template's
// own rendering of tool calls. Differential analysis infers markers from render diffs; when a
// template writes calls in a shape the stages misread (a call index glued to a marker, a
// separator placed before instead of after a call, ...), the derived parser would read every
// real call as plain content — the silent failure the analysis must not have. So the template
// renders an assistant turn with one probe call (and with two, when it writes parallel calls)
// through the same request path a user takes; the prompt ending in the generation prompt is cut
// off the front and the end-of-turn marker off the back; what remains is what the model writes,
// and the request's parser must match it completely, finding exactly the probe calls' names in
// order and no content. If it does not, the analysis records why in tool_error and tool requests
// fail with that error. Costs one prepare, three renders and two matches per template (once, at
// load).
#include <algorithm>
#include <string>
#include <vector>

#include "chat/analysis/analysis_detail.h"
#include "chatpeg/base/strings.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/peg/matcher.h"

namespace chatpeg::chat::detail {
namespace {

// The request for [user] + (when given) an assistant turn.
base::result<request> probe_request(const json::value& turn, bool generation_prompt) {
  json::value messages = json::value::array({user_message()});
  if (!turn.is_null()) messages.push_back(turn);
  json::value body = {{"messages", messages},
                      {"tools", probe_tools()},
                      {"tool_choice", "auto"},
                      {"parallel_tool_calls", true},
                      {"add_generation_prompt", generation_prompt}};
  return request::from_json(body);
}

std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 160;
  if (text.size() <= kMax) return json::quote(text);
  return json::quote(text.substr(0, kMax)) + " (" + std::to_string(text.size()) + " bytes)";
}

// Text as the analysis reads the template's renders (decoded, for a template whose renders
// encode what the model writes).
std::string as_read(const chat_template& t, std::string text) {
  const render_decoding* d = find_render_decoding(t.analysis().render_decoding);
  return d != nullptr ? d->decode(text) : text;
}

// The request's prompt as the template renders it (no parser built: only the prompt is
// needed), as the analysis reads it.
base::result<std::string> render_prompt(const chat_template& t, const request& req) {
  auto vars = template_variables(t, req);
  if (!vars) return vars.error();
  (*vars)["add_generation_prompt"] = req.add_generation_prompt;
  auto text = t.render_request(*vars);
  if (!text) return text;
  return as_read(t, std::move(*text));
}

// "" when the parser reads `output` as exactly the calls named in `names` and, as content,
// `content` (its text with the surrounding whitespace trimmed; empty: no content), else why not.
// `lead` goes between the parse prefix and the output (a reasoning end marker, for history
// turns that were rendered without reasoning); text read as content there is not the output's.
std::string check_output(const prepared& p, std::string_view output,
                         const std::vector<std::string_view>& names, std::string_view lead = {},
                         std::string_view content = {}) {
  const std::string input = p.parse_prefix + std::string(lead) + std::string(output);
  const std::size_t output_at = p.parse_prefix.size() + lead.size();
  peg::matcher m(*p.parser);
  const peg::match_result r = m.match(input, peg::match_flags::complete);
  const std::string what = std::to_string(names.size()) + " call" + (names.size() > 1 ? "s" : "");
  if (!r.ok()) {
    const std::size_t at = r.error.where.offset >= output_at ? r.error.where.offset - output_at : 0;
    return "the derived parser does not read the template's own rendering of " + what + " " +
           excerpt(output) + " (at byte " + std::to_string(at) + ": " + r.error.message + ")";
  }
  std::vector<std::string> found;
  std::string text, reasoning;  // what the parser reads as content and reasoning in the output
  for (const auto& n : r.ast.nodes()) {
    if (n.tag == peg::tag::tool_name) {
      found.push_back(r.ast.text(n, input));
    } else if (n.tag == peg::tag::content && n.end > output_at) {
      text += r.ast.text(n, input);
    } else if (n.tag == peg::tag::reasoning && n.end > output_at) {
      reasoning += r.ast.text(n, input);
    }
  }
  // A template may write a call turn's text as its reasoning (gpt-oss's analysis channel).
  const bool as_reasoning =
      !content.empty() && base::trim(text).empty() && base::trim(reasoning) == content;
  if (base::trim(text) != content && !as_reasoning) {
    if (content.empty()) {
      return "the derived parser reads part of the template's own rendering of " + what + " " +
             excerpt(output) + " as content: " + excerpt(text);
    }
    return "the derived parser reads the template's own rendering of content and " + what + " " +
           excerpt(output) + " with the content " + excerpt(text) + ", not " + excerpt(content);
  }
  if (found != std::vector<std::string>(names.begin(), names.end())) {
    std::string got;
    for (const auto& f : found) got += (got.empty() ? "" : ", ") + json::quote(f);
    return "the derived parser reads the template's own rendering of " + what + " " +
           excerpt(output) + " as calls [" + got + "]";
  }
  return {};
}

// Where the template renders history differently from a fresh turn, what the model writes
// cannot be cut out of the render exactly (cutting at the common prefix with the prompt
// misreads real templates), but the calls are still in it: between the part the call turn
// shares with a content turn and the part they share at the end. The parser must read exactly
// the probe calls from some token boundary in that region up to the region's end or a marker
// after the last call (the history may add a tool-response opener there), the reasoning block
// the prompt opens closed first when the history leaves it out. A weaker check than the one
// above (the text around the calls is not checked), which still turns "calls silently read
// as content" into an explicit error.
std::string find_calls_in_history(const prepared& p, const analysis& a, const std::string& full,
                                  const std::string& text_turn,
                                  const std::vector<std::string_view>& names,
                                  const std::vector<std::string>& turn_ends) {
  // Bounds for an untrusted template (each trial is a full match of the region): the ends
  // after the last call, and trials in all.
  constexpr std::size_t kMaxRegion = 4096;
  constexpr std::size_t kMaxEnds = 8;
  constexpr std::size_t kMaxTrials = 512;
  const std::size_t head = common_prefix_length(full, text_turn);
  const std::size_t tail = std::min(common_suffix_length(full, text_turn), full.size() - head);
  std::string region = full.substr(head, full.size() - head - tail);
  const std::size_t last = region.rfind(names.back());
  if (last == std::string::npos || region.size() > kMaxRegion) return {};
  const std::size_t after_last = last + names.back().size();
  region = cut_turn_end(region, after_last, turn_ends);
  std::vector<std::size_t> ends = {region.size()};
  for (std::size_t k = after_last; k < region.size() && ends.size() < kMaxEnds; ++k)
    if (region[k] == '<' || region[k] == '[') ends.push_back(k);
  std::vector<std::string_view> leads = {""};
  if (!a.reasoning.end.empty()) leads.push_back(a.reasoning.end);
  std::string first_why;
  std::size_t trials = 0;
  for (std::size_t i = 0; i <= last && trials < kMaxTrials; ++i) {
    const char c = region[i];
    const char before = i == 0 ? ' ' : region[i - 1];
    const bool boundary =
        c == '<' || c == '[' || before == '>' || before == ']' || before == '\n' || before == ' ';
    if (!boundary) continue;
    for (std::size_t end : ends) {
      for (std::string_view lead : leads) {
        ++trials;
        std::string why = check_output(p, std::string_view(region).substr(i, end - i), names, lead);
        if (why.empty()) return {};
        if (first_why.empty()) first_why = std::move(why);
      }
    }
  }
  return "(history renders differently from a fresh turn) " + first_why;
}

// Content and a call in one turn: what the model writes between them (the content turn's end
// and a new turn's header, where a template writes them as separate messages) must not be read
// as content, nor the content as anything else. Checked where the turn continues the prompt and
// the template renders both.
std::string verify_content_and_call(const chat_template& t, const prepared& gen,
                                    const std::string& text_turn,
                                    const std::vector<std::string>& turn_ends) {
  json::value turn =
      assistant_calls(json::value::array({probe_call(probe::fn1, probe::id1, args1(), true)}));
  turn["content"] = std::string(probe::content);
  auto req = probe_request(turn, false);
  if (!req) return {};
  auto full = render_prompt(t, *req);
  const std::string prompt = as_read(t, gen.prompt);
  if (!full || !full->starts_with(prompt)) return {};
  std::string output = full->substr(prompt.size());
  const std::size_t text_at = output.find(probe::content);
  const std::size_t last = output.rfind(probe::fn1);
  if (text_at == std::string::npos || last == std::string::npos || last < text_at) return {};
  const std::size_t from = last + probe::fn1.size();
  const std::size_t tail = std::min(common_suffix_length(output, text_turn), output.size() - from);
  output = cut_turn_end(output.substr(0, output.size() - tail), from, turn_ends);
  std::string why = check_output(gen, output, {probe::fn1}, {}, probe::content);
  // A history turn rendered without the reasoning block the prompt opens: closed first.
  if (const std::string& end = t.analysis().reasoning.end; !why.empty() && !end.empty()) {
    if (check_output(gen, output, {probe::fn1}, end, probe::content).empty()) return {};
  }
  return why;
}

}  // namespace

std::string verify_tool_syntax(const chat_template& t) {
  auto gen_req = probe_request(json::value(), true);
  if (!gen_req) return {};
  auto gen = prepare(t, *gen_req, {.build_gbnf = false});
  // A template that cannot prepare the probe request is reported by prepare() itself when a
  // user's request reaches the same point; there is nothing to read back here.
  if (!gen || !gen->parser) return {};
  // What follows an assistant turn (the end-of-turn marker and whatever the template adds
  // after it) is what a plain content turn ends with too: the common suffix is cut off.
  auto text_req = probe_request(assistant_content(), false);
  if (!text_req) return {};
  auto text_turn = render_prompt(t, *text_req);
  if (!text_turn) return {};
  probe_renderer renderer(t.program(), t.special_tokens());
  renderer.decode_with(find_render_decoding(t.analysis().render_decoding));
  const std::string prompt = as_read(t, gen->prompt);
  const std::vector<std::string> turn_ends = find_turn_ends(renderer, t.special_tokens());

  struct trial {
    std::vector<std::string_view> names;
    json::value calls;
  };
  std::vector<trial> trials;
  trials.push_back(
      {{probe::fn1}, json::value::array({probe_call(probe::fn1, probe::id1, args1(), true)})});
  if (t.caps().supports_parallel_tool_calls) {
    trials.push_back({{probe::fn1, probe::fn2},
                      json::value::array({probe_call(probe::fn1, probe::id1, args1(), true),
                                          probe_call(probe::fn2, probe::id2, args2(), true)})});
  }
  for (const auto& tr : trials) {
    auto full_req = probe_request(assistant_calls(tr.calls), false);
    if (!full_req) continue;
    auto full = render_prompt(t, *full_req);
    // The rendered turn continues the prompt, or the template renders history differently
    // from a fresh turn (it leaves out an empty thinking block the generation prompt closes,
    // drops earlier parts): then the calls are looked for in the render (weaker check).
    if (!full) continue;
    if (!full->starts_with(prompt)) {
      if (auto why =
              find_calls_in_history(*gen, t.analysis(), *full, *text_turn, tr.names, turn_ends);
          !why.empty())
        return why;
      continue;
    }
    std::string output = full->substr(prompt.size());
    const std::size_t last = output.rfind(tr.names.back());
    if (last == std::string::npos) continue;  // the template does not print the call
    const std::size_t from = last + tr.names.back().size();
    const std::size_t tail =
        std::min(common_suffix_length(output, *text_turn), output.size() - from);
    output = cut_turn_end(output.substr(0, output.size() - tail), from, turn_ends);
    if (auto why = check_output(*gen, output, tr.names); !why.empty()) return why;
  }
  return verify_content_and_call(t, *gen, *text_turn, turn_ends);
}

}  // namespace chatpeg::chat::detail

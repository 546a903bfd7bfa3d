// Differential stages one and two: reasoning markers and content markers.
// Reasoning: an assistant turn with vs without reasoning_content (plain, then with tool calls
// for templates that only render reasoning next to calls), and the generation prompt with
// enable_thinking true vs false. Content: a plain content turn vs a tool-call-only turn; the
// content is wrapped when paired markers enclose it in the content side's middle.
#include <algorithm>

#include "chat/analysis/analysis_detail.h"

namespace chatpeg::chat::detail {
namespace {

json::value assistant_with(const json::value& fields) {
  json::value m = {{"role", "assistant"}};
  for (auto it = fields.begin(); it != fields.end(); ++it) m[it.key()] = it.value();
  return m;
}

// Finds the markers around the reasoning probe in the middle of b.
bool markers_around(const std::string& a, const std::string& b, std::string& start,
                    std::string& end) {
  diff_split d = split_diff(a, b);
  std::size_t k = d.right.find(probe::reasoning);
  if (k == std::string::npos) return false;
  start = trimmed(std::string_view(d.right).substr(0, k));
  end = trimmed(std::string_view(d.right).substr(k + probe::reasoning.size()));
  if (end.empty()) return false;
  // The opener may sit in the common prefix when both renders open a (possibly empty) block.
  if (start.empty()) {
    std::string candidate = last_token(d.prefix);
    if (!candidate.empty() && closing_of(candidate) == first_token(end)) start = candidate;
  }
  // Keep only the marker adjacent to the reasoning (the middle may hold more of the turn).
  if (!start.empty()) start = last_token(start);
  end = first_token(end);
  return !end.empty();
}

}  // namespace

void analyze_reasoning(const analysis_context& ctx, analysis& out) {
  const probe_renderer& r = ctx.renderer;
  json::value user = user_message();
  std::string start, end;

  auto plain = r.render(
      json::value::array({user, assistant_with({{"content", std::string(probe::content)}})}), false,
      false);
  auto with_r =
      r.render(json::value::array(
                   {user, assistant_with({{"content", std::string(probe::content)},
                                          {"reasoning_content", std::string(probe::reasoning)}})}),
               false, false);
  if (plain && with_r && markers_around(*plain, *with_r, start, end)) {
    out.reasoning = {reasoning_mode::tag_based, start, end};
  } else {
    json::value call = probe_call(probe::fn1, probe::id1, args1(), ctx.args_as_string);
    json::value calls = json::value::array({call});
    auto c0 = r.render(
        json::value::array({user, assistant_with({{"content", ""}, {"tool_calls", calls}})}), true,
        false);
    auto c1 = r.render(
        json::value::array(
            {user, assistant_with({{"content", ""},
                                   {"tool_calls", calls},
                                   {"reasoning_content", std::string(probe::reasoning)}})}),
        true, false);
    if (c0 && c1 && markers_around(*c0, *c1, start, end))
      out.reasoning = {reasoning_mode::tools_only, start, end};
  }

  // Generation prompt with thinking on vs off: an empty reasoning block ("<think>\n\n</think>")
  // on the "off" side reveals the markers of templates that never render reasoning_content.
  json::value user_only = json::value::array({user});
  auto on = r.render(user_only, false, true, {{"enable_thinking", true}});
  auto off = r.render(user_only, false, true, {{"enable_thinking", false}});
  if (out.reasoning.mode == reasoning_mode::none && on && off && *on != *off) {
    std::string tail = trimmed(*off);
    std::string e = last_token(tail);
    if (e.size() > 3 && (e.rfind("</", 0) == 0 || e.rfind("[/", 0) == 0)) {
      std::string s = std::string(1, e[0]) + e.substr(2);
      std::string before = trimmed(std::string_view(tail).substr(0, tail.size() - e.size()));
      if (before.size() >= s.size() && before.compare(before.size() - s.size(), s.size(), s) == 0)
        out.reasoning = {reasoning_mode::tag_based, s, e};
    }
  }
  // The same with markers that are not a tag and its closer ("<|START_THINKING|>
  // <|END_THINKING|>"): the "off" prompt adds exactly two marker tokens to the "on" prompt.
  if (out.reasoning.mode == reasoning_mode::none && on && off && off->starts_with(*on)) {
    const std::string extra = trimmed(std::string_view(*off).substr(on->size()));
    const std::string s = first_token(extra);
    const std::string e = trimmed(std::string_view(extra).substr(s.size()));
    const auto is_marker = [](const std::string& t) {
      return t.size() > 2 && (t.front() == '<' || t.front() == '[') &&
             (t.back() == '>' || t.back() == ']');
    };
    if (is_marker(s) && is_marker(e) && first_token(e) == e && s != e)
      out.reasoning = {reasoning_mode::tag_based, s, e};
  }
  // A history turn that starts with an empty block ("<think></think>answer"): the template
  // keeps the block and drops its text (Kimi K2 Thinking, for the last turn).
  if (out.reasoning.mode == reasoning_mode::none && plain) {
    const std::size_t k = plain->rfind(probe::content);
    const std::string before = k == std::string::npos ? "" : trimmed(plain->substr(0, k));
    const std::string e = last_token(before);
    const std::string s =
        last_token(trimmed(std::string_view(before).substr(0, before.size() - e.size())));
    if (!s.empty() && closing_of(s) == e) out.reasoning = {reasoning_mode::tag_based, s, e};
  }
  // A generation prompt that always opens reasoning ("...<think>\n") whose closing tag the
  // template knows.
  if (out.reasoning.mode == reasoning_mode::none) {
    for (const auto& gp : {r.render(user_only, false, true), on}) {
      if (!gp) continue;
      std::string s = last_token(*gp);
      std::string e = closing_of(s);
      if (!e.empty() && ctx.source.find(e) != std::string_view::npos) {
        out.reasoning = {reasoning_mode::tag_based, s, e};
        break;
      }
    }
  }
}

void analyze_content(const analysis_context& ctx, analysis& out) {
  const probe_renderer& r = ctx.renderer;
  json::value user = user_message();
  json::value calls =
      json::value::array({probe_call(probe::fn1, probe::id1, args1(), ctx.args_as_string)});
  auto a = r.render(
      json::value::array({user, assistant_with({{"content", std::string(probe::content)}})}), true,
      false);
  auto b =
      r.render(json::value::array({user, assistant_with({{"content", ""}, {"tool_calls", calls}})}),
               true, false);
  if (!a || !b) return;
  diff_split d = split_diff(*a, *b);
  std::size_t k = d.left.find(probe::content);
  if (k == std::string::npos) return;
  std::string before = trimmed(std::string_view(d.left).substr(0, k));
  std::string after = trimmed(std::string_view(d.left).substr(k + probe::content.size()));
  if (before.empty()) return;
  std::string s = last_token(before), e = first_token(after);
  // An end-of-turn token after the content is the turn's end, not a content closer.
  if (std::find(ctx.turn_ends.begin(), ctx.turn_ends.end(), e) != ctx.turn_ends.end()) e.clear();
  if (s.empty() || s == e) return;
  if (s == out.reasoning.end || s == out.reasoning.start) return;
  bool tagged = (s[0] == '<' || s[0] == '[') && (e.empty() || e[0] == '<' || e[0] == '[');
  if (!tagged) return;
  out.content = {s, e};
}

}  // namespace chatpeg::chat::detail

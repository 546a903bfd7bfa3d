// prepare(): everything one chat completion needs. The prompt is the template rendered with
// the generation prompt — or, for continue_final_message, rendered with the final assistant
// message and cut where that message's text ends (its end-of-turn suffix dropped), like
// transformers' continue_final_message. The generation prompt is what the assistant header
// adds (render with add_generation_prompt minus render without, as the reference computes
// it; for a continued message: the prompt minus the rendered history). parse_prefix is the
// tail of the generation prompt the parser must read: from the reasoning start marker when
// the prompt opens (or holds) reasoning, else the prefilled text of a continued message.
#include <algorithm>
#include <string>

#include "chat/analysis/analysis_detail.h"
#include "chat/parser_gen/parser_gen_internal.h"
#include "chat/request/variables.h"
#include "chatpeg/chat/parser_gen.h"
#include "chatpeg/chat/prepare.h"

namespace chatpeg::chat {
namespace {

constexpr std::string_view continue_sentinel = "<<chatpeg-continue-7f3a9c>>";

std::size_t common_prefix(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// b minus its common prefix with a.
std::string tail_after(std::string_view a, std::string_view b) {
  return std::string(b.substr(common_prefix(a, b)));
}

// Renders template variables with the generation prompt on or off (the variables keep the
// flag); every render reads the request's tools where they are.
struct renderer {
  const chat_template& tmpl;
  const json::value* tools;
  base::result<std::string> operator()(json::value& v, bool generation_prompt) const {
    v["add_generation_prompt"] = generation_prompt;
    return tmpl.render_request(v, tools);
  }
};

// The prompt and what it says about the answer's start.
struct rendered {
  std::string prompt;
  std::string generation_prompt;
  std::string prefill;       // text of a continued message that the parser reads
  std::string history_text;  // the history rendered without a generation prompt
};

// continue_final_message: `vars` rendered up to where the final message's text ends;
// `continued` is the history (vars without that message).
base::result<rendered> render_continued(const chat_template& tmpl, const request& req,
                                        const json::value& vars, json::value& continued,
                                        const renderer& render) {
  rendered r;
  std::string& prompt = r.prompt;
  std::string& generation_prompt = r.generation_prompt;
  std::string& prefill = r.prefill;
  std::string& history_text = r.history_text;

  auto& messages = continued["messages"];
  if (messages.empty()) {
    return base::make_error(base::errc::invalid_argument, "no message to continue",
                            {.path = "$.continue_final_message"});
  }
  json::value last = messages.back();
  messages.erase(messages.size() - 1);
  auto base_text = render(continued, false);
  if (!base_text) return base_text.error();
  history_text = *base_text;
  auto header_text = render(continued, true);
  if (!header_text) return header_text.error();
  const std::string header = tail_after(*base_text, *header_text);

  const char* field =
      req.continue_final_message == continue_mode::reasoning ? "reasoning_content" : "content";
  std::string text;
  if (const auto f = last.find(field); f != last.end() && f->is_string()) {
    text = f->get<std::string>();
  } else if (f != last.end() && f->is_array()) {
    for (const auto& part : *f) {
      if (part.is_object() && part.value("type", "") == "text") text += part.value("text", "");
    }
  }
  last[field] = text + std::string(continue_sentinel);
  json::value marked = vars;
  marked["messages"].back() = last;
  auto full = render(marked, false);
  if (!full) {
    // A template may refuse an assistant turn with reasoning only (Ministral: "must have
    // content"); a reasoning continuation then opens the block after the header below.
    if (req.continue_final_message != continue_mode::reasoning) return full.error();
    full = std::string();
  }
  std::size_t cut = full->rfind(continue_sentinel);
  const analysis& an = tmpl.analysis();
  // For a template that drops the final message's reasoning: the reasoning start marker
  // unless the new-turn header already opens the block ("<｜Assistant｜><think>").
  const auto opener = [&]() {
    const std::string_view core = detail::marker_core(an.reasoning.start);
    const std::string_view head = detail::marker_core(header);
    const bool opened = !core.empty() && head.size() >= core.size() &&
                        head.substr(head.size() - core.size()) == core;
    return opened ? std::string() : an.reasoning.start;
  };
  if (cut == std::string::npos && req.continue_final_message == continue_mode::reasoning &&
      !an.reasoning.start.empty() && !header.empty()) {
    // The template drops reasoning: continue from the new-turn header, the block opened
    // with the analysis' start marker, as the reference does.
    *full = *header_text + opener() + text + std::string(continue_sentinel);
    cut = full->rfind(continue_sentinel);
  }
  if (cut == std::string::npos && req.continue_final_message == continue_mode::reasoning &&
      !an.reasoning.start.empty()) {
    // No header either: open the block after the template's own message header.
    json::value bare = last;
    bare.erase("reasoning_content");
    bare["content"] = std::string(continue_sentinel);
    marked["messages"].back() = bare;
    full = render(marked, false);
    if (!full) return full.error();
    cut = full->rfind(continue_sentinel);
    if (cut != std::string::npos) {
      *full = full->substr(0, cut) + tmpl.analysis().reasoning.start + text +
              std::string(continue_sentinel);
      cut = full->rfind(continue_sentinel);
    }
  }
  if (cut == std::string::npos) {
    return base::make_error(base::errc::template_error,
                            std::string("the template does not render the final assistant "
                                        "message's ") +
                                field + ", so it cannot be continued");
  }
  prompt = full->substr(0, cut);
  // A template that drops the final message's reasoning: write it with the analysis'
  // markers in front of the prefilled content after the new-turn header, as the reference
  // does (the template's history form of the turn may hold an empty block instead).
  const std::string reasoning = last.value("reasoning_content", json::value("")).is_string()
                                    ? last.value("reasoning_content", std::string())
                                    : std::string();
  if (req.continue_final_message == continue_mode::content && !reasoning.empty() &&
      an.reasoning.mode != reasoning_mode::none && !an.reasoning.end.empty() &&
      prompt.find(reasoning, base_text->size()) == std::string::npos) {
    if (!header.empty()) {
      prompt = *header_text + opener() + reasoning + an.reasoning.end + text;
    } else {
      json::value bare = last;
      bare.erase("reasoning_content");
      bare["content"] = std::string(continue_sentinel);
      json::value again = vars;
      again["messages"].back() = bare;
      auto plain = render(again, false);
      if (!plain) return plain.error();
      if (const std::size_t at = plain->rfind(continue_sentinel); at != std::string::npos) {
        prompt = plain->substr(0, at) + an.reasoning.start + reasoning + an.reasoning.end + text;
      }
    }
  }
  generation_prompt = tail_after(*base_text, prompt);
  if (generation_prompt.compare(0, header.size(), header) == 0) {
    prefill = generation_prompt.substr(header.size());
  } else if (generation_prompt.size() >= text.size() &&
             generation_prompt.compare(generation_prompt.size() - text.size(), text.size(), text) ==
                 0) {
    prefill = text;
  }
  return r;
}

// What the parser reads in front of the output: the tail of the generation prompt from the
// reasoning start marker, what follows the assistant header for reasoning without a start
// marker, a family's prompt opener, else the prefilled text of a continued message.
std::string parse_prefix_of(const analysis& a, const rendered& r, const json::value& history,
                            const renderer& render) {
  const std::string& generation_prompt = r.generation_prompt;
  const std::string& history_text = r.history_text;
  std::string parse_prefix = r.prefill;
  const std::string_view start = detail::marker_core(a.reasoning.start);
  if (a.reasoning.mode != reasoning_mode::none && !start.empty()) {
    if (const auto pos = generation_prompt.find(start); pos != std::string::npos) {
      parse_prefix = generation_prompt.substr(pos);
    }
  }
  if (a.reasoning.mode != reasoning_mode::none && start.empty() && !a.reasoning.end.empty() &&
      !generation_prompt.empty()) {
    // Reasoning without a start marker begins right after the assistant header: the part of
    // the generation prompt an assistant turn in the history shares. What follows it
    // (Apriel's "Here are my reasoning steps:\n", or a continued turn's reasoning) is read.
    json::value turn = history;
    turn["messages"].push_back({{"role", "assistant"},
                                {"content", std::string(continue_sentinel)},
                                {"reasoning_content", std::string(continue_sentinel)}});
    if (auto text = render(turn, false)) {
      const std::string turn_text = tail_after(history_text, *text);
      const std::size_t header = common_prefix(generation_prompt, turn_text);
      if (header > 0 && header < generation_prompt.size()) {
        parse_prefix = generation_prompt.substr(header);
      }
    }
  }
  const std::string_view opener = detail::dedicated_prompt_opener(a.handler);
  if (parse_prefix.empty() && !opener.empty() && generation_prompt.ends_with(opener)) {
    parse_prefix = opener;
  }
  return parse_prefix;
}

}  // namespace

base::result<prepared> prepare(const chat_template& tmpl, const request& req,
                               const prepare_options& options) {
  // The variables without the tools: every render reads the request's tools where they are.
  auto vars = detail::template_variables_without_tools(tmpl, req);
  if (!vars) return vars.error();
  // (A "tools" the variables do carry, from chat_template_kwargs, wins as it would there.)
  const renderer render{tmpl, req.has_tools() && !vars->contains("tools") ? &req.tools : nullptr};

  // The conversation before the answer: the variables, or for a continued message a copy
  // without that message.
  const bool continuing = req.continue_final_message != continue_mode::none;
  json::value continued;
  if (continuing) continued = *vars;
  const json::value& history = continuing ? continued : *vars;
  rendered r;
  if (continuing) {
    auto c = render_continued(tmpl, req, *vars, continued, render);
    if (!c) return c.error();
    r = std::move(*c);
  } else {
    auto with = render(*vars, true);
    if (!with) return with.error();
    auto without = render(*vars, false);
    if (!without) return without.error();
    r.prompt = req.add_generation_prompt ? *with : *without;
    if (req.add_generation_prompt) r.generation_prompt = tail_after(*without, *with);
    r.history_text = *without;
  }

  const std::string parse_prefix = parse_prefix_of(tmpl.analysis(), r, history, render);

  auto out = generate(
      tmpl.analysis(), req,
      {.parse_prefix = parse_prefix, .build_gbnf = options.build_gbnf, .stats = options.stats});
  if (!out) return out.error();
  out->prompt = std::move(r.prompt);
  out->generation_prompt = std::move(r.generation_prompt);
  return out;
}

}  // namespace chatpeg::chat

// chat_template::create: parses the Jinja source once, probes capabilities and analyses the
// output syntax (or takes a loaded analysis), verifies a derived tool syntax against the
// template's own rendering of calls, and freezes the result. The object is immutable
// afterwards, so any number of threads may share it. render_context renders raw variables.
#include "chatpeg/chat/template.h"

#include <optional>
#include <vector>

#include "chat/analysis/analysis_detail.h"
#include "chatpeg/jinja/jinja.h"

namespace chatpeg::chat {

// Analyses the template and verifies its tool syntax (it must read back the template's own
// calls). Dedicated rows and fix-ups are chosen by predicates on the source, so a template of
// another family that happens to match one (or a variant with other markers) may be misread
// by it; and differential analysis reads its markers off render diffs, which leave out what an
// empty turn renders too. So the candidates are tried in order — as analysed, without the row,
// without the fix-ups, differential with its markers aligned to a fresh turn — and the first
// that reads back the calls is kept (with a note saying so). Last come the format
// descriptions (formats written as data), each with its markers bound from the template's own
// renders. When none does, the first candidate stays, with its error: tool requests fail
// naming the stage.
void chat_template::choose_analysis(chat_template& t) {
  const detail::analyze_options candidates[] = {
      {},
      {.dedicated_rows = false},
      {.dedicated_rows = false, .fixups = false},
      {.dedicated_rows = false, .align_fresh_turn = true}};
  std::optional<chat::analysis> first;
  // Analyses with options, verifies, and keeps the result when it reads back the calls.
  const auto try_candidate = [&](const detail::analyze_options& options) {
    t.analysis_ = detail::analyze(*t.program_, t.source_, t.special_tokens_, options);
    const bool has_syntax =
        t.analysis_.tools.format != tool_format::none || !t.analysis_.handler.empty();
    if (has_syntax) {
      if (std::string why = detail::verify_tool_syntax(t); !why.empty())
        t.analysis_.tool_error = "tool-call stage 'verify': " + why;
    }
    return has_syntax && t.analysis_.tool_error.empty();
  };
  const auto failed_first = [&] {
    const std::string what = !first->handler.empty()
                                 ? "the dedicated format '" + first->handler + "'"
                             : !first->fixups.empty() ? std::string("the fix-ups")
                                                      : std::string("differential analysis");
    return what + " did not read back the template's own calls (" + first->tool_error + ")";
  };
  for (const auto& options : candidates) {
    // A candidate that is the first one again (no row, or no fix-ups, to leave out) is skipped.
    if (first && !options.align_fresh_turn &&
        ((first->handler.empty() && options.fixups) ||
         (first->handler.empty() && first->fixups.empty()))) {
      continue;
    }
    const bool verified = try_candidate(options);
    if (!first) {
      // Nothing to verify, or verified: as analysed.
      const bool has_syntax =
          t.analysis_.tools.format != tool_format::none || !t.analysis_.handler.empty();
      if (!has_syntax || verified) return;
      first = std::move(t.analysis_);
      continue;
    }
    if (verified) {
      t.analysis_.note =
          failed_first() + "; differential analysis" + (options.fixups ? "" : " without fix-ups") +
          (options.align_fresh_turn ? " with its markers aligned to a fresh turn" : "") + " did";
      return;
    }
  }
  // The format descriptions, each with its markers bound from the template's own renders.
  for (const auto& row : detail::format_descriptions()) {
    if (try_candidate({.description = &row})) {
      t.analysis_.note = failed_first() + "; " + t.analysis_.note;
      return;
    }
  }
  t.analysis_ = std::move(*first);
}

void template_options::override_bos_eos(const std::optional<std::string>& bos,
                                        const std::optional<std::string>& eos) {
  if (bos) special_tokens["bos_token"] = *bos;
  if (eos) special_tokens["eos_token"] = *eos;
}

base::result<std::shared_ptr<const chat_template>> chat_template::create(std::string source,
                                                                         template_options options) {
  auto prog = jinja::parse_template(source, {.file = options.file});
  if (!prog) return std::move(prog).error();
  if (!options.special_tokens.is_object())
    return base::make_error(base::errc::invalid_argument, "special tokens must be a JSON object",
                            {.path = "$"});
  auto t = std::shared_ptr<chat_template>(new chat_template());
  t->source_ = std::move(source);
  t->program_ = std::move(*prog);
  t->special_tokens_ = std::move(options.special_tokens);
  if (options.analysis_override) {
    t->analysis_ = std::move(*options.analysis_override);
    t->analysis_.source = analysis_source::loaded;
  } else {
    choose_analysis(*t);
  }
  return std::shared_ptr<const chat_template>(std::move(t));
}

base::result<std::string> chat_template::render_context(
    const json::value& variables, const jinja::render_options& options) const {
  if (!variables.is_object())
    return base::make_error(base::errc::invalid_argument,
                            "template variables must be a JSON object", {.path = "$"});
  return jinja::render(*program_, jinja::make_chat_context(variables, special_tokens_), options);
}

base::result<std::string> chat_template::render_request(
    const json::value& variables, const jinja::render_options& options) const {
  return render_request(variables, nullptr, options);
}

base::result<std::string> chat_template::render_request(
    const json::value& variables, const json::value* tools,
    const jinja::render_options& options) const {
  if (!variables.is_object())
    return base::make_error(base::errc::invalid_argument,
                            "template variables must be a JSON object", {.path = "$"});
  // The context refers to the request's JSON (no copy of its messages and tools).
  std::vector<jinja::context_entry> ctx = jinja::chat_context_entries(variables, special_tokens_);
  for (auto& e : ctx) {
    if (tools != nullptr && e.name == "tools") e.value = tools;
  }
  std::erase_if(ctx, [&](const jinja::context_entry& e) {
    if (e.name == "tools") return tools == nullptr && !variables.contains(e.name);
    return e.name == "documents" && !variables.contains(e.name);
  });
  auto out = jinja::render(*program_, ctx, options);
  if (out || options.compat) return out;
  // The reference's engine is more permissive than transformers' sandbox (mutable lists,
  // `tools | map(...) | tojson`): a request the strict render refuses gets the compatibility
  // environment before the error is reported.
  jinja::render_options compat = options;
  compat.compat = true;
  if (auto retry = jinja::render(*program_, ctx, compat)) return retry;
  return out;
}

}  // namespace chatpeg::chat

// A chat template compiled once: the parsed Jinja program, its special tokens, its
// capabilities and its analysis. Immutable and shareable across threads.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/analysis.h"
#include "chatpeg/jinja/jinja.h"
#include "chatpeg/json/json.h"

namespace chatpeg::chat {

struct template_options {
  std::string file;                                    // for error locations
  json::value special_tokens = json::value::object();  // bos_token, eos_token, ...
  // Use this analysis instead of analysing (loaded from `--analysis FILE`).
  std::optional<analysis> analysis_override;

  // Puts the bos / eos tokens given (a user's --bos / --eos) in place of the file's.
  void override_bos_eos(const std::optional<std::string>& bos,
                        const std::optional<std::string>& eos);
};

class chat_template {
 public:
  // Parses the source, probes capabilities and analyses the output syntax. A template whose
  // tool syntax cannot be determined still loads (analysis().tool_error says why); a template
  // that does not parse is an error.
  static base::result<std::shared_ptr<const chat_template>> create(std::string source,
                                                                   template_options options = {});

  const std::string& source() const { return source_; }
  const jinja::program& program() const { return *program_; }
  const json::value& special_tokens() const { return special_tokens_; }
  const chat::analysis& analysis() const { return analysis_; }
  const template_caps& caps() const { return analysis_.caps; }

  // Renders raw template variables (special tokens merged under them, tools/documents
  // defaulting to None) — the `chatpeg render --context` path.
  // options carries limits and the strftime_now clock (`--now`).
  base::result<std::string> render_context(const json::value& variables,
                                           const jinja::render_options& options = {}) const;

  // Renders the variables of a request (template_variables / prepare): like render_context,
  // but `tools` and `documents` stay undefined when the variables do not carry them, as the
  // reference implementation renders requests (templates such as Hermes 2 Pro tool_use loop
  // over `tools` unconditionally, which None would break). A render the strict sandbox refuses
  // is retried in jinja's compatibility environment (render_options::compat), as permissive as
  // the reference's engine, before its error is returned.
  base::result<std::string> render_request(const json::value& variables,
                                           const jinja::render_options& options = {}) const;
  // The same with `tools` given apart (as if variables["tools"] were *tools), read where it is:
  // prepare() renders a request several times without copying its tools into the variables.
  base::result<std::string> render_request(const json::value& variables, const json::value* tools,
                                           const jinja::render_options& options = {}) const;

 private:
  static void choose_analysis(chat_template& t);  // analysis + verify, with fallbacks

  std::string source_;
  std::shared_ptr<const jinja::program> program_;
  json::value special_tokens_;
  chat::analysis analysis_;
};

}  // namespace chatpeg::chat

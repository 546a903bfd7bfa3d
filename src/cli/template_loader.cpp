// Loading a chat template for the CLI: picks the source kind (.jinja, tokenizer_config.json,
// GGUF), applies --bos/--eos over the file's special tokens, and loads an analysis override.
#include "cli/template_loader.h"

#include <iostream>
#include <iterator>

#include "chatpeg/base/file.h"
#include "chatpeg/jinja/source.h"
#include "cli/commands.h"

namespace chatpeg::cli {

void add_template_options(CLI::App* sub, template_args& args, template_option_flags flags) {
  auto* opt = sub->add_option("--template", args.path,
                              "chat template: .jinja, tokenizer_config.json or .gguf");
  if (flags.required) opt->required();
  sub->add_option("--template-name", args.name,
                  "named template variant in tokenizer_config/GGUF (default: default)");
  sub->add_option("--bos", args.bos, "bos_token (default: from the template file)");
  sub->add_option("--eos", args.eos, "eos_token (default: from the template file)");
  if (flags.with_analysis) {
    sub->add_option("--analysis", args.analysis,
                    "use this analysis (from `chatpeg analyze --json`) instead of analysing");
  }
}

std::optional<json::value> read_json_file(const std::string& path, int& code) {
  auto text = base::read_file(path);
  if (!text) {
    report(text.error());
    code = exit_usage;
    return std::nullopt;
  }
  auto v = json::parse(*text, {.file = path});
  if (!v) {
    report(v.error());
    code = exit_usage;
    return std::nullopt;
  }
  return std::move(*v);
}

std::string read_stdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

std::shared_ptr<const chat::chat_template> load_chat_template(const template_args& args,
                                                              int& code) {
  auto src = jinja::load_template_source(args.path, {.name = args.name});
  if (!src) {
    base::error e = std::move(src).error();
    if (e.where.file.empty()) e.where.file = args.path;
    code = report(e);
    return nullptr;
  }
  chat::template_options options;
  options.file = args.path;
  options.special_tokens = src->special_tokens;
  options.override_bos_eos(args.bos, args.eos);
  if (!args.analysis.empty()) {
    auto j = read_json_file(args.analysis, code);
    if (!j) return nullptr;
    auto a = chat::analysis::from_json(*j);
    if (!a) {
      base::error e = std::move(a).error();
      e.where.file = args.analysis;
      report(e);
      code = exit_usage;
      return nullptr;
    }
    options.analysis_override = std::move(*a);
  }
  auto t = chat::chat_template::create(std::move(src->source), std::move(options));
  if (!t) {
    code = report(t.error());
    if (code == exit_usage) code = exit_failed;  // the file was read: the template failed
    return nullptr;
  }
  return std::move(*t);
}

}  // namespace chatpeg::cli

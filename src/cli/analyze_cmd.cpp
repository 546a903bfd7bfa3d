// `chatpeg analyze`: what a template's output syntax is (handler or differential analysis,
// reasoning, content and tool-call markers, preserved tokens, capabilities), as readable
// text or, with --json, as one JSON object that --analysis FILE loads back; with
// --response-template, the Hugging Face response template that describes that output.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/response_cmd.h"
#include "cli/template_loader.h"

namespace chatpeg::cli {
namespace {

struct analyze_args {
  template_args tmpl;
  bool json = false;
  bool response_template = false;
};

int run_analyze(const analyze_args& args) {
  int code = exit_ok;
  auto tmpl = load_chat_template(args.tmpl, code);
  if (!tmpl) return code;
  if (args.response_template) return run_write_response_template(*tmpl);
  if (args.json) {
    std::cout << json::dump(tmpl->analysis().to_json()) << '\n';
  } else {
    std::cout << tmpl->analysis().summary();
  }
  return exit_ok;
}

}  // namespace

void register_analyze(CLI::App& app) {
  auto args = std::make_shared<analyze_args>();
  CLI::App* sub = app.add_subcommand("analyze",
                                     "show how a template writes reasoning, content "
                                     "and tool calls");
  add_template_options(sub, args->tmpl, {});
  auto* as_json = sub->add_flag("--json", args->json, "print the analysis as one JSON object");
  sub->add_flag("--response-template", args->response_template,
                "print a Hugging Face response template describing the template's output")
      ->excludes(as_json);
  sub->callback([args] { set_exit_code(run_analyze(*args)); });
}

}  // namespace chatpeg::cli

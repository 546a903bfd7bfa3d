// `chatpeg analyze`: what a template's output syntax is (handler or differential analysis,
// reasoning, content and tool-call markers, preserved tokens, capabilities), as readable
// text or, with --json, as one JSON object that --analysis FILE loads back; with
// --response-template, the Hugging Face response template that describes that output. The
// summary ends with how the response template the file ships (if any) agrees with the
// analysis; --check-response-template RT.json reports that for any response template.
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
  std::string check;  // --check-response-template RT.json
};

int run_analyze(const analyze_args& args) {
  int code = exit_ok;
  auto tmpl = load_chat_template(args.tmpl, code);
  if (!tmpl) return code;
  if (args.response_template) return run_write_response_template(*tmpl);
  if (!args.check.empty()) {
    auto rt = load_response_template(args.check, code);
    if (!rt) return code;
    return run_cross_check(*tmpl, rt);
  }
  if (args.json) {
    std::cout << json::dump(tmpl->analysis().to_json()) << '\n';
  } else {
    std::cout << tmpl->analysis().summary();
    print_shipped_check(*tmpl, args.tmpl);
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
  sub->add_option("--check-response-template", args->check,
                  "read a response template (or a tokenizer_config.json holding one) against "
                  "the analysis on the template's own probe outputs; JSON report, exit 1 when "
                  "they disagree")
      ->excludes(as_json);
  sub->callback([args] { set_exit_code(run_analyze(*args)); });
}

}  // namespace chatpeg::cli

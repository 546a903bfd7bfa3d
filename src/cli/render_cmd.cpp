// `chatpeg render`: renders a template with raw variables (--context, exactly what
// render_ref.py takes) or an OpenAI chat request (--request, with the generation prompt).
// Prints the text with no added newline; template errors exit 1.
#include <iostream>
#include <memory>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/jinja/jinja.h"
#include "cli/commands.h"
#include "cli/template_loader.h"

namespace chatpeg::cli {
namespace {

struct render_args {
  template_args tmpl;
  std::string context;
  std::string request;
  std::string special_tokens;
  std::string now;
};

int run_render(const render_args& args) {
  int code = exit_ok;
  if (args.context.empty() == args.request.empty()) {
    report("render: give exactly one of --context or --request", "command line");
    return exit_usage;
  }
  jinja::render_options options;
  if (!args.now.empty()) {
    auto clock = jinja::fixed_clock(args.now);
    if (!clock) {
      report(clock.error());
      return exit_usage;
    }
    options.now = *clock;
  }
  auto tmpl = load_chat_template(args.tmpl, code);
  if (!tmpl) return code;

  json::value variables;
  if (!args.context.empty()) {
    auto ctx = read_json_file(args.context, code);
    if (!ctx) return code;
    if (!ctx->is_object()) {
      base::location where;
      where.file = args.context;
      where.path = "$";
      report(
          base::make_error(base::errc::invalid_argument, "context must be a JSON object", where));
      return exit_usage;
    }
    variables = std::move(*ctx);
    if (!args.special_tokens.empty()) {
      auto special = read_json_file(args.special_tokens, code);
      if (!special) return code;
      if (!special->is_object()) {
        report("--special-tokens must be a JSON object", args.special_tokens);
        return exit_usage;
      }
      for (const auto& [k, v] : special->items()) {
        if (!variables.contains(k)) variables[k] = v;  // the context's own keys win
      }
    }
  } else {
    auto body = read_json_file(args.request, code);
    if (!body) return code;
    auto req = chat::request::from_json(*body);
    if (!req) {
      base::error e = std::move(req).error();
      e.where.file = args.request;
      report(e);
      return exit_usage;
    }
    auto vars = chat::template_variables(*tmpl, *req);
    if (!vars) return report(vars.error());
    variables = std::move(*vars);
  }
  auto text = tmpl->render_context(variables, options);
  if (!text) {
    report(text.error());
    return exit_failed;
  }
  std::cout << *text << std::flush;
  return exit_ok;
}

}  // namespace

void register_render(CLI::App& app) {
  auto args = std::make_shared<render_args>();
  CLI::App* sub = app.add_subcommand("render", "render a chat template");
  add_template_options(sub, args->tmpl, {});
  sub->add_option("--context", args->context, "JSON object of template variables");
  sub->add_option("--request", args->request, "OpenAI chat request JSON");
  sub->add_option("--special-tokens", args->special_tokens,
                  "flat JSON object merged under the context");
  sub->add_option("--now", args->now, "freeze strftime_now, e.g. 2025-03-14T09:26:53");
  sub->callback([args] { set_exit_code(run_render(*args)); });
}

}  // namespace chatpeg::cli

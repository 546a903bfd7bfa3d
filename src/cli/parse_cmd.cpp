// `chatpeg parse`: parses a raw model output (stdin) for a request into the final assistant
// message (one JSON object), or with --partial the message parsed so far from a prefix of a
// response that is still streaming. An output that does not match exits 1 with the byte
// offset and what was expected.
#include <iostream>
#include <memory>

#include "chatpeg/stream/parse.h"
#include "cli/commands.h"
#include "cli/request_loader.h"
#include "cli/template_loader.h"

namespace chatpeg::cli {
namespace {

struct parse_args {
  template_args tmpl;
  std::string request;
  bool partial = false;
};

int run_parse(const parse_args& args) {
  int code = exit_ok;
  auto tmpl = load_chat_template(args.tmpl, code);
  if (!tmpl) return code;
  auto req = load_request(args.request, code);
  if (!req) return code;
  auto prepared = prepare_request(*tmpl, *req, false, code);
  if (!prepared) return code;
  const std::string output = read_stdin();
  auto msg = stream::parse(*prepared, output, {.partial = args.partial});
  if (!msg) {
    base::error e = std::move(msg).error();
    e.where.file = "stdin";
    report(e);
    return exit_failed;
  }
  std::cout << json::dump(msg->to_json()) << '\n';
  return exit_ok;
}

}  // namespace

void register_parse(CLI::App& app) {
  auto args = std::make_shared<parse_args>();
  CLI::App* sub = app.add_subcommand("parse", "parse a model output (stdin) into a message");
  add_template_options(sub, args->tmpl, {.with_analysis = true});
  sub->add_option("--request", args->request, "OpenAI chat request JSON")->required();
  sub->add_flag("--partial", args->partial, "stdin is a prefix of a still-streaming response");
  sub->callback([args] { set_exit_code(run_parse(*args)); });
}

}  // namespace chatpeg::cli

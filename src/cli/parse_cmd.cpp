// `chatpeg parse`: parses a raw model output (stdin) for a request into the final assistant
// message (one JSON object), or with --partial the message parsed so far from a prefix of a
// response that is still streaming (a call whose arguments are incomplete is shown with the
// arguments received so far, closed into a JSON object), or with --stream feeds the output to
// a stream::session in chunks and prints every OpenAI delta, then the finish reason and the
// final message (README.md, "The command"). An output that does not match exits 1 with the byte
// offset and what was expected. With a Hugging Face response template (--response-template, or
// --output-format response-template for the one the template file ships) the output is parsed
// by that template instead, with no chat template needed (cli/response_cmd.h).
#include <iostream>
#include <memory>

#include "chatpeg/base/file.h"
#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"
#include "cli/commands.h"
#include "cli/parse_output.h"
#include "cli/request_loader.h"
#include "cli/response_cmd.h"
#include "cli/template_loader.h"

namespace chatpeg::cli {
namespace {

struct parse_args {
  template_args tmpl;
  response_args response;
  std::string request;
  bool partial = false;
  bool stream = false;
  std::size_t chunk = 4;
};

// --stream: one JSON line per delta, then {"finish_reason", "message"} (print_stream).
int run_stream(const chat::prepared& prepared, const std::string& output, std::size_t chunk) {
  stream::session s(prepared);
  return print_stream(s, output, chunk);
}

// The chat template and request of the flags, prepared (no grammar); reported on failure.
std::optional<chat::prepared> load_and_prepare(const parse_args& args, int& code) {
  auto tmpl = load_chat_template(args.tmpl, code);
  if (!tmpl) return std::nullopt;
  auto req = load_request(args.request, code);
  if (!req) return std::nullopt;
  return prepare_request(*tmpl, *req, false, code);
}

// Parsing with a response template: the prefix is --prefix-file, else the prompt rendered from
// --template and --request when both are given; --request supplies the tools for casting.
int run_response(const parse_args& args, const response::template_ptr& rt) {
  int code = exit_ok;
  if (args.partial && args.response.raw) {
    return report(base::make_error(base::errc::invalid_argument,
                                   "--partial prints the OpenAI message so far; it does not "
                                   "combine with --raw (use --raw --stream for the events)"));
  }
  response::parse_options options;
  if (!args.response.prefix_file.empty()) {
    auto text = base::read_file(args.response.prefix_file);
    if (!text) return report(text.error());
    options.prefix = std::move(*text);
  }
  if (!args.request.empty()) {
    auto body = read_json_file(args.request, code);
    if (!body) return code;
    if (auto tools = body->find("tools"); tools != body->end() && tools->is_array()) {
      options.tools = *tools;
    }
    if (!args.tmpl.path.empty() && args.response.prefix_file.empty()) {
      auto prepared = load_and_prepare(args, code);
      if (!prepared) return code;
      options.prefix = prepared->prompt;
    }
  }
  return run_response_parse(rt, options, read_stdin(),
                            {.raw = args.response.raw,
                             .stream = args.stream,
                             .chunk = args.chunk,
                             .partial = args.partial});
}

int run_parse(const parse_args& args) {
  int code = exit_ok;
  auto rt = choose_response_template(args.response, args.tmpl, code);
  if (code != exit_ok) return code;
  if (rt) return run_response(args, rt);
  if (args.request.empty()) {
    return report(base::make_error(base::errc::invalid_argument,
                                   "--request is required with a chat template"));
  }
  if (args.response.raw) {
    return report(
        base::make_error(base::errc::invalid_argument, "--raw needs a response template"));
  }
  auto prepared = load_and_prepare(args, code);
  if (!prepared) return code;
  const std::string output = read_stdin();
  if (args.stream) return run_stream(*prepared, output, args.chunk);
  auto msg = stream::parse(*prepared, output, {.partial = args.partial});
  if (!msg) return fail_on_output(std::move(msg).error());
  print_message(std::move(*msg));
  return exit_ok;
}

}  // namespace

void register_parse(CLI::App& app) {
  auto args = std::make_shared<parse_args>();
  CLI::App* sub = app.add_subcommand("parse", "parse a model output (stdin) into a message");
  add_template_options(sub, args->tmpl, {.with_analysis = true, .required = false});
  sub->add_option("--request", args->request,
                  "OpenAI chat request JSON (required with a chat template; with a response "
                  "template it supplies tools for casting)");
  add_response_parse_options(sub, args->response);
  auto* partial =
      sub->add_flag("--partial", args->partial, "stdin is a prefix of a still-streaming response");
  auto* streamed = sub->add_flag("--stream", args->stream,
                                 "feed stdin to a streaming session: one JSON line per delta");
  sub->add_option("--chunk", args->chunk, "--stream chunk size in bytes (0 = all at once)")
      ->needs(streamed);
  partial->excludes(streamed);
  sub->callback([args] { set_exit_code(run_parse(*args)); });
}

}  // namespace chatpeg::cli

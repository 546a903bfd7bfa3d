// `chatpeg serve`: the OpenAI-compatible gateway (CLI.md, DESIGN.md §10). Loads the template
// (.jinja, tokenizer_config.json or GGUF), analyses it once, and serves /v1/chat/completions
// in front of a raw completion backend until SIGINT/SIGTERM.
#include <csignal>
#include <iostream>
#include <memory>
#include <string>

#include "chatpeg/chat/template.h"
#include "chatpeg/jinja/source.h"
#include "chatpeg/server/gateway.h"
#include "cli/commands.h"

namespace chatpeg::cli {
namespace {

struct serve_args {
  std::string template_path;
  std::string template_name;
  std::string backend = "http://127.0.0.1:8080";
  std::string backend_type = "llamacpp";
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string model_name = "chatpeg";
  std::size_t threads = 8;
  std::size_t max_body_bytes = 8u << 20;
  int backend_timeout = 600;
  std::string log_format = "text";
};

server::gateway* running_gateway = nullptr;

extern "C" void on_signal(int) {
  if (running_gateway != nullptr) running_gateway->stop();
}

int run_serve(const serve_args& args) {
  auto src = jinja::load_template_source(args.template_path, {.name = args.template_name});
  if (!src) return report(src.error());
  auto tmpl = chat::chat_template::create(
      std::move(src->source), {.file = args.template_path, .special_tokens = src->special_tokens});
  if (!tmpl) return report(tmpl.error());
  if (!(*tmpl)->analysis().tool_error.empty()) {
    std::cerr << "chatpeg: warning: tool calling unavailable with this template: "
              << (*tmpl)->analysis().tool_error << "\n";
  }
  const auto type = server::parse_backend_type(args.backend_type);
  if (!type) return report("unknown --backend-type " + args.backend_type, "llamacpp|openai");
  server::log_format log = server::log_format::text;
  if (args.log_format == "json") log = server::log_format::json;
  if (args.log_format == "none") log = server::log_format::none;

  auto g = server::gateway::create(
      *tmpl, {.server = {.host = args.host,
                         .port = args.port,
                         .model_name = args.model_name,
                         .threads = args.threads,
                         .max_body_bytes = args.max_body_bytes,
                         .log = log},
              .backend = {.type = *type,
                          .url = args.backend,
                          .read_timeout = std::chrono::seconds(args.backend_timeout)}});
  if (!g) return report(g.error());
  if (auto st = (*g)->bind(); !st) return report(st.error());
  std::cerr << "chatpeg: serving http://" << args.host << ":" << (*g)->port() << " → "
            << args.backend_type << " backend " << args.backend << "\n";
  running_gateway = g->get();
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  auto st = (*g)->listen();
  running_gateway = nullptr;
  if (!st) return report(st.error());
  return exit_ok;
}

}  // namespace

void register_serve(CLI::App& app) {
  auto args = std::make_shared<serve_args>();
  auto* cmd = app.add_subcommand("serve",
                                 "OpenAI-compatible gateway in front of a raw "
                                 "completion backend");
  cmd->add_option("--template", args->template_path, ".jinja, tokenizer_config.json or GGUF file")
      ->required();
  cmd->add_option("--template-name", args->template_name, "template variant (tool_use, ...)");
  cmd->add_option("--backend", args->backend, "backend base URL")->capture_default_str();
  cmd->add_option("--backend-type", args->backend_type, "llamacpp | openai")->capture_default_str();
  cmd->add_option("--host", args->host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", args->port, "port to listen on (0 = any)")->capture_default_str();
  cmd->add_option("--model-name", args->model_name, "model id reported to clients")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "worker threads (concurrent requests)")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", args->max_body_bytes, "request body limit")
      ->capture_default_str();
  cmd->add_option("--backend-timeout", args->backend_timeout,
                  "seconds of backend silence before giving up")
      ->capture_default_str();
  cmd->add_option("--log-format", args->log_format, "text | json | none")->capture_default_str();
  cmd->callback([args] { set_exit_code(run_serve(*args)); });
}

}  // namespace chatpeg::cli

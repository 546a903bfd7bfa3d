// `chatpeg serve`: the OpenAI-compatible gateway (README.md, "The command"). Loads the template
// (.jinja, tokenizer_config.json or GGUF), analyses it once, and serves /v1/chat/completions
// in front of a raw completion backend until SIGINT/SIGTERM. Every server and backend limit of
// gateway_options is a flag, range-checked by CLI11 (a bad value is a usage error, exit 2).
#include <chrono>
#include <csignal>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "chatpeg/chat/template.h"
#include "chatpeg/jinja/source.h"
#include "chatpeg/response/response.h"
#include "chatpeg/server/gateway.h"
#include "cli/commands.h"
#include "cli/response_cmd.h"

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
  std::string log_format = "text";
  std::vector<std::string> api_keys;
  std::string api_key_file;
  response_args response;  // --response-template, --output-format
  // Defaults from the library's options, so the CLI and the library cannot drift apart.
  server::server_options server;
  server::backend_options backend_limits;
};

server::gateway* running_gateway = nullptr;

extern "C" void on_signal(int) {
  if (running_gateway != nullptr) running_gateway->stop();
}

// The response template the gateway reads output with (null: chatpeg's own parser). Under
// auto, a template whose tool syntax chatpeg cannot analyse uses the response template its
// file ships, when it ships one.
response::template_ptr serve_response_template(const serve_args& args,
                                               const chat::chat_template& tmpl,
                                               const std::string& shipped, int& code) {
  const template_args files{.path = args.template_path, .name = args.template_name};
  auto rt = choose_response_template(args.response, files, code);
  if (rt || code != exit_ok || args.response.format != output_format::automatic) return rt;
  if (tmpl.analysis().tool_error.empty() || shipped.empty()) return nullptr;
  auto t = response::response_template::from_text(shipped);
  if (!t) {
    std::cerr << "chatpeg: warning: the shipped response template does not load: "
              << t.error().to_string() << "\n";
    return nullptr;
  }
  std::cerr << "chatpeg: reading model output with the response template the model ships\n";
  return std::move(*t);
}

int run_serve(const serve_args& args) {
  auto src = jinja::load_template_source(args.template_path, {.name = args.template_name});
  if (!src) return report(src.error());
  auto tmpl = chat::chat_template::create(
      std::move(src->source), {.file = args.template_path, .special_tokens = src->special_tokens});
  if (!tmpl) return report(tmpl.error());
  int code = exit_ok;
  auto rt = serve_response_template(args, **tmpl, src->response_template, code);
  if (code != exit_ok) return code;
  if (!(*tmpl)->analysis().tool_error.empty() && !rt) {
    std::cerr << "chatpeg: warning: tool calling unavailable with this template: "
              << (*tmpl)->analysis().tool_error << "\n";
  }
  // Checked by CLI11 (IsMember) before this runs.
  const auto type =
      server::parse_backend_type(args.backend_type).value_or(server::backend_type::llamacpp);
  server::gateway_options options{
      .server = args.server, .backend = args.backend_limits, .response_template = rt};
  options.server.host = args.host;
  options.server.port = args.port;
  options.server.model_name = args.model_name;
  options.server.log = args.log_format == "json"   ? server::log_format::json
                       : args.log_format == "none" ? server::log_format::none
                                                   : server::log_format::text;
  options.backend.type = type;
  options.backend.url = args.backend;
  options.server.api_keys = args.api_keys;
  if (!args.api_key_file.empty()) {
    auto keys = server::read_api_key_file(args.api_key_file);
    if (!keys) return report(keys.error());
    options.server.api_keys.insert(options.server.api_keys.end(), keys->begin(), keys->end());
  }
  const std::size_t key_count = options.server.api_keys.size();

  auto g = server::gateway::create(*tmpl, std::move(options));
  if (!g) return report(g.error());
  if (auto st = (*g)->bind(); !st) return report(st.error());
  std::cerr << "chatpeg: serving http://" << args.host << ":" << (*g)->port() << " → "
            << args.backend_type << " backend " << args.backend
            << (key_count ? " (API keys: " + std::to_string(key_count) + ")" : std::string())
            << "\n";
  running_gateway = g->get();
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  auto st = (*g)->listen();
  running_gateway = nullptr;
  if (!st) return report(st.error());
  return exit_ok;
}

constexpr std::int64_t max_seconds = 7 * 24 * 3600;

// A duration flag in whole seconds, 1 s .. a week.
void add_seconds(CLI::App& cmd, const std::string& name, std::chrono::seconds& value,
                 const std::string& help) {
  cmd.add_option_function<std::int64_t>(
         name, [&value](const std::int64_t& s) { value = std::chrono::seconds(s); }, help)
      ->check(CLI::Range(std::int64_t{1}, max_seconds))
      ->default_str(std::to_string(value.count()));
}

// A count flag in [lo, hi].
void add_count(CLI::App& cmd, const std::string& name, std::size_t& value, std::size_t lo,
               std::size_t hi, const std::string& help) {
  cmd.add_option(name, value, help)->check(CLI::Range(lo, hi))->capture_default_str();
}

// The connection and backend limits (server_options / backend_options, gateway.h).
void add_limit_options(CLI::App& cmd, serve_args& args) {
  auto& so = args.server;
  add_count(cmd, "--threads", so.threads, 1, 4096, "worker threads (concurrent requests)");
  add_count(cmd, "--max-queued-requests", so.max_queued_requests, 0, 1u << 20,
            "complete requests waiting for a worker (0 = 4 x threads); more get 503");
  add_count(cmd, "--max-connections", so.max_connections, 1, 1u << 20,
            "open client connections; more get 503 and are closed");
  add_count(cmd, "--max-connections-per-client", so.max_connections_per_client, 0, 1u << 20,
            "open connections from one client address (0 = no limit); more get 503 and are "
            "closed");
  add_count(cmd, "--max-tools", so.request_limits.max_tools, 1, 1u << 20,
            "tools in one request (400 beyond)");
  add_count(cmd, "--max-schema-bytes", so.request_limits.max_schema_bytes, 64, 1u << 30,
            "one tool's parameters schema, serialized (400 beyond)");
  add_count(cmd, "--max-schema-depth", so.request_limits.max_schema_depth, 1, 64,
            "nesting of one tool's parameters schema (400 beyond)");
  add_count(cmd, "--max-tools-bytes", so.request_limits.max_tools_bytes, 64, 1u << 30,
            "all tools of one request, serialized (400 beyond)");
  add_count(cmd, "--max-body-bytes", so.max_body_bytes, 1, std::size_t{1} << 40,
            "request body limit (413 beyond)");
  add_count(cmd, "--max-head-bytes", so.max_head_bytes, 1024, 16u << 20,
            "request line + headers limit (431 beyond)");
  add_count(cmd, "--max-request-line", so.max_request_line, 256, 16u << 20,
            "request line limit (414 beyond)");
  add_seconds(cmd, "--write-timeout", so.client_write_timeout,
              "seconds a write to a client may make no progress");
  add_seconds(cmd, "--write-budget", so.client_write_budget,
              "seconds a response may wait in all for a client that reads slowly");
  add_seconds(cmd, "--request-deadline", so.request_deadline,
              "seconds for a whole request (head + body) to arrive (408 beyond)");
  add_seconds(cmd, "--keep-alive-timeout", so.keep_alive_timeout,
              "idle seconds between requests on one connection");
  add_count(cmd, "--keep-alive-max", so.keep_alive_max_requests, 1, 1u << 20,
            "requests on one connection");
  add_seconds(cmd, "--backend-timeout", args.backend_limits.read_timeout,
              "seconds of backend silence before giving up");
  add_seconds(cmd, "--backend-connect-timeout", args.backend_limits.connect_timeout,
              "seconds to connect to the backend");
  add_seconds(cmd, "--backend-deadline", args.backend_limits.deadline,
              "seconds a whole backend request may take (504 beyond; default: no limit)");
  add_count(cmd, "--backend-max-bytes", args.backend_limits.max_response_bytes, 1024,
            std::size_t{1} << 40, "backend answer limit (completion text, one SSE event)");
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
  cmd->add_option("--backend-type", args->backend_type, "llamacpp | openai")
      ->check(CLI::IsMember({"llamacpp", "openai"}))
      ->capture_default_str();
  cmd->add_option("--host", args->host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", args->port, "port to listen on (0 = any)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--model-name", args->model_name, "model id reported to clients")
      ->capture_default_str();
  cmd->add_option("--log-format", args->log_format, "text | json | none")
      ->check(CLI::IsMember({"text", "json", "none"}))
      ->capture_default_str();
  cmd->add_option("--api-key", args->api_keys,
                  "API key clients must send (repeatable; every endpoint but /health)");
  cmd->add_option("--api-key-file", args->api_key_file,
                  "file of API keys, one per line ('#' comments and blank lines skipped)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--metrics", args->server.metrics,
                "serve GET /metrics (Prometheus text; behind the API keys when set)");
  cmd->add_option("--response-template", args->response.path,
                  "read model output with this response template (a template object or a "
                  "tokenizer_config.json holding one)")
      ->check(CLI::ExistingFile);
  add_output_format_option(cmd, args->response.format,
                           "auto (--response-template when given; else chatpeg's analysis, or "
                           "the shipped response template when the tool syntax is unknown), "
                           "template, response-template (given or shipped)");
  add_limit_options(*cmd, *args);
  cmd->callback([args] { set_exit_code(run_serve(*args)); });
}

}  // namespace chatpeg::cli

// Request loading and preparation for the CLI (see request_loader.h).
#include "cli/request_loader.h"

#include "cli/commands.h"
#include "cli/template_loader.h"

namespace chatpeg::cli {

std::optional<chat::request> load_request(const std::string& path, int& code) {
  auto body = read_json_file(path, code);
  if (!body) return std::nullopt;
  auto req = chat::request::from_json(*body);
  if (!req) {
    base::error e = std::move(req).error();
    e.where.file = path;
    report(e);
    code = exit_usage;
    return std::nullopt;
  }
  return std::move(*req);
}

std::optional<chat::prepared> prepare_request(const chat::chat_template& tmpl,
                                              const chat::request& req, bool build_gbnf,
                                              int& code) {
  auto p = chat::prepare(tmpl, req, {.build_gbnf = build_gbnf});
  if (!p) {
    code = report(p.error());
    return std::nullopt;
  }
  return std::move(*p);
}

}  // namespace chatpeg::cli

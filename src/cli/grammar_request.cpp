// `chatpeg grammar --template T --request R [--json]`: the GBNF that constrains decoding
// for a request; with --json also laziness, triggers, preserved tokens, stops and the
// generation prompt (README.md, "The command").
#include <iostream>

#include "cli/commands.h"
#include "cli/grammar_request.h"
#include "cli/request_loader.h"

namespace chatpeg::cli {
namespace {

json::value trigger_json(const chat::grammar_trigger& t) {
  json::value j = json::value::object();
  switch (t.type) {
    case chat::trigger_type::word:
      j["type"] = "word";
      j["value"] = t.value;
      break;
    case chat::trigger_type::pattern:
      j["type"] = "pattern";
      j["value"] = t.value;
      break;
    case chat::trigger_type::pattern_full:  // must match the whole output so far
      j["type"] = "pattern";
      j["value"] = "^(?:" + t.value + ")$";
      break;
    case chat::trigger_type::token:
      j["type"] = "token";
      j["value"] = t.value;
      break;
  }
  return j;
}

}  // namespace

int run_grammar_request(const template_args& tmpl_args, const std::string& request_path,
                        bool as_json) {
  int code = exit_ok;
  auto tmpl = load_chat_template(tmpl_args, code);
  if (!tmpl) return code;
  auto req = load_request(request_path, code);
  if (!req) return code;
  auto p = prepare_request(*tmpl, *req, true, code);
  if (!p) return code;
  if (!as_json) {
    std::cout << p->gbnf;
    return exit_ok;
  }
  json::value out = json::value::object();
  out["gbnf"] = p->gbnf;
  out["lazy"] = p->grammar_lazy;
  out["triggers"] = json::value::array();
  for (const auto& t : p->triggers) out["triggers"].push_back(trigger_json(t));
  out["preserved_tokens"] = p->preserved_tokens;
  out["stops"] = p->stops;
  out["generation_prompt"] = p->generation_prompt;
  std::cout << json::dump(out) << '\n';
  return exit_ok;
}

}  // namespace chatpeg::cli

// chatpeg::api::chat_template: the C++ API over the chat and stream modules. A template is
// compiled once (chat::chat_template, shared and immutable); each call validates its request
// (chat::request::from_json, errors with the JSON path), prepares it and parses or streams.
#include "chatpeg/api/template.h"

#include <utility>

#include "api/convert.h"
#include "api/stream_impl.h"
#include "api/template_impl.h"
#include "chatpeg/base/file.h"
#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/jinja/source.h"
#include "chatpeg/stream/parse.h"
#include "chatpeg/stream/session.h"

namespace chatpeg::api {

namespace {

std::string_view trigger_type_name(chat::trigger_type t) {
  switch (t) {
    case chat::trigger_type::word:
      return "word";
    case chat::trigger_type::pattern:
      return "pattern";
    case chat::trigger_type::pattern_full:
      return "pattern_full";
    case chat::trigger_type::token:
      return "token";
  }
  return "word";
}

std::shared_ptr<const chat::chat_template> compile(jinja::template_source src, std::string file,
                                                   const load_options& options) {
  chat::template_options topts;
  topts.file = std::move(file);
  topts.special_tokens = std::move(src.special_tokens);
  topts.override_bos_eos(options.bos_token, options.eos_token);
  return detail::take(chat::chat_template::create(std::move(src.source), std::move(topts)));
}

chat::request request_of(const json& body) {
  return detail::take(chat::request::from_json(body));
}

chat::prepared prepare_of(const chat::chat_template& t, const json& body, bool build_gbnf) {
  return detail::take(chat::prepare(t, request_of(body), {.build_gbnf = build_gbnf}));
}

}  // namespace

json prepared_request::to_json() const {
  json j = json::object();
  j["prompt"] = prompt;
  j["generation_prompt"] = generation_prompt;
  j["grammar"] = grammar;
  j["grammar_lazy"] = grammar_lazy;
  json triggers_json = json::array();
  for (const auto& t : triggers) triggers_json.push_back({{"type", t.type}, {"value", t.value}});
  j["grammar_triggers"] = std::move(triggers_json);
  j["preserved_tokens"] = preserved_tokens;
  j["stops"] = stops;
  return j;
}

chat_template::chat_template(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}

chat_template chat_template::from_file(const std::string& path, const load_options& options) {
  auto src = jinja::load_template_source(path, {.name = options.name});
  if (!src) {
    base::error e = std::move(src).error();
    if (e.where.file.empty()) e.where.file = path;
    detail::raise(e);
  }
  std::string shipped = std::move(src->response_template);
  return chat_template(
      std::make_shared<impl>(impl{compile(std::move(*src), path, options), std::move(shipped)}));
}

chat_template chat_template::from_string(std::string source, const load_options& options) {
  jinja::template_source src;
  src.source = std::move(source);
  return chat_template(std::make_shared<impl>(impl{compile(std::move(src), "", options), {}}));
}

chat_template chat_template::from_tokenizer_config(const json& config,
                                                   const load_options& options) {
  auto src = detail::take(jinja::template_from_tokenizer_config(config, {.name = options.name}));
  std::string shipped = std::move(src.response_template);
  return chat_template(
      std::make_shared<impl>(impl{compile(std::move(src), "", options), std::move(shipped)}));
}

chat_template chat_template::from_gguf(std::string_view bytes, const load_options& options) {
  auto src = detail::take(jinja::template_from_gguf(bytes, {.name = options.name}));
  std::string shipped = std::move(src.response_template);
  return chat_template(
      std::make_shared<impl>(impl{compile(std::move(src), "", options), std::move(shipped)}));
}

json chat_template::analysis() const {
  return impl_->compiled->analysis().to_json();
}

std::string chat_template::render(const json& request) const {
  return prepare_of(*impl_->compiled, request, false).prompt;
}

prepared_request chat_template::prepare(const json& request) const {
  chat::prepared p = prepare_of(*impl_->compiled, request, true);
  prepared_request out;
  out.prompt = std::move(p.prompt);
  out.generation_prompt = std::move(p.generation_prompt);
  out.grammar = std::move(p.gbnf);
  out.grammar_lazy = p.grammar_lazy;
  for (auto& t : p.triggers) {
    out.triggers.push_back({std::string(trigger_type_name(t.type)), std::move(t.value)});
  }
  out.preserved_tokens = std::move(p.preserved_tokens);
  out.stops = std::move(p.stops);
  return out;
}

json chat_template::parse(std::string_view output, const json& request) const {
  const chat::prepared p = prepare_of(*impl_->compiled, request, false);
  chat::message msg = detail::take(stream::parse(p, output));
  msg.fill_call_ids(stream::generate_call_id);
  return msg.to_json();
}

response_stream chat_template::stream(const json& request, const stream_options& options) const {
  return response_stream(detail::session_stream(
      impl_->compiled, prepare_of(*impl_->compiled, request, false), options));
}

}  // namespace chatpeg::api

// OpenAI chat API ⇄ chatpeg translation for the gateway: validates request bodies (wrong
// types are 400s with the JSON path), maps chat::prepared onto backend parameters, and builds
// the exact OpenAI response objects (chat.completion, chat.completion.chunk, error).
#include "chat_completions.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

namespace chatpeg::server::detail {
namespace {

openai_error bad_field(std::string path, std::string what) {
  return openai_error{
      .status = 400, .message = "invalid request: " + path + ": " + what, .param = std::move(path)};
}

// Optional field of a given kind; null counts as absent (OpenAI clients send nulls).
template <class Check>
std::optional<openai_error> check(const json::value& body, const char* key, Check ok,
                                  const char* expected) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null() || ok(*it)) return std::nullopt;
  return bad_field(json::path_key("$", key),
                   std::string("expected ") + expected + ", got " + json::type_name(*it));
}

bool present(const json::value& body, const char* key) {
  const auto it = body.find(key);
  return it != body.end() && !it->is_null();
}

}  // namespace

json::value openai_error::to_json() const {
  json::value e = json::value::object();
  e["message"] = message;
  e["type"] = type;
  e["param"] = param.empty() ? json::value(nullptr) : json::value(param);
  e["code"] = code.empty() ? json::value(nullptr) : json::value(code);
  return json::value{{"error", std::move(e)}};
}

std::optional<openai_error> parse_chat_body(std::string_view text, chat_call& out) {
  auto parsed = json::parse(text);
  if (!parsed) {
    return openai_error{.status = 400,
                        .message = "invalid JSON body: " + parsed.error().to_string(),
                        .code = "invalid_json"};
  }
  return parse_chat_json(*parsed, out);
}

std::optional<openai_error> parse_chat_json(const json::value& body, chat_call& out) {
  if (!body.is_object()) return bad_field("$", "the body must be a JSON object");
  if (!body.contains("messages")) return bad_field("$.messages", "missing required field");

  auto is_int = [](const json::value& v) { return v.is_number_integer(); };
  auto is_num = [](const json::value& v) { return v.is_number(); };
  auto is_bool = [](const json::value& v) { return v.is_boolean(); };
  auto is_obj = [](const json::value& v) { return v.is_object(); };
  auto is_str = [](const json::value& v) { return v.is_string(); };
  for (const char* k : {"max_tokens", "max_completion_tokens", "seed"}) {
    if (auto e = check(body, k, is_int, "an integer")) return e;
  }
  for (const char* k : {"temperature", "top_p"}) {
    if (auto e = check(body, k, is_num, "a number")) return e;
  }
  if (auto e = check(body, "stream", is_bool, "a boolean")) return e;
  if (auto e = check(body, "stream_options", is_obj, "an object")) return e;
  if (auto e = check(body, "model", is_str, "a string")) return e;
  if (auto e = check(
          body, "stop", [](const json::value& v) { return v.is_string() || v.is_array(); },
          "a string or an array of strings")) {
    return e;
  }

  auto req = chat::request::from_json(body);
  if (!req) return error_from(req.error());
  out.request = std::move(*req);

  completion_params& p = out.params;
  for (const char* k : {"max_completion_tokens", "max_tokens"}) {
    if (!present(body, k)) continue;
    // The backends count tokens in a 32-bit int (llama.cpp's n_predict): a larger value is
    // refused rather than wrapped.
    constexpr std::int64_t most = 2147483647;
    const json::value& v = body[k];
    const bool too_large =
        v.is_number_unsigned() ? v.get<std::uint64_t>() > most : v.get<std::int64_t>() > most;
    if (too_large) {
      return bad_field(json::path_key("$", k), "must be at most " + std::to_string(most));
    }
    const auto n = v.get<std::int64_t>();
    if (n < 1) return bad_field(json::path_key("$", k), "must be at least 1");
    p.max_tokens = n;
    break;
  }
  if (present(body, "temperature")) p.temperature = body["temperature"].get<double>();
  if (present(body, "top_p")) p.top_p = body["top_p"].get<double>();
  if (present(body, "seed")) p.seed = body["seed"].get<std::int64_t>();
  if (present(body, "stop")) {
    const auto& stop = body["stop"];
    if (stop.is_string()) {
      p.stop.push_back(stop.get<std::string>());
    } else {
      for (std::size_t i = 0; i < stop.size(); ++i) {
        if (!stop[i].is_string()) {
          return bad_field(json::path_index("$.stop", i), "expected a string");
        }
        p.stop.push_back(stop[i].get<std::string>());
      }
    }
  }
  out.stop_sequences = p.stop;
  out.stream = present(body, "stream") && body["stream"].get<bool>();
  if (present(body, "stream_options")) {
    const auto& so = body["stream_options"];
    if (const auto iu = so.find("include_usage"); iu != so.end() && !iu->is_null()) {
      if (!iu->is_boolean()) {
        return bad_field("$.stream_options.include_usage",
                         std::string("expected a boolean, got ") + json::type_name(*iu));
      }
      out.include_usage = iu->get<bool>();
    }
  }

  // Contradictions chat::prepare also rejects, checked here so the message names the field.
  const auto& r = out.request;
  if (r.grammar && r.has_tools()) {
    return bad_field("$.grammar", "a raw grammar cannot be combined with tools");
  }
  if (r.tool_choice.mode == chat::tool_choice_mode::named) {
    bool found = false;
    for (const auto& t : r.tools) {
      const auto fn = t.find("function");
      if (fn != t.end() && fn->is_object() && fn->value("name", "") == r.tool_choice.function) {
        found = true;
      }
    }
    if (!found) {
      return bad_field("$.tool_choice.function.name",
                       "tool '" + r.tool_choice.function + "' is not in tools");
    }
  }
  if (r.tool_choice.mode == chat::tool_choice_mode::required && !r.has_tools()) {
    return bad_field("$.tool_choice", "\"required\" needs at least one tool");
  }
  return std::nullopt;
}

openai_error error_from(const base::error& e) {
  openai_error out;
  out.status = 400;
  out.param = e.where.path;
  switch (e.code) {
    case base::errc::template_error:
      out.message = "the chat template raised: " + e.message;
      out.code = "template_error";
      break;
    case base::errc::analysis_failed:
      out.message = "this model's template does not support the request: " + e.message;
      out.code = "unsupported_by_template";
      break;
    case base::errc::limit_exceeded:
      out.message = "request too large: " + e.message;
      out.code = "limit_exceeded";
      break;
    case base::errc::internal_error:
      out.status = 500;
      out.type = "server_error";
      out.message = "internal error: " + e.to_string();
      break;
    default:
      out.message = "invalid request: " + e.to_string();
      break;
  }
  return out;
}

openai_error error_from(const backend_error& e) {
  // A backend that went silent or ran out of time is a gateway timeout; anything else it did
  // wrong is a 502.
  const bool late = e.code == backend_errc::timeout || e.code == backend_errc::deadline;
  return openai_error{.status = late ? 504 : 502,
                      .message = "backend failure: " + e.message,
                      .type = "backend_error",
                      .code = std::string(backend_errc_name(e.code))};
}

void apply_prepared(const chat::prepared& p, completion_params& params) {
  params.prompt = p.prompt;
  params.grammar = p.gbnf;
  params.grammar_lazy = p.grammar_lazy;
  params.triggers = p.triggers;
  params.preserved_tokens = p.preserved_tokens;
  std::vector<std::string> stops = p.stops;
  for (auto& s : params.stop) {
    if (std::find(stops.begin(), stops.end(), s) == stops.end()) stops.push_back(std::move(s));
  }
  params.stop = std::move(stops);
}

json::value prepare_report(const chat::prepared& p, const completion_params& params,
                           const backend_options& backend) {
  json::value out = json::value::object();
  out["backend_type"] = std::string(backend_type_name(backend.type));
  out["endpoint"] = backend.url + std::string(backend_path(backend.type));
  out["prompt"] = p.prompt;
  out["generation_prompt"] = p.generation_prompt;
  out["parse_prefix"] = p.parse_prefix;
  const bool grammar_sent = backend.type == backend_type::llamacpp;
  out["grammar"] = p.gbnf.empty() ? json::value(nullptr) : json::value(p.gbnf);
  out["grammar_lazy"] = p.grammar_lazy;
  json::value triggers = json::value::array();
  for (const auto& t : p.triggers) {
    static constexpr const char* names[] = {"word", "pattern", "pattern_full", "token"};
    triggers.push_back({{"type", names[static_cast<int>(t.type)]}, {"value", t.value}});
  }
  out["grammar_triggers"] = std::move(triggers);
  out["preserved_tokens"] = p.preserved_tokens;
  out["stop"] = params.stop;
  out["grammar_sent_to_backend"] = grammar_sent && !p.gbnf.empty();
  if (!grammar_sent && !p.gbnf.empty()) {
    out["note"] = "the openai backend type takes no grammar: output is parsed but not constrained";
  }
  out["backend_request"] = backend_body(backend.type, params);
  return out;
}

json::value usage::to_json() const {
  return json::value{{"prompt_tokens", prompt_tokens},
                     {"completion_tokens", completion_tokens},
                     {"total_tokens", prompt_tokens + completion_tokens}};
}

response_meta new_response_meta(std::string model) {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[48];
  std::snprintf(buf, sizeof buf, "chatcmpl-%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(counter.fetch_add(1) & 0xffffffffu));
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return response_meta{.id = buf,
                       .created = std::chrono::duration_cast<std::chrono::seconds>(now).count(),
                       .model = std::move(model)};
}

json::value completion_json(const response_meta& meta, const chat::message& message,
                            stream::finish_reason reason, const usage& u) {
  json::value msg = message.to_json();
  msg["role"] = "assistant";
  if (!msg.contains("content")) msg["content"] = nullptr;
  json::value choice = json::value::object();
  choice["index"] = 0;
  choice["message"] = std::move(msg);
  choice["finish_reason"] = std::string(stream::finish_reason_name(reason));
  json::value out = json::value::object();
  out["id"] = meta.id;
  out["object"] = "chat.completion";
  out["created"] = meta.created;
  out["model"] = meta.model;
  out["choices"] = json::value::array({std::move(choice)});
  out["usage"] = u.to_json();
  return out;
}

json::value chunk_json(const response_meta& meta, json::value delta,
                       std::optional<stream::finish_reason> finish) {
  json::value choice = json::value::object();
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  choice["finish_reason"] =
      finish ? json::value(std::string(stream::finish_reason_name(*finish))) : json::value(nullptr);
  json::value out = json::value::object();
  out["id"] = meta.id;
  out["object"] = "chat.completion.chunk";
  out["created"] = meta.created;
  out["model"] = meta.model;
  out["choices"] = json::value::array({std::move(choice)});
  return out;
}

json::value usage_chunk_json(const response_meta& meta, const usage& u) {
  json::value out = json::value::object();
  out["id"] = meta.id;
  out["object"] = "chat.completion.chunk";
  out["created"] = meta.created;
  out["model"] = meta.model;
  out["choices"] = json::value::array();
  out["usage"] = u.to_json();
  return out;
}

}  // namespace chatpeg::server::detail

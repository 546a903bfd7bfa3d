// The gateway's APIs (wire_api.h): the dispatch by API, and Chat Completions' own stream writer
// ("data:" chunks, the finish chunk, the usage chunk, [DONE]). The Messages and Responses
// serializers live in messages_api.cpp and responses_api.cpp.
#include "wire_api.h"

#include <algorithm>

#include "messages_api.h"
#include "responses_api.h"

namespace chatpeg::server::detail {
namespace {

std::string data_line(const json::value& v) {
  return "data: " + json::dump(v) + "\n\n";
}

class chat_chunks final : public event_writer {
 public:
  explicit chat_chunks(response_meta meta) : meta_(std::move(meta)) {}
  std::string start() override {
    return data_line(chunk_json(meta_, {{"role", "assistant"}}, std::nullopt));
  }
  std::string delta(const stream::delta_view& d) override {
    return data_line(chunk_json(meta_, d.to_json(), std::nullopt));
  }
  std::string finish(const answer_end& end) override {
    std::string out = data_line(chunk_json(meta_, json::value::object(), end.reason));
    if (end.include_usage) out += data_line(usage_chunk_json(meta_, end.u));
    return out + "data: [DONE]\n\n";
  }
  std::string error(const openai_error& e) override {
    return data_line(e.to_json()) + "data: [DONE]\n\n";
  }

 private:
  response_meta meta_;
};

}  // namespace

json::value error_json(api_kind api, const openai_error& e) {
  return api == api_kind::anthropic_messages ? anthropic_error_json(e) : e.to_json();
}

json::value answer_json(api_kind api, const response_meta& meta, const chat::message& m,
                        const answer_end& end) {
  switch (api) {
    case api_kind::anthropic_messages:
      return anthropic_message_json(meta, m,
                                    anthropic_stop_reason(end.reason, !end.stop_sequence.empty()),
                                    end.u, end.stop_sequence);
    case api_kind::responses:
      return response_object_json(meta, m, end.reason, end.u);
    case api_kind::chat_completions:
      break;
  }
  return completion_json(meta, m, end.reason, end.u);
}

std::unique_ptr<event_writer> make_event_writer(api_kind api, const response_meta& meta) {
  switch (api) {
    case api_kind::anthropic_messages:
      return std::make_unique<anthropic_events>(meta);
    case api_kind::responses:
      return std::make_unique<response_events>(meta);
    case api_kind::chat_completions:
      break;
  }
  return std::make_unique<chat_chunks>(meta);
}

std::string matched_stop_sequence(const chat_call& call, const backend_done& done) {
  if (done.stop != stop_kind::word || done.stopping_word.empty()) return {};
  const auto& s = call.stop_sequences;
  return std::find(s.begin(), s.end(), done.stopping_word) != s.end() ? done.stopping_word
                                                                      : std::string();
}

std::string string_or(const json::value& v, const char* key, std::string fallback) {
  if (!v.is_object()) return fallback;
  const auto it = v.find(key);
  return it != v.end() && it->is_string() ? it->get<std::string>() : fallback;
}

openai_error field_error(const std::string& path, const std::string& message) {
  return openai_error{.status = 400, .message = message + " (at " + path + ")", .param = path};
}

std::optional<openai_error> append_string_field(const json::value& v, const char* key,
                                                const std::string& path, std::string& out) {
  if (!v.is_object() || !v.contains(key) || !v[key].is_string())
    return field_error(path + "." + key, "expected a string");
  out += v[key].get<std::string>();
  return std::nullopt;
}

std::optional<openai_error> text_of_parts(const json::value& content, const std::string& path,
                                          std::initializer_list<std::string_view> types,
                                          std::string& out) {
  if (content.is_string()) {
    out += content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) return field_error(path, "expected a string or an array of parts");
  for (std::size_t i = 0; i < content.size(); ++i) {
    const std::string p = json::path_index(path, i);
    const json::value& part = content[i];
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      return field_error(p, "expected a content part with a type");
    const std::string type = part["type"].get<std::string>();
    if (std::find(types.begin(), types.end(), type) == types.end())
      return field_error(p, "content parts of type '" + type + "' are not supported here");
    if (auto e = append_string_field(part, "text", p, out)) return e;
  }
  return std::nullopt;
}

std::optional<openai_error> translate_tools(const json::value& body, json::value& chat,
                                            tool_function_reader function_of) {
  if (!body.contains("tools") || body["tools"].is_null()) return std::nullopt;
  const json::value& tools = body["tools"];
  if (!tools.is_array()) return field_error("$.tools", "expected an array");
  json::value out = json::value::array();
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const std::string p = json::path_index("$.tools", i);
    const json::value& t = tools[i];
    if (!t.is_object()) return field_error(p, "expected an object");
    json::value fn;
    if (auto e = function_of(t, p, fn)) return e;
    out.push_back({{"type", "function"}, {"function", std::move(fn)}});
  }
  if (!out.empty()) chat["tools"] = std::move(out);
  return std::nullopt;
}

}  // namespace chatpeg::server::detail

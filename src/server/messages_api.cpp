// Anthropic Messages API (messages_api.h): the body translated to a Chat Completions body for
// the gateway's one pipeline, and the answer written back as Anthropic's message object or
// stream events. Every field the translator reads is type-checked here, so its errors name the
// Messages body's own JSON path.
#include "messages_api.h"

namespace chatpeg::server::detail {
namespace {

// A content block's type, or an error naming the block.
std::optional<openai_error> block_type(const json::value& b, const std::string& path,
                                       std::string& type) {
  if (!b.is_object() || !b.contains("type") || !b["type"].is_string())
    return field_error(path, "expected a content block with a type");
  type = b["type"].get<std::string>();
  return std::nullopt;
}

// Appends the block's string field `key`, or an error naming it.
std::optional<openai_error> append_string(const json::value& b, const char* key,
                                          const std::string& path, std::string& out) {
  return append_string_field(b, key, path, out);
}

// A system prompt or tool result: a string or text blocks.
std::optional<openai_error> text_of_blocks(const json::value& content, const std::string& path,
                                           std::string& out) {
  return text_of_parts(content, path, {"text"}, out);
}

std::optional<openai_error> user_blocks(const json::value& content, const std::string& path,
                                        json::value& messages) {
  std::string text;
  bool has_text = false;
  const auto flush = [&] {
    if (has_text) messages.push_back({{"role", "user"}, {"content", text}});
    text.clear();
    has_text = false;
  };
  for (std::size_t i = 0; i < content.size(); ++i) {
    const std::string p = json::path_index(path, i);
    const json::value& b = content[i];
    std::string type;
    if (auto e = block_type(b, p, type)) return e;
    if (type == "text") {
      if (auto e = append_string(b, "text", p, text)) return e;
      has_text = true;
    } else if (type == "tool_result") {
      if (!b.contains("tool_use_id") || !b["tool_use_id"].is_string())
        return field_error(p + ".tool_use_id", "expected a string");
      std::string result;
      if (b.contains("content") && !b["content"].is_null()) {
        if (auto e = text_of_blocks(b["content"], p + ".content", result)) return e;
      }
      if (b.contains("is_error") && !b["is_error"].is_boolean())
        return field_error(p + ".is_error", "expected a boolean");
      // The template sees no error flag: an error result says so in its text.
      if (b.value("is_error", false)) result = "Error: " + result;
      flush();
      messages.push_back(
          {{"role", "tool"}, {"tool_call_id", b["tool_use_id"]}, {"content", result}});
    } else if (type == "image" || type == "document") {
      return field_error(p,
                         "content blocks of type '" + type + "' are not supported by this gateway");
    } else {
      return field_error(p, "unknown content block type '" + type + "'");
    }
  }
  flush();
  return std::nullopt;
}

std::optional<openai_error> assistant_blocks(const json::value& content, const std::string& path,
                                             json::value& messages) {
  std::string text, thinking;
  json::value calls = json::value::array();
  for (std::size_t i = 0; i < content.size(); ++i) {
    const std::string p = json::path_index(path, i);
    const json::value& b = content[i];
    std::string type;
    if (auto e = block_type(b, p, type)) return e;
    if (type == "text") {
      if (auto e = append_string(b, "text", p, text)) return e;
    } else if (type == "thinking") {
      if (auto e = append_string(b, "thinking", p, thinking)) return e;
    } else if (type == "redacted_thinking") {
      continue;  // encrypted by another provider: nothing a template can render
    } else if (type == "tool_use") {
      for (const char* k : {"id", "name"}) {
        if (!b.contains(k) || !b[k].is_string())
          return field_error(p + "." + k, "expected a string");
      }
      if (!b.contains("input") || !b["input"].is_object())
        return field_error(p + ".input", "expected an object");
      calls.push_back({{"id", b["id"]},
                       {"type", "function"},
                       {"function", {{"name", b["name"]}, {"arguments", json::dump(b["input"])}}}});
    } else {
      return field_error(p, "unknown content block type '" + type + "'");
    }
  }
  json::value m = {{"role", "assistant"}, {"content", text}};
  if (!thinking.empty()) m["reasoning_content"] = thinking;
  if (!calls.empty()) m["tool_calls"] = std::move(calls);
  messages.push_back(std::move(m));
  return std::nullopt;
}

std::optional<openai_error> translate_messages(const json::value& body, json::value& messages) {
  if (body.contains("system") && !body["system"].is_null()) {
    std::string system;
    if (auto e = text_of_blocks(body["system"], "$.system", system)) return e;
    messages.push_back({{"role", "system"}, {"content", system}});
  }
  if (!body.contains("messages")) return field_error("$.messages", "missing required field");
  const json::value& list = body["messages"];
  if (!list.is_array() || list.empty())
    return field_error("$.messages", "expected a non-empty array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = json::path_index("$.messages", i);
    const json::value& m = list[i];
    if (!m.is_object()) return field_error(p, "expected an object");
    const std::string role = string_or(m, "role");
    if (role != "user" && role != "assistant")
      return field_error(p + ".role", "expected \"user\" or \"assistant\"");
    if (!m.contains("content")) return field_error(p + ".content", "missing required field");
    const json::value& c = m["content"];
    if (c.is_string()) {
      messages.push_back({{"role", role}, {"content", c}});
      continue;
    }
    if (!c.is_array())
      return field_error(p + ".content", "expected a string or an array of blocks");
    auto e = role == "user" ? user_blocks(c, p + ".content", messages)
                            : assistant_blocks(c, p + ".content", messages);
    if (e) return e;
  }
  return std::nullopt;
}

// A custom tool {name, description, input_schema} as a function.
std::optional<openai_error> tool_function(const json::value& t, const std::string& p,
                                          json::value& fn) {
  if (t.contains("type") && t["type"] != "custom")
    return field_error(p + ".type",
                       "built-in tool types are not supported; give name and input_schema");
  if (!t.contains("name") || !t["name"].is_string())
    return field_error(p + ".name", "expected a string");
  if (!t.contains("input_schema") || !t["input_schema"].is_object())
    return field_error(p + ".input_schema", "expected an object");
  fn = {{"name", t["name"]}, {"parameters", t["input_schema"]}};
  if (t.contains("description")) {
    if (!t["description"].is_string()) return field_error(p + ".description", "expected a string");
    fn["description"] = t["description"];
  }
  return std::nullopt;
}

std::optional<openai_error> tools_and_choice(const json::value& body, json::value& chat) {
  if (auto e = translate_tools(body, chat, tool_function)) return e;
  if (body.contains("tool_choice") && !body["tool_choice"].is_null()) {
    const json::value& tc = body["tool_choice"];
    if (!tc.is_object() || !tc.contains("type") || !tc["type"].is_string())
      return field_error("$.tool_choice", "expected an object with a type");
    const std::string type = tc["type"].get<std::string>();
    if (type == "auto") {
      chat["tool_choice"] = "auto";
    } else if (type == "any") {
      chat["tool_choice"] = "required";
    } else if (type == "none") {
      chat["tool_choice"] = "none";
    } else if (type == "tool") {
      if (!tc.contains("name") || !tc["name"].is_string())
        return field_error("$.tool_choice.name", "expected a string");
      chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", tc["name"]}}}};
    } else {
      return field_error("$.tool_choice.type", "expected auto, any, tool or none");
    }
    if (tc.contains("disable_parallel_tool_use")) {
      if (!tc["disable_parallel_tool_use"].is_boolean())
        return field_error("$.tool_choice.disable_parallel_tool_use", "expected a boolean");
      chat["parallel_tool_calls"] = !tc["disable_parallel_tool_use"].get<bool>();
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<openai_error> messages_to_chat(const json::value& body, json::value& chat,
                                             bool count_only) {
  if (!body.is_object()) return field_error("$", "the body must be a JSON object");
  chat = json::value::object();
  if (body.contains("model")) {
    if (!body["model"].is_string()) return field_error("$.model", "expected a string");
    chat["model"] = body["model"];
  }
  if (!count_only) {
    if (!body.contains("max_tokens")) return field_error("$.max_tokens", "missing required field");
    if (!body["max_tokens"].is_number_integer() || body["max_tokens"].get<std::int64_t>() < 1)
      return field_error("$.max_tokens", "expected an integer of at least 1");
    chat["max_tokens"] = body["max_tokens"];
  }
  json::value messages = json::value::array();
  if (auto e = translate_messages(body, messages)) return e;
  chat["messages"] = std::move(messages);
  if (auto e = tools_and_choice(body, chat)) return e;
  for (const char* k : {"temperature", "top_p"}) {
    if (!body.contains(k)) continue;
    if (!body[k].is_number()) return field_error(std::string("$.") + k, "expected a number");
    chat[k] = body[k];
  }
  if (body.contains("top_k") && !body["top_k"].is_number_integer())
    return field_error("$.top_k", "expected an integer");
  if (body.contains("stop_sequences")) {
    const json::value& s = body["stop_sequences"];
    if (!s.is_array()) return field_error("$.stop_sequences", "expected an array of strings");
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!s[i].is_string())
        return field_error(json::path_index("$.stop_sequences", i), "expected a string");
    }
    if (!s.empty()) chat["stop"] = s;
  }
  if (body.contains("thinking") && !body["thinking"].is_null()) {
    const json::value& t = body["thinking"];
    if (!t.is_object() || !t.contains("type") || !t["type"].is_string())
      return field_error("$.thinking", "expected an object with a type");
    const std::string type = t["type"].get<std::string>();
    if (type != "enabled" && type != "disabled")
      return field_error("$.thinking.type", "expected \"enabled\" or \"disabled\"");
    if (t.contains("budget_tokens") && !t["budget_tokens"].is_number_integer())
      return field_error("$.thinking.budget_tokens", "expected an integer");
    chat["chat_template_kwargs"] = {{"enable_thinking", type == "enabled"}};
  }
  if (body.contains("stream")) {
    if (!body["stream"].is_boolean()) return field_error("$.stream", "expected a boolean");
    chat["stream"] = body["stream"];
  }
  return std::nullopt;
}

json::value anthropic_error_json(const openai_error& e) {
  std::string_view type = "api_error";
  switch (e.status) {
    case 400:
    case 422:
      type = "invalid_request_error";
      break;
    case 401:
      type = "authentication_error";
      break;
    case 403:
      type = "permission_error";
      break;
    case 404:
      type = "not_found_error";
      break;
    case 413:
      type = "request_too_large";
      break;
    case 429:
      type = "rate_limit_error";
      break;
    case 503:
    case 529:
      type = "overloaded_error";
      break;
    default:
      break;
  }
  return {{"type", "error"}, {"error", {{"type", type}, {"message", e.message}}}};
}

std::string_view anthropic_stop_reason(stream::finish_reason reason, bool by_stop_sequence) {
  switch (reason) {
    case stream::finish_reason::tool_calls:
      return "tool_use";
    case stream::finish_reason::length:
      return "max_tokens";
    case stream::finish_reason::stop:
      break;
  }
  return by_stop_sequence ? "stop_sequence" : "end_turn";
}

namespace {

// A call's arguments as the input object (an unparsable text, from an answer cut by the token
// limit, is kept as {"_partial": text} so nothing is lost).
json::value input_of(const std::string& arguments) {
  auto v = json::parse(arguments.empty() ? std::string_view("{}") : std::string_view(arguments));
  if (v && v->is_object()) return *v;
  return {{"_partial", arguments}};
}

std::string message_id(const response_meta& meta) {
  // The response id's random part, under Anthropic's prefix.
  const std::size_t dash = meta.id.find('-');
  return "msg_" + (dash == std::string::npos ? meta.id : meta.id.substr(dash + 1));
}

}  // namespace

json::value anthropic_message_json(const response_meta& meta, const chat::message& m,
                                   std::string_view stop_reason, const usage& u,
                                   const std::string& stop_sequence) {
  json::value content = json::value::array();
  if (m.reasoning_content && !m.reasoning_content->empty())
    content.push_back(
        {{"type", "thinking"}, {"thinking", *m.reasoning_content}, {"signature", ""}});
  if (m.content && !m.content->empty()) content.push_back({{"type", "text"}, {"text", *m.content}});
  for (const auto& c : m.tool_calls) {
    content.push_back(
        {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input_of(c.arguments)}});
  }
  return {
      {"id", message_id(meta)},
      {"type", "message"},
      {"role", "assistant"},
      {"model", meta.model},
      {"content", std::move(content)},
      {"stop_reason", stop_reason},
      {"stop_sequence", stop_sequence.empty() ? json::value(nullptr) : json::value(stop_sequence)},
      {"usage", {{"input_tokens", u.prompt_tokens}, {"output_tokens", u.completion_tokens}}}};
}

std::string named_sse(std::string_view event, const json::value& data) {
  return "event: " + std::string(event) + "\ndata: " + json::dump(data) + "\n\n";
}

std::string anthropic_events::start() {
  json::value message = {{"id", message_id(meta_)},
                         {"type", "message"},
                         {"role", "assistant"},
                         {"model", meta_.model},
                         {"content", json::value::array()},
                         {"stop_reason", nullptr},
                         {"stop_sequence", nullptr},
                         {"usage", {{"input_tokens", 0}, {"output_tokens", 0}}}};
  return named_sse("message_start", {{"type", "message_start"}, {"message", std::move(message)}}) +
         named_sse("ping", {{"type", "ping"}});
}

std::string anthropic_events::close() {
  if (open_ == block::none) return {};
  std::string out;
  // A thinking block ends with its signature (none: the reasoning is the local model's).
  if (open_ == block::thinking) {
    out = named_sse("content_block_delta",
                    {{"type", "content_block_delta"},
                     {"index", index_},
                     {"delta", {{"type", "signature_delta"}, {"signature", ""}}}});
  }
  open_ = block::none;
  tool_index_.reset();
  return out + named_sse("content_block_stop", {{"type", "content_block_stop"}, {"index", index_}});
}

std::string anthropic_events::open(block kind, json::value content_block) {
  std::string out = close();
  open_ = kind;
  ++index_;
  return out + named_sse("content_block_start", {{"type", "content_block_start"},
                                                 {"index", index_},
                                                 {"content_block", std::move(content_block)}});
}

std::string anthropic_events::delta(const stream::delta_view& d) {
  std::string out;
  const auto block_delta = [&](json::value delta) {
    out += named_sse(
        "content_block_delta",
        {{"type", "content_block_delta"}, {"index", index_}, {"delta", std::move(delta)}});
  };
  if (!d.reasoning_content.empty()) {
    if (open_ != block::thinking)
      out += open(block::thinking, {{"type", "thinking"}, {"thinking", ""}});
    block_delta({{"type", "thinking_delta"}, {"thinking", d.reasoning_content}});
  }
  if (!d.content.empty()) {
    if (open_ != block::text) out += open(block::text, {{"type", "text"}, {"text", ""}});
    block_delta({{"type", "text_delta"}, {"text", d.content}});
  }
  for (const auto& call : d.tool_calls) {
    const auto index = static_cast<std::int64_t>(call.index);
    if ((call.id || call.name) && !(open_ == block::tool && tool_index_ == index)) {
      out += open(block::tool, {{"type", "tool_use"},
                                {"id", call.id.value_or("")},
                                {"name", call.name.value_or("")},
                                {"input", json::value::object()}});
      tool_index_ = index;
    }
    if (!call.arguments.empty() && open_ == block::tool) {
      block_delta({{"type", "input_json_delta"}, {"partial_json", call.arguments}});
    }
  }
  return out;
}

std::string anthropic_events::finish(const answer_end& end) {
  const std::string_view stop_reason =
      anthropic_stop_reason(end.reason, !end.stop_sequence.empty());
  const json::value stop_sequence =
      end.stop_sequence.empty() ? json::value(nullptr) : json::value(end.stop_sequence);
  const usage& u = end.u;
  return close() +
         named_sse(
             "message_delta",
             {{"type", "message_delta"},
              {"delta", {{"stop_reason", stop_reason}, {"stop_sequence", stop_sequence}}},
              {"usage",
               {{"input_tokens", u.prompt_tokens}, {"output_tokens", u.completion_tokens}}}}) +
         named_sse("message_stop", {{"type", "message_stop"}});
}

std::string anthropic_events::error(const openai_error& e) {
  return named_sse("error", anthropic_error_json(e));
}

}  // namespace chatpeg::server::detail

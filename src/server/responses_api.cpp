// OpenAI Responses API (responses_api.h): the body translated to a Chat Completions body for
// the gateway's one pipeline, and the answer written back as a response object or its stream
// events. Input items map to chat messages in order: messages (input_text / output_text
// parts), function_call items (joined to the assistant turn before them), function_call_output
// items (tool messages) and reasoning items (the next assistant turn's reasoning_content).
#include "responses_api.h"

namespace chatpeg::server::detail {
namespace {

std::optional<openai_error> string_field(const json::value& v, const char* key,
                                         const std::string& path, std::string& out) {
  out.clear();
  return append_string_field(v, key, path, out);
}

// A message item's text: a string, or input_text / output_text parts.
std::optional<openai_error> message_text(const json::value& content, const std::string& path,
                                         std::string& out) {
  return text_of_parts(content, path, {"input_text", "output_text", "text"}, out);
}

// The reasoning item's text: its reasoning_text content, else its summary.
std::string reasoning_text(const json::value& item) {
  std::string out;
  for (const char* key : {"content", "summary"}) {
    if (const auto c = item.find(key); c != item.end() && c->is_array()) {
      for (const auto& part : *c)
        if (part.is_object() && part.contains("text") && part["text"].is_string())
          out += part["text"].get<std::string>();
    }
    if (!out.empty()) break;
  }
  return out;
}

struct input_state {
  json::value messages = json::value::array();
  std::string pending_reasoning;  // for the next assistant turn
  // The assistant message function calls are joined to (the last message, when it is one).
  json::value* assistant() {
    if (!messages.empty() && messages.back()["role"] == "assistant") return &messages.back();
    return nullptr;
  }
  json::value& new_assistant(std::string content) {
    json::value m = {{"role", "assistant"}, {"content", std::move(content)}};
    if (!pending_reasoning.empty()) m["reasoning_content"] = std::move(pending_reasoning);
    pending_reasoning.clear();
    messages.push_back(std::move(m));
    return messages.back();
  }
};

std::optional<openai_error> input_item(const json::value& it, const std::string& p,
                                       input_state& st) {
  if (!it.is_object()) return field_error(p, "expected an input item");
  if (it.contains("type") && !it["type"].is_string())
    return field_error(p + ".type", "expected a string");
  const std::string type = string_or(it, "type", "message");
  if (type == "message") {
    std::string role;
    if (auto e = string_field(it, "role", p, role)) return e;
    if (role != "user" && role != "assistant" && role != "system" && role != "developer")
      return field_error(p + ".role", "expected user, assistant, system or developer");
    if (!it.contains("content")) return field_error(p + ".content", "missing required field");
    std::string text;
    if (auto e = message_text(it["content"], p + ".content", text)) return e;
    if (role == "assistant") {
      st.new_assistant(std::move(text));
    } else {
      st.messages.push_back({{"role", role == "developer" ? "system" : role}, {"content", text}});
    }
  } else if (type == "function_call") {
    std::string call_id, name, arguments;
    if (auto e = string_field(it, "call_id", p, call_id)) return e;
    if (auto e = string_field(it, "name", p, name)) return e;
    if (auto e = string_field(it, "arguments", p, arguments)) return e;
    json::value* a = st.assistant();
    if (a == nullptr || !st.pending_reasoning.empty()) a = &st.new_assistant("");
    if (!a->contains("tool_calls")) (*a)["tool_calls"] = json::value::array();
    (*a)["tool_calls"].push_back({{"id", call_id},
                                  {"type", "function"},
                                  {"function", {{"name", name}, {"arguments", arguments}}}});
  } else if (type == "function_call_output") {
    std::string call_id;
    if (auto e = string_field(it, "call_id", p, call_id)) return e;
    std::string output;
    if (!it.contains("output")) return field_error(p + ".output", "missing required field");
    if (it["output"].is_string()) {
      output = it["output"].get<std::string>();
    } else if (auto e = message_text(it["output"], p + ".output", output)) {
      return e;
    }
    st.messages.push_back({{"role", "tool"}, {"tool_call_id", call_id}, {"content", output}});
  } else if (type == "reasoning") {
    st.pending_reasoning += reasoning_text(it);
  } else {
    return field_error(p + ".type", "input items of type '" + type + "' are not supported");
  }
  return std::nullopt;
}

// A function tool {type: function, name, description, parameters} as a function.
std::optional<openai_error> tool_function(const json::value& t, const std::string& p,
                                          json::value& fn) {
  if (string_or(t, "type") != "function")
    return field_error(p + ".type", "only function tools are supported (built-in tools are not)");
  std::string name;
  if (auto e = string_field(t, "name", p, name)) return e;
  fn = {{"name", name}};
  if (t.contains("description")) fn["description"] = t["description"];
  fn["parameters"] = t.contains("parameters") && t["parameters"].is_object()
                         ? t["parameters"]
                         : json::value{{"type", "object"}, {"properties", json::value::object()}};
  return std::nullopt;
}

std::optional<openai_error> tools_and_choice(const json::value& body, json::value& chat) {
  if (auto e = translate_tools(body, chat, tool_function)) return e;
  if (body.contains("tool_choice") && !body["tool_choice"].is_null()) {
    const json::value& tc = body["tool_choice"];
    if (tc.is_string()) {
      const std::string v = tc.get<std::string>();
      if (v != "auto" && v != "required" && v != "none")
        return field_error("$.tool_choice", "expected auto, required, none or a function");
      chat["tool_choice"] = v;
    } else if (string_or(tc, "type") == "function" && tc.contains("name") &&
               tc["name"].is_string()) {
      chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", tc["name"]}}}};
    } else {
      return field_error("$.tool_choice",
                         "expected auto, required, none or {type: function, name}");
    }
  }
  if (body.contains("parallel_tool_calls")) {
    if (!body["parallel_tool_calls"].is_boolean())
      return field_error("$.parallel_tool_calls", "expected a boolean");
    chat["parallel_tool_calls"] = body["parallel_tool_calls"];
  }
  return std::nullopt;
}

std::optional<openai_error> text_format(const json::value& body, json::value& chat) {
  if (!body.contains("text") || body["text"].is_null()) return std::nullopt;
  const json::value& text = body["text"];
  if (!text.is_object()) return field_error("$.text", "expected an object");
  if (!text.contains("format") || text["format"].is_null()) return std::nullopt;
  const json::value& f = text["format"];
  const std::string type = string_or(f, "type");
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    chat["response_format"] = {{"type", "json_object"}};
  } else if (type == "json_schema") {
    if (!f.contains("schema") || !f["schema"].is_object())
      return field_error("$.text.format.schema", "expected an object");
    json::value js = {{"name", string_or(f, "name", "response")}, {"schema", f["schema"]}};
    if (f.contains("strict")) js["strict"] = f["strict"];
    chat["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(js)}};
  } else {
    return field_error("$.text.format.type", "expected text, json_object or json_schema");
  }
  return std::nullopt;
}

}  // namespace

std::optional<openai_error> responses_to_chat(const json::value& body, json::value& chat) {
  if (!body.is_object()) return field_error("$", "the body must be a JSON object");
  if (body.contains("previous_response_id") && !body["previous_response_id"].is_null())
    return field_error("$.previous_response_id",
                       "this gateway is stateless: send the whole conversation in input");
  if (body.contains("store") && body["store"] == true)
    return field_error("$.store", "this gateway is stateless and stores no responses");
  chat = json::value::object();
  if (body.contains("model")) {
    if (!body["model"].is_string()) return field_error("$.model", "expected a string");
    chat["model"] = body["model"];
  }
  input_state st;
  if (body.contains("instructions") && !body["instructions"].is_null()) {
    if (!body["instructions"].is_string())
      return field_error("$.instructions", "expected a string");
    st.messages.push_back({{"role", "system"}, {"content", body["instructions"]}});
  }
  if (!body.contains("input")) return field_error("$.input", "missing required field");
  const json::value& input = body["input"];
  if (input.is_string()) {
    st.messages.push_back({{"role", "user"}, {"content", input}});
  } else if (input.is_array()) {
    for (std::size_t i = 0; i < input.size(); ++i) {
      if (auto e = input_item(input[i], json::path_index("$.input", i), st)) return e;
    }
  } else {
    return field_error("$.input", "expected a string or an array of input items");
  }
  if (st.messages.empty()) return field_error("$.input", "expected at least one message");
  chat["messages"] = std::move(st.messages);
  if (auto e = tools_and_choice(body, chat)) return e;
  if (auto e = text_format(body, chat)) return e;
  if (body.contains("max_output_tokens") && !body["max_output_tokens"].is_null()) {
    if (!body["max_output_tokens"].is_number_integer() ||
        body["max_output_tokens"].get<std::int64_t>() < 1)
      return field_error("$.max_output_tokens", "expected an integer of at least 1");
    chat["max_tokens"] = body["max_output_tokens"];
  }
  for (const char* k : {"temperature", "top_p"}) {
    if (!body.contains(k) || body[k].is_null()) continue;
    if (!body[k].is_number()) return field_error(std::string("$.") + k, "expected a number");
    chat[k] = body[k];
  }
  if (body.contains("stream")) {
    if (!body["stream"].is_boolean()) return field_error("$.stream", "expected a boolean");
    chat["stream"] = body["stream"];
  }
  return std::nullopt;
}

namespace {

std::string suffix(const response_meta& meta) {
  const std::size_t dash = meta.id.find('-');
  return dash == std::string::npos ? meta.id : meta.id.substr(dash + 1);
}

json::value usage_json(const usage& u) {
  return {{"input_tokens", u.prompt_tokens},
          {"output_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

json::value reasoning_item(const response_meta& meta, const std::string& text) {
  return {{"type", "reasoning"},
          {"id", "rs_" + suffix(meta)},
          {"summary", json::value::array()},
          {"content", json::value::array({{{"type", "reasoning_text"}, {"text", text}}})}};
}

json::value message_item(const response_meta& meta, const std::string& text) {
  return {
      {"type", "message"},
      {"id", "msg_" + suffix(meta)},
      {"status", "completed"},
      {"role", "assistant"},
      {"content",
       json::value::array(
           {{{"type", "output_text"}, {"text", text}, {"annotations", json::value::array()}}})}};
}

json::value call_item(const std::string& call_id, const std::string& name,
                      const std::string& arguments) {
  return {{"type", "function_call"}, {"id", "fc_" + call_id}, {"call_id", call_id}, {"name", name},
          {"arguments", arguments},  {"status", "completed"}};
}

json::value response_shell(const response_meta& meta, std::string_view status, json::value output) {
  return {{"id", "resp_" + suffix(meta)},
          {"object", "response"},
          {"created_at", meta.created},
          {"status", status},
          {"incomplete_details", nullptr},
          {"error", nullptr},
          {"model", meta.model},
          {"output", std::move(output)},
          {"usage", nullptr}};
}

void set_end(json::value& r, stream::finish_reason reason, const usage& u) {
  const bool cut = reason == stream::finish_reason::length;
  r["status"] = cut ? "incomplete" : "completed";
  r["incomplete_details"] =
      cut ? json::value{{"reason", "max_output_tokens"}} : json::value(nullptr);
  r["usage"] = usage_json(u);
}

}  // namespace

json::value response_object_json(const response_meta& meta, const chat::message& m,
                                 stream::finish_reason reason, const usage& u) {
  json::value output = json::value::array();
  if (m.reasoning_content && !m.reasoning_content->empty())
    output.push_back(reasoning_item(meta, *m.reasoning_content));
  if (m.content && !m.content->empty()) output.push_back(message_item(meta, *m.content));
  for (const auto& c : m.tool_calls) output.push_back(call_item(c.id, c.name, c.arguments));
  json::value r = response_shell(meta, "completed", std::move(output));
  set_end(r, reason, u);
  return r;
}

std::string response_events::event(std::string_view type, json::value data) {
  data["type"] = type;
  data["sequence_number"] = sequence_++;
  return "event: " + std::string(type) + "\ndata: " + json::dump(data) + "\n\n";
}

json::value response_events::shell(std::string_view status) const {
  return response_shell(meta_, status, output_);
}

std::string response_events::start() {
  std::string out = event("response.created", {{"response", shell("in_progress")}});
  return out + event("response.in_progress", {{"response", shell("in_progress")}});
}

std::string response_events::close() {
  if (open_ == item::none) return {};
  const std::int64_t index = static_cast<std::int64_t>(output_.size());
  std::string out;
  const std::string id = current_["id"].get<std::string>();
  if (open_ == item::call) {
    current_["arguments"] = text_;
    current_["status"] = "completed";
    out += event("response.function_call_arguments.done",
                 {{"item_id", id}, {"output_index", index}, {"arguments", text_}});
  } else {
    const bool reasoning = open_ == item::reasoning;
    json::value part = reasoning ? json::value{{"type", "reasoning_text"}, {"text", text_}}
                                 : json::value{{"type", "output_text"},
                                               {"text", text_},
                                               {"annotations", json::value::array()}};
    out += event(reasoning ? "response.reasoning_text.done" : "response.output_text.done",
                 {{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"text", text_}});
    out += event("response.content_part.done",
                 {{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"part", part}});
    current_["content"] = json::value::array({part});
    if (!reasoning) current_["status"] = "completed";
  }
  out += event("response.output_item.done", {{"output_index", index}, {"item", current_}});
  output_.push_back(std::move(current_));
  current_ = json::value();
  open_ = item::none;
  call_index_.reset();
  text_.clear();
  return out;
}

std::string response_events::open(item kind, json::value added) {
  std::string out = close();
  const std::int64_t index = static_cast<std::int64_t>(output_.size());
  open_ = kind;
  current_ = std::move(added);
  out += event("response.output_item.added", {{"output_index", index}, {"item", current_}});
  if (kind != item::call) {
    json::value part =
        kind == item::reasoning
            ? json::value{{"type", "reasoning_text"}, {"text", ""}}
            : json::value{
                  {"type", "output_text"}, {"text", ""}, {"annotations", json::value::array()}};
    out += event("response.content_part.added", {{"item_id", current_["id"]},
                                                 {"output_index", index},
                                                 {"content_index", 0},
                                                 {"part", std::move(part)}});
  }
  return out;
}

std::string response_events::delta(const stream::delta_view& d) {
  std::string out;
  const auto index = [&] { return static_cast<std::int64_t>(output_.size()); };
  const auto text_delta = [&](std::string_view type, std::string_view piece) {
    text_ += piece;
    out += event(type, {{"item_id", current_["id"]},
                        {"output_index", index()},
                        {"content_index", 0},
                        {"delta", piece}});
  };
  if (!d.reasoning_content.empty()) {
    if (open_ != item::reasoning) {
      json::value added = reasoning_item(meta_, "");
      added["content"] = json::value::array();
      added["id"] = "rs_" + suffix(meta_) + "_" + std::to_string(output_.size());
      out += open(item::reasoning, std::move(added));
    }
    text_delta("response.reasoning_text.delta", d.reasoning_content);
  }
  if (!d.content.empty()) {
    if (open_ != item::message) {
      json::value added = message_item(meta_, "");
      added["content"] = json::value::array();
      added["status"] = "in_progress";
      added["id"] = "msg_" + suffix(meta_) + "_" + std::to_string(output_.size());
      out += open(item::message, std::move(added));
    }
    text_delta("response.output_text.delta", d.content);
  }
  for (const auto& call : d.tool_calls) {
    const auto i = static_cast<std::int64_t>(call.index);
    if ((call.id || call.name) && !(open_ == item::call && call_index_ == i)) {
      json::value added =
          call_item(std::string(call.id.value_or("")), std::string(call.name.value_or("")), "");
      added["status"] = "in_progress";
      out += open(item::call, std::move(added));
      call_index_ = i;
    }
    if (!call.arguments.empty() && open_ == item::call) {
      text_ += call.arguments;
      out += event(
          "response.function_call_arguments.delta",
          {{"item_id", current_["id"]}, {"output_index", index()}, {"delta", call.arguments}});
    }
  }
  return out;
}

std::string response_events::finish(const answer_end& end) {
  std::string out = close();
  json::value r = shell("completed");
  set_end(r, end.reason, end.u);
  const bool cut = end.reason == stream::finish_reason::length;
  return out + event(cut ? "response.incomplete" : "response.completed", {{"response", r}});
}

std::string response_events::error(const openai_error& e) {
  return event("error", {{"code", e.code.empty() ? json::value(nullptr) : json::value(e.code)},
                         {"message", e.message},
                         {"param", nullptr}});
}

}  // namespace chatpeg::server::detail

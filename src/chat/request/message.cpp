// chat::message → OpenAI JSON (README.md, "The command"): absent fields are omitted, content is
// null when a message has tool calls but no content, and each call carries its id (when known),
// type and function {name, arguments}. The stream mapper and the CLI print messages through this.
#include "chatpeg/chat/message.h"

namespace chatpeg::chat {

json::value message::to_json() const {
  json::value out = json::value::object();
  out["role"] = role;
  if (content) {
    out["content"] = *content;
  } else if (!tool_calls.empty()) {
    out["content"] = nullptr;
  }
  if (reasoning_content) out["reasoning_content"] = *reasoning_content;
  if (!tool_calls.empty()) {
    json::value calls = json::value::array();
    for (const auto& call : tool_calls) {
      json::value c = json::value::object();
      if (!call.id.empty()) c["id"] = call.id;
      c["type"] = "function";
      c["function"] = {{"name", call.name}, {"arguments", call.arguments}};
      calls.push_back(std::move(c));
    }
    out["tool_calls"] = std::move(calls);
  }
  return out;
}

void message::fill_call_ids(std::string (*next_id)()) {
  for (auto& call : tool_calls) {
    if (call.id.empty()) call.id = next_id();
  }
}

}  // namespace chatpeg::chat

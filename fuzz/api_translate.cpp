// Fuzz target api_translate: a body of another API the gateway speaks (byte 0 picks Anthropic
// Messages, Messages count_tokens or OpenAI Responses; the rest is JSON text) → its translator
// → the Chat Completions reader → chat::prepare on the bundled template, then the chat body's
// messages replayed as OpenAI deltas through every API's stream writer.
// Checks: never throws or crashes (wrong types, unknown items, deep or huge bodies); a refused
// body is a 400 naming a JSON path of the body ("$..."); a translated body reads as a chat
// request or fails typed (never 500); the writers' output is valid SSE with JSON data.
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "chatpeg/chat/prepare.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/json/json.h"
#include "fuzz_util.h"
#include "server/wire_api.h"
#include "server/messages_api.h"
#include "server/responses_api.h"

namespace {

using namespace chatpeg;

const chat::chat_template& bundled() {
  static const auto t = [] {
    std::ifstream in(std::string(CHATPEG_SOURCE_DIR) + "/examples/chatml_tools.jinja");
    std::ostringstream text;
    text << in.rdbuf();
    auto r = chat::chat_template::create(text.str());
    if (!r) std::abort();
    return *r;
  }();
  return *t;
}

// Every `data:` line of a writer's output parses as JSON.
void check_sse(const std::string& out) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("data: ", 0) != 0 || line == "data: [DONE]") continue;
    if (!json::parse(line.substr(6))) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const int which = data[0] % 3;
  auto body = json::parse(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  if (!body) return 0;
  json::value chat;
  std::optional<server::detail::openai_error> e;
  switch (which) {
    case 0:
      e = server::detail::messages_to_chat(*body, chat);
      break;
    case 1:
      e = server::detail::messages_to_chat(*body, chat, true);
      break;
    default:
      e = server::detail::responses_to_chat(*body, chat);
      break;
  }
  if (e) {
    if (e->status != 400 || e->param.empty() || e->param[0] != '$') std::abort();
    return 0;
  }
  server::detail::chat_call call;
  if (auto ce = server::detail::parse_chat_json(chat, call)) {
    if (ce->status >= 500) std::abort();
    return 0;
  }
  auto prepared = chat::prepare(bundled(), call.request);
  if (!prepared && prepared.error().code == base::errc::internal_error) std::abort();
  // The translated messages as deltas (content, reasoning, tool calls) through every writer.
  const server::detail::response_meta meta{.id = "chatcmpl-fuzz", .created = 1, .model = "m"};
  for (const auto api :
       {server::detail::api_kind::chat_completions, server::detail::api_kind::anthropic_messages,
        server::detail::api_kind::responses}) {
    auto w = server::detail::make_event_writer(api, meta);
    std::string out = w->start();
    for (const auto& m : chat["messages"]) {
      json::value d = json::value::object();
      for (const char* k : {"content", "reasoning_content"})
        if (m.contains(k) && m[k].is_string()) d[k] = m[k];
      if (m.contains("tool_calls")) {
        json::value calls = json::value::array();
        std::int64_t i = 0;
        for (const auto& c : m["tool_calls"]) {
          json::value x = c;
          x["index"] = i++;
          calls.push_back(std::move(x));
        }
        d["tool_calls"] = std::move(calls);
      }
      out += w->delta(d);
    }
    out += w->finish({});
    out += w->error({.status = 502, .message = "x"});
    check_sse(out);
  }
  return 0;
}

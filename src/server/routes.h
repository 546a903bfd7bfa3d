// The gateway's routes, one row each: the path, the method it answers, the API whose shapes
// its answers and errors take, the handler that answers it and its /metrics endpoint label.
// Every question about a path (which handler, which API's error shape, which label) is asked
// of this table. Internal to the server module.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "wire_api.h"

namespace chatpeg::server::detail {

enum class route_handler : std::uint8_t {
  chat,          // Chat Completions: prepare, backend, answer or stream
  prepare,       // the prepared request, without asking the backend
  messages,      // Anthropic's Messages, on the chat pipeline
  count_tokens,  // the rendered prompt's length in backend tokens
  responses,     // OpenAI's Responses, on the chat pipeline
  models,        // the model list
  health,        // liveness and the pipeline in use
  metrics,       // Prometheus text (when enabled)
};

struct route {
  std::string_view path;
  std::string_view method;  // "POST", or "GET" (which answers HEAD too)
  api_kind api;
  route_handler handler;
  std::string_view label;  // chatpeg_requests_total{endpoint=...}
  bool open = false;       // answered without an API key
};

inline constexpr std::array<route, 9> routes = {{
    {"/v1/chat/completions", "POST", api_kind::chat_completions, route_handler::chat,
     "/v1/chat/completions"},
    {"/chat/completions", "POST", api_kind::chat_completions, route_handler::chat,
     "/chat/completions"},
    {"/v1/chat/prepare", "POST", api_kind::chat_completions, route_handler::prepare,
     "/v1/chat/prepare"},
    {"/v1/messages", "POST", api_kind::anthropic_messages, route_handler::messages, "/v1/messages"},
    {"/v1/messages/count_tokens", "POST", api_kind::anthropic_messages, route_handler::count_tokens,
     "/v1/messages/count_tokens"},
    {"/v1/responses", "POST", api_kind::responses, route_handler::responses, "/v1/responses"},
    {"/v1/models", "GET", api_kind::chat_completions, route_handler::models, "/v1/models"},
    {"/health", "GET", api_kind::chat_completions, route_handler::health, "/health", true},
    {"/metrics", "GET", api_kind::chat_completions, route_handler::metrics, "/metrics"},
}};

// The route of exactly this path; nullptr when there is none.
const route* find_route(std::string_view path);

// The API a path's answers speak: its route's, else that of the route whose path is the
// longest prefix of it at a segment boundary (/v1/messages/x answers 404 as Messages does),
// else Chat Completions.
api_kind api_of_path(std::string_view path);

// The endpoint label a path counts under: its route's, else "other" (a client cannot grow
// the label set).
std::string_view metrics_label(std::string_view path);

// Whether the method is one the route answers (GET routes answer HEAD too).
bool method_matches(const route& r, std::string_view method);

}  // namespace chatpeg::server::detail

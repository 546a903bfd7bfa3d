// The OpenAI-compatible gateway (`chatpeg serve`): takes
// /v1/chat/completions requests, renders the prompt with the model's template, asks a raw
// text-completion backend for the continuation (with chatpeg's grammar when the backend takes
// one) and answers with OpenAI chat completions / chunks. Stateless; one instance per process.
//
// Endpoints: POST /v1/chat/completions, POST /v1/chat/prepare, POST /v1/messages and
// /v1/messages/count_tokens (Anthropic's Messages API), POST /v1/responses (OpenAI's
// Responses API), all on the same pipeline, GET /v1/models, GET /health.
// With server_options::metrics, GET /metrics too. With API keys configured
// (server_options::api_keys), all but /health need a key.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/result.h"
#include "chatpeg/chat/template.h"
#include "chatpeg/http/server.h"
#include "chatpeg/response/response.h"
#include "chatpeg/server/backend.h"

namespace chatpeg::server {

enum class log_format : std::uint8_t { text, json, none };

// Connection handling under hostile clients (http::server): connections that are idle or
// still sending their request cost no worker — one event loop reads every request head and
// body (within request_deadline from its first byte, and the head and body limits) and hands
// complete requests to the workers; a request that finds max_queued_requests already waiting
// is answered 503. /health, /v1/models and /metrics are answered by the loop, so they answer
// while every worker is busy. A client that goes away cancels its request and its backend
// read; a client that stops reading its response is given up after client_write_timeout
// without progress or client_write_budget of waiting in all.
struct server_options {
  std::string host = "127.0.0.1";
  int port = 8080;                          // 0 = any free port (see gateway::port())
  std::string model_name = "chatpeg";       // reported by /v1/models and in responses
  std::size_t threads = 8;                  // worker threads = concurrent requests served
  std::size_t max_body_bytes = 8u << 20;    // larger bodies: 413 with a JSON error
  std::size_t max_head_bytes = 64u << 10;   // request line + headers; larger heads: 431
  std::size_t max_request_line = 8u << 10;  // longer request lines (URIs): 414
  // The whole request (head and body) must arrive within this time from its first byte (408).
  std::chrono::seconds request_deadline{30};
  std::chrono::seconds client_write_timeout{30};  // a write to the client without progress
  std::chrono::seconds client_write_budget{120};  // waiting on a slow reader, per response
  std::chrono::seconds keep_alive_timeout{5};     // idle time between two requests
  std::size_t keep_alive_max_requests = 100;      // requests on one connection
  // Complete requests waiting for a worker; 0 = 4 x threads. Beyond: 503.
  std::size_t max_queued_requests = 0;
  std::size_t max_connections = 4096;  // open connections; beyond: 503 and close
  // Per client address; beyond: 503 and close. 0: no limit (behind a reverse proxy every
  // client has the proxy's address).
  std::size_t max_connections_per_client = 0;
  // Caps on a request's tools (count, one schema's size and depth, all tools' size): 400
  // naming the limit and the JSON path, before any work is done for the request.
  chat::request_limits request_limits;
  log_format log = log_format::text;
  // When not empty, every endpoint but /health needs one of these keys, as
  // "Authorization: Bearer KEY" or "x-api-key: KEY" (else 401). Compared in constant time,
  // never logged.
  std::vector<std::string> api_keys;
  // GET /metrics: Prometheus text (requests, latencies, tokens, tool calls, parse fallbacks,
  // backend errors, requests in flight). Off by default; behind the API keys when set.
  bool metrics = false;
  // Receives one line per request (no newline); default writes to stderr. Request fields are
  // escaped: a line never holds a control character.
  std::function<void(std::string_view line)> log_sink;
};

// What the connection limits did since the gateway was created (for tests and monitoring):
// the HTTP server's counters (busy_responses: max_queued_requests were waiting; peak_queued at
// most max_queued_requests; peak_busy_workers at most threads), and the memory of streams.
struct gateway_stats : http::server_stats {
  // Memory held for one streaming client that reads slower than the backend writes (backend
  // text and its per-piece overhead): at most stream_buffer_bytes + one backend piece (the
  // backend read waits beyond).
  std::size_t peak_stream_queued_bytes = 0;
};

// Memory a stream may hold for a slow client (gateway_stats::peak_stream_queued_bytes).
inline constexpr std::size_t stream_buffer_bytes = 1u << 20;

struct gateway_options {
  server_options server;
  backend_options backend;
  // When set, model output is read with this response template (over the rendered prompt,
  // string arguments cast by the request's tool schemas) instead of chatpeg's own parser; the
  // prompt and grammar still come from the chat template. Calls then arrive whole, each in one
  // delta at its region's close.
  response::template_ptr response_template;
};

// API keys from a file: one per line, surrounding whitespace trimmed, blank lines and lines
// starting with '#' skipped. Errors name the file (and line); none when no key is left.
base::result<std::vector<std::string>> read_api_key_file(const std::string& path);

class gateway {
 public:
  static base::result<std::unique_ptr<gateway>> create(
      std::shared_ptr<const chat::chat_template> tmpl, gateway_options options);
  ~gateway();
  gateway(const gateway&) = delete;
  gateway& operator=(const gateway&) = delete;

  // Binds host:port (port 0 picks a free one); errc::io_error when the address is taken.
  base::status bind();
  // The bound port (after bind()).
  int port() const;
  // Serves until stop(); call bind() first.
  base::status listen();
  // Stops a listen() running on another thread; safe to call more than once.
  void stop();
  gateway_stats stats() const;

 private:
  gateway() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace chatpeg::server

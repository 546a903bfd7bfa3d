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
#include "chatpeg/response/response.h"
#include "chatpeg/server/backend.h"

namespace chatpeg::server {

enum class log_format : std::uint8_t { text, json, none };

// Connection handling under hostile clients: a connection occupies a worker from reading its
// first byte to the end of its response (or of its keep-alive), so every wait is bounded by a
// timeout and connections beyond what the workers can take are queued only up to a bound.
// Connections accepted past that bound go to a small overflow lane that answers 503 (JSON,
// Connection: close) instead of waiting; an idle one there is dropped after at most 1 s, a
// trickling one after 3 s.
// A request whose head and body have not arrived within request_deadline is cut (408 when it
// can still be answered) and its connection closed, however steadily the client trickles.
struct server_options {
  std::string host = "127.0.0.1";
  int port = 8080;                        // 0 = any free port (see gateway::port())
  std::string model_name = "chatpeg";     // reported by /v1/models and in responses
  std::size_t threads = 8;                // worker threads = concurrent requests served
  std::size_t max_body_bytes = 8u << 20;  // larger bodies: 413 with a JSON error
  // Request line + headers; larger heads: 431 (or the connection closed). Chunked bodies may
  // carry framing up to max_body_bytes + 64 KiB on top of their payload.
  std::size_t max_head_bytes = 64u << 10;
  // Longest silence while reading a request (per read).
  std::chrono::seconds client_read_timeout{30};
  // The whole request (head and body) must arrive within this time from its first byte.
  std::chrono::seconds request_deadline{30};
  std::chrono::seconds client_write_timeout{30};  // a client that stops reading its response
  std::chrono::seconds keep_alive_timeout{5};     // idle time between two requests
  std::size_t keep_alive_max_requests = 100;      // requests on one connection
  // Accepted connections waiting for a worker; 0 = 4 x threads. Beyond: the overflow lane.
  std::size_t max_queued_connections = 0;
  std::size_t overflow_threads = 2;  // workers of the overflow lane (answering 503)
  log_format log = log_format::text;
  // When not empty, every endpoint but /health needs one of these keys, as
  // "Authorization: Bearer KEY" or "x-api-key: KEY" (else 401). Compared in constant time,
  // never logged.
  std::vector<std::string> api_keys;
  // GET /metrics: Prometheus text (requests, latencies, tokens, tool calls, parse fallbacks,
  // backend errors, requests in flight). Off by default; behind the API keys when set.
  bool metrics = false;
  // Receives one line per request (no newline); default writes to stderr.
  std::function<void(std::string_view line)> log_sink;
};

// What the connection limits did since the gateway was created (for tests and monitoring).
struct gateway_stats {
  std::uint64_t connections = 0;            // connections processed (both lanes)
  std::uint64_t requests = 0;               // requests whose head was read
  std::uint64_t overflowed = 0;             // connections sent to the overflow lane
  std::uint64_t busy_responses = 0;         // 503 answers
  std::uint64_t deadline_exceeded = 0;      // requests cut at request_deadline
  std::uint64_t too_large = 0;              // requests cut by the head or body limit
  std::size_t active_connections = 0;       // being processed now
  std::size_t peak_active_connections = 0;  // at most threads + overflow_threads
  std::size_t peak_queued_connections = 0;  // at most max_queued_connections
  std::size_t peak_request_bytes = 0;       // read for one request: head + body limits at most
  // Backend text queued for one streaming client that reads slower than the backend writes:
  // at most 1 MiB + one backend chunk (the backend read waits beyond).
  std::size_t peak_stream_queued_bytes = 0;
};

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

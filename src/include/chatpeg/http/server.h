// An HTTP/1.1 server whose connections cost no worker while they are idle or still sending:
// one event-loop thread accepts connections, reads and parses request heads and bodies
// (request_parser, with a deadline per request and limits per client address), answers what
// is malformed itself, and hands only complete requests to a fixed pool of workers through a
// bounded queue (503 when it is full). A worker answers the request — a whole response, or a
// stream of chunks — writing with a bound on how long it may wait for a client that does not
// read; then the connection returns to the loop for its next request. While a worker answers,
// the loop watches the client: a client that goes away cancels the request's cancel_source.
// Routes that must answer even when every worker is busy (health checks) run on the loop.
#pragma once

#include <any>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/base/cancel.h"
#include "chatpeg/base/result.h"
#include "chatpeg/http/request.h"

namespace chatpeg::http {

struct response {
  int status = 200;
  // Content-Type and the like. The server writes Date, Content-Length or Transfer-Encoding,
  // and Connection / Keep-Alive itself (a Connection header here asks to close).
  std::vector<header> headers;
  std::string body;
};

// "OK", "Not Found", ... ("Unknown" for a code without a phrase here).
std::string_view reason_phrase(int status);

// Writes a streamed (chunked) response from a worker. Every write waits while the client's
// socket is full, at most write_timeout without progress and write_budget in all for the
// response; past either, or once the client is gone, writes fail and the request is cancelled.
class response_writer {
 public:
  virtual ~response_writer() = default;
  // Sends the status line and headers; the body follows in chunks.
  virtual bool start(int status, const std::vector<header>& headers) = 0;
  virtual bool write(std::string_view piece) = 0;  // one chunk (nothing for an empty piece)
  virtual bool finish() = 0;                       // the last chunk
};

// One request being answered by a worker.
class exchange {
 public:
  virtual ~exchange() = default;
  virtual const request& req() const = 0;
  virtual const std::string& remote_address() const = 0;
  // Set when the client goes away (closed or reset its connection), a write fails or the
  // server stops; a handler polls it or registers a callback that aborts blocking work.
  virtual base::cancel_source& cancel() = 0;
  // Answers with a whole response (once; not after stream()). Nothing is written for a
  // cancelled request: nobody waits for its answer.
  virtual void respond(response r) = 0;
  // Answers with a stream (once; not after respond(); start() fails once cancelled).
  virtual response_writer& stream() = 0;
  // When the request's first byte arrived (for latency in logs).
  virtual std::chrono::steady_clock::time_point received_at() const = 0;
  // The application's context of this request (what the inline handler left in it, if
  // anything); handed to the log call with the request's end.
  virtual std::any& context() = 0;
};

// A finished request, for the access log and metrics: status 0 when no response could be
// written (the client was gone).
struct completed {
  std::string method;
  std::string path;  // as sent (the log escapes it)
  std::string remote_address;
  int status = 0;
  std::chrono::steady_clock::time_point received_at;
  bool on_loop = false;  // answered by the loop (inline route, framing error, busy)
  // The application's context of the request, as its handlers left it (empty when none
  // touched it).
  std::any context;
};

struct server_options {
  std::string host = "127.0.0.1";
  int port = 8081;  // 0: any free port
  std::size_t workers = 8;
  std::size_t max_queued = 64;         // complete requests waiting for a worker; beyond: 503
  std::size_t max_connections = 4096;  // open connections; beyond: 503 and close
  // Per remote address; beyond: 503 and close. 0: no limit (behind a reverse proxy every
  // client has the proxy's address).
  std::size_t max_connections_per_client = 0;
  parse_limits limits;
  std::chrono::milliseconds keep_alive_timeout{5000};  // idle between requests
  std::chrono::milliseconds request_deadline{30000};   // first byte → whole request read
  std::chrono::milliseconds write_timeout{30000};      // a write without progress
  std::chrono::milliseconds write_budget{120000};      // waiting on a slow reader, per response
  std::size_t keep_alive_max_requests = 100;
};

struct server_stats {
  std::uint64_t connections = 0;           // accepted
  std::uint64_t requests = 0;              // complete requests read
  std::uint64_t rejected_connections = 0;  // over max_connections or the per-client limit
  std::uint64_t busy_responses = 0;        // 503: the queue was full
  std::uint64_t deadline_exceeded = 0;     // requests not read within the deadline (408)
  std::uint64_t framing_errors = 0;        // requests answered 4xx/5xx by the parser
  std::uint64_t too_large = 0;             // 413, 414, 431
  std::uint64_t client_gone = 0;           // requests cancelled because the client went away
  std::uint64_t write_timeouts = 0;        // responses given up on a client that did not read
  // Times accepting paused because the process or system was out of descriptors (accepting
  // resumes after a pause, so a full descriptor table never spins the loop).
  std::uint64_t accept_pauses = 0;
  std::size_t open_connections = 0;
  std::size_t peak_open_connections = 0;
  std::size_t busy_workers = 0;
  std::size_t peak_busy_workers = 0;
  std::size_t peak_queued = 0;
  std::size_t peak_request_bytes = 0;  // bytes read for one request, at most
};

// Raises the process's soft limit on open descriptors to its hard limit (a gateway holds two
// per stream: the client's and the backend's). Returns the soft limit now in force.
std::size_t raise_descriptor_limit();

class server {
 public:
  // Answers a request on a worker.
  using handler = std::function<void(exchange&)>;
  // Answers a request on the loop when it returns a response (must be quick and not block);
  // nullopt hands the request to a worker. `context` is the request's (exchange::context()).
  using inline_handler = std::function<std::optional<response>(const request&, std::any& context)>;
  // The body of an error the server answers itself (framing, 408, 503), so it has the
  // application's error shape; `context` goes to the log call with it.
  using error_body =
      std::function<response(int status, std::string_view code, std::string_view message,
                             const request* partial, std::any& context)>;

  static base::result<std::unique_ptr<server>> create(server_options options, handler on_request,
                                                      inline_handler on_loop, error_body on_error,
                                                      std::function<void(const completed&)> log);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  base::status bind();  // binds and listens (port 0: any free port)
  int port() const;     // after bind()
  base::status run();   // serves until stop(); needs bind()
  void stop();          // from any thread (a signal handler may not call it)
  server_stats stats() const;

 private:
  server() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace chatpeg::http

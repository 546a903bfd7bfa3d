// The worker side of one request: the work item the loop hands over (request, socket, cancel
// source) and the exchange a handler answers through. The loop keeps the connection while a
// worker holds its work item; the item carries back whether the connection can be reused.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "chatpeg/http/server.h"
#include "wire.h"

namespace chatpeg::http::detail {

struct server_counters {
  std::atomic<std::uint64_t> connections{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> rejected_connections{0};
  std::atomic<std::uint64_t> busy_responses{0};
  std::atomic<std::uint64_t> deadline_exceeded{0};
  std::atomic<std::uint64_t> framing_errors{0};
  std::atomic<std::uint64_t> too_large{0};
  std::atomic<std::uint64_t> client_gone{0};
  std::atomic<std::uint64_t> write_timeouts{0};
  std::atomic<std::uint64_t> accept_pauses{0};
  std::atomic<std::size_t> open_connections{0};
  std::atomic<std::size_t> peak_open_connections{0};
  std::atomic<std::size_t> busy_workers{0};
  std::atomic<std::size_t> peak_busy_workers{0};
  std::atomic<std::size_t> peak_queued{0};
  std::atomic<std::size_t> peak_request_bytes{0};

  static void raise(std::atomic<std::size_t>& peak, std::size_t value);
};

struct work_item {
  int fd = -1;
  request req;
  std::string remote;
  clock_type::time_point received_at;
  std::size_t served_before = 0;  // requests answered on this connection before this one
  base::cancel_source cancel;
  std::any context;                   // the application's
  std::atomic<bool> peer_eof{false};  // the client shut down its sending side
  // Set by the worker.
  int status = 0;         // written status, 0 when nothing could be written
  bool reusable = false;  // the connection may take another request
};

// Runs `handler` for the item on this worker thread and writes what it answers.
void serve(work_item& item, const server_options& options, const server::handler& handler,
           server_counters& counters);

// How the connection continues after this request (the server's side of keep-alive).
connection_plan plan_for(const request& req, std::size_t served_before, bool peer_eof,
                         const server_options& options);

}  // namespace chatpeg::http::detail

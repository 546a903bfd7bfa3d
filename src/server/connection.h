// Request-level limits on the gateway's client connections. cpp-httplib 0.11 (Debian) bounds
// each single read by a timeout but not a whole request: a client trickling one byte per
// (read timeout - 1 s) keeps a worker forever, and its header count and chunked bodies of
// unrouted requests are unbounded. limited_server replaces httplib's per-connection loop with
// one around limited_stream, which cuts a request when its head and body have not arrived
// within the request deadline or exceed their byte budgets, and counts what it did.
#pragma once

#include <httplib.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace chatpeg::server::detail {

struct connection_limits {
  std::chrono::milliseconds read_timeout{30000};       // longest silence within a request
  std::chrono::milliseconds write_timeout{30000};      // longest wait to write a piece
  std::chrono::milliseconds keep_alive_timeout{5000};  // wait for a request's first byte
  std::chrono::milliseconds request_deadline{30000};   // head + body, from the first byte
  std::size_t keep_alive_max_requests = 100;
  std::size_t max_head_bytes = 64u << 10;       // request line + headers
  std::size_t max_body_read_bytes = 16u << 20;  // body bytes incl. chunked framing
};

// Why a request was cut (the connection is closed after answering, if it can be answered).
enum class cut_reason : std::uint8_t { none, deadline, head_too_large, body_too_large };

// Counters shared by the server loop, the task queue and the handlers (all relaxed atomics).
struct connection_counters {
  std::atomic<std::uint64_t> connections{0};        // connections processed
  std::atomic<std::uint64_t> requests{0};           // requests whose head was read
  std::atomic<std::uint64_t> overflowed{0};         // connections sent to the overflow lane
  std::atomic<std::uint64_t> busy_responses{0};     // 503 answers
  std::atomic<std::uint64_t> deadline_exceeded{0};  // requests cut at the deadline
  std::atomic<std::uint64_t> too_large{0};          // requests cut by a byte budget
  std::atomic<std::size_t> active{0};               // connections being processed now
  std::atomic<std::size_t> peak_active{0};
  std::atomic<std::size_t> peak_queued{0};               // waiting for a regular worker, at most
  std::atomic<std::size_t> peak_request_bytes{0};        // bytes read for one request, at most
  std::atomic<std::size_t> peak_stream_queued_bytes{0};  // backend text waiting for a client

  static void raise(std::atomic<std::size_t>& peak, std::size_t value);
};

// httplib::Stream over a client socket with the limits above. Reads are buffered (httplib
// reads request heads byte by byte); the buffer survives between requests, so pipelined
// requests are not lost.
class limited_stream final : public httplib::Stream {
 public:
  limited_stream(socket_t fd, const connection_limits& limits);

  // Waits up to `timeout` for the first byte of a request; false on timeout, EOF, error or
  // when `listening` becomes INVALID_SOCKET (the server stops).
  bool wait_for_request(std::chrono::milliseconds timeout,
                        const std::atomic<socket_t>& listening) const;
  void start_request();  // the deadline runs from now; byte counters restart
  void head_done();      // further reads are the body
  cut_reason cut() const { return cut_; }
  std::size_t request_bytes() const { return head_bytes_ + body_bytes_; }
  const connection_limits& limits() const { return limits_; }
  // The handler asks to close the connection after this response (unread input, errors).
  void request_close() { close_requested_ = true; }
  bool close_requested() const { return close_requested_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

 private:
  bool wait_readable() const;

  socket_t fd_;
  connection_limits limits_;
  std::chrono::steady_clock::time_point deadline_{};
  std::size_t head_bytes_ = 0;
  std::size_t body_bytes_ = 0;
  bool in_body_ = false;
  bool close_requested_ = false;
  mutable cut_reason cut_ = cut_reason::none;
  std::array<char, 4096> buffer_{};
  std::size_t buffer_begin_ = 0;
  std::size_t buffer_end_ = 0;
};

// The stream of the request being handled on this thread (nullptr outside a request).
limited_stream* current_stream();

// httplib::Server whose connections run through limited_stream. Set the limits before
// listening. A worker thread marked as the short lane (the overflow lane) waits at most 1 s for
// a request, gives it at most 2 s to arrive and serves one request per connection.
class limited_server final : public httplib::Server {
 public:
  explicit limited_server(connection_counters& counters) : counters_(counters) {}
  void set_limits(const connection_limits& limits) { limits_ = limits; }
  static void mark_short_lane();  // called by the overflow lane's threads

 private:
  bool process_and_close_socket(socket_t sock) override;

  connection_counters& counters_;
  connection_limits limits_;
};

}  // namespace chatpeg::server::detail

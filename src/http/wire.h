// The bytes the server writes: response heads (status line, Date, framing, connection
// headers), chunk framing, and writes to a non-blocking socket that wait for a slow reader
// within a per-write timeout and a per-response budget.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "chatpeg/http/request.h"

namespace chatpeg::http::detail {

using clock_type = std::chrono::steady_clock;

// How the connection continues after a response.
struct connection_plan {
  bool keep_alive = false;
  std::chrono::milliseconds idle_timeout{0};  // Keep-Alive: timeout=
  std::size_t remaining = 0;                  // Keep-Alive: max= (requests left)
};

// The head of a response. body_size: Content-Length; nullopt-like npos: chunked. The caller's
// headers come after the server's; Content-Length, Transfer-Encoding, Connection, Keep-Alive
// and Date in them are ignored (the server writes those once).
std::string response_head(int status, const std::vector<header>& headers, std::size_t body_size,
                          const connection_plan& plan);
inline constexpr std::size_t chunked_body = static_cast<std::size_t>(-1);
// A body that ends when the connection closes (a stream to an HTTP/1.0 client).
inline constexpr std::size_t close_delimited_body = static_cast<std::size_t>(-2);

// One chunk of a chunked body ("" for an empty piece: an empty chunk would end the body).
std::string chunk(std::string_view piece);
inline constexpr std::string_view last_chunk = "0\r\n\r\n";

// RFC 9110 IMF-fixdate of now ("Sun, 06 Nov 1994 08:49:37 GMT").
std::string http_date();

// Writes to a non-blocking socket, waiting while it is full: at most `write_timeout` without
// progress, and at most `budget` waiting in all (shared by every write of one response).
struct write_limits {
  std::chrono::milliseconds write_timeout{30000};
  std::chrono::milliseconds budget{120000};
};
enum class write_result { ok, timeout, failed };
class socket_writer {
 public:
  socket_writer(int fd, write_limits limits) : fd_(fd), limits_(limits) {}
  write_result write(std::string_view data);
  std::chrono::milliseconds waited() const;

 private:
  int fd_;
  write_limits limits_;
  clock_type::duration waited_{};
};

// Sets O_NONBLOCK; false on failure.
bool set_nonblocking(int fd);

}  // namespace chatpeg::http::detail

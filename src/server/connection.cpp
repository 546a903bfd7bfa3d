// The gateway's connection loop (see connection.h): httplib's request parsing and routing run
// unchanged (Server::process_request) over limited_stream, which adds what httplib 0.11
// lacks — a deadline for a whole request head + body and byte budgets for both — so a client
// holds a worker for at most keep-alive wait + request deadline + handler + write timeouts.
#include "connection.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace chatpeg::server::detail {

namespace {

using clock_type = std::chrono::steady_clock;

thread_local limited_stream* current = nullptr;
thread_local bool short_lane = false;

// poll() for one event; >0 ready, 0 timeout, <0 error. Retries on EINTR.
int wait_fd(socket_t fd, short events, std::chrono::milliseconds timeout) {
  pollfd p{.fd = fd, .events = events, .revents = 0};
  for (;;) {
    const int ms = static_cast<int>(std::max<std::int64_t>(0, timeout.count()));
    const int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

void address_of(socket_t fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  const int r = peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len);
  if (r != 0) return;
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (::getnameinfo(sa, len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

// Closing a socket with unread input resets the connection, and the client may lose the
// answer just written: after a cut request, stop writing, then read (and drop) what the
// client still sends for a bounded time and amount before closing.
void linger_close(socket_t fd, std::chrono::milliseconds wait) {
  ::shutdown(fd, SHUT_WR);
  char sink[4096];
  const auto until = clock_type::now() + wait;
  for (std::size_t drained = 0; drained < (256u << 10);) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now());
    if (left.count() <= 0 || wait_fd(fd, POLLIN, left) <= 0) break;
    const ssize_t n = ::recv(fd, sink, sizeof sink, 0);
    if (n <= 0) break;
    drained += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace

void connection_counters::raise(std::atomic<std::size_t>& peak, std::size_t value) {
  std::size_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

limited_stream::limited_stream(socket_t fd, const connection_limits& limits)
    : fd_(fd), limits_(limits) {}

limited_stream* current_stream() {
  return current;
}

bool limited_stream::wait_for_request(std::chrono::milliseconds timeout,
                                      const std::atomic<socket_t>& listening) const {
  if (buffer_begin_ < buffer_end_) return true;
  const auto until = clock_type::now() + timeout;
  // In slices, so a stopping server does not wait for idle keep-alive connections.
  while (listening != INVALID_SOCKET) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now());
    if (left.count() <= 0) return false;
    const int r = wait_fd(fd_, POLLIN, std::min(left, std::chrono::milliseconds(100)));
    if (r != 0) return r > 0;
  }
  return false;
}

void limited_stream::start_request() {
  deadline_ = clock_type::now() + limits_.request_deadline;
  head_bytes_ = 0;
  body_bytes_ = 0;
  in_body_ = false;
  cut_ = cut_reason::none;
}

void limited_stream::head_done() {
  in_body_ = true;
}

// Waits for input: at most the read timeout, and past the deadline only for what has already
// arrived (a client that sent its request in time is not cut because a worker was late).
bool limited_stream::wait_readable() const {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - clock_type::now());
  const auto timeout = std::clamp(left, std::chrono::milliseconds(0), limits_.read_timeout);
  const int r = wait_fd(fd_, POLLIN, timeout);
  if (r == 0 && timeout < limits_.read_timeout) cut_ = cut_reason::deadline;
  return r > 0;
}

bool limited_stream::is_readable() const {
  if (cut_ != cut_reason::none) return false;
  return buffer_begin_ < buffer_end_ || wait_readable();
}

bool limited_stream::is_writable() const {
  if (wait_fd(fd_, POLLOUT, limits_.write_timeout) <= 0) return false;
  // Still connected? A readable socket with nothing to peek is a closed one.
  if (wait_fd(fd_, POLLIN, std::chrono::milliseconds(0)) <= 0) return true;
  char c;
  return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

ssize_t limited_stream::read(char* ptr, size_t size) {
  if (cut_ != cut_reason::none) return -1;
  std::size_t& used = in_body_ ? body_bytes_ : head_bytes_;
  const std::size_t budget = in_body_ ? limits_.max_body_read_bytes : limits_.max_head_bytes;
  if (used >= budget) {
    cut_ = in_body_ ? cut_reason::body_too_large : cut_reason::head_too_large;
    return -1;
  }
  size = std::min(size, budget - used);
  if (buffer_begin_ == buffer_end_) {
    if (!wait_readable()) return -1;
    ssize_t n;
    do {
      n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    buffer_begin_ = 0;
    buffer_end_ = static_cast<std::size_t>(n);
  }
  const std::size_t k = std::min(size, buffer_end_ - buffer_begin_);
  std::memcpy(ptr, buffer_.data() + buffer_begin_, k);
  buffer_begin_ += k;
  used += k;
  return static_cast<ssize_t>(k);
}

ssize_t limited_stream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  ssize_t n;
  do {
    n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

void limited_stream::get_remote_ip_and_port(std::string& ip, int& port) const {
  address_of(fd_, true, ip, port);
}

void limited_stream::get_local_ip_and_port(std::string& ip, int& port) const {
  address_of(fd_, false, ip, port);
}

void limited_server::mark_short_lane() {
  short_lane = true;
}

bool limited_server::process_and_close_socket(socket_t sock) {
  counters_.connections.fetch_add(1, std::memory_order_relaxed);
  connection_counters::raise(counters_.peak_active,
                             counters_.active.fetch_add(1, std::memory_order_relaxed) + 1);
  // The overflow lane only reads a request to refuse it: 1 s for its first byte and 2 s for
  // the whole of it, so idle or trickling connections there cannot hold its few workers.
  connection_limits limits = limits_;
  if (short_lane) {
    limits.keep_alive_timeout =
        std::min(limits.keep_alive_timeout, std::chrono::milliseconds(1000));
    limits.request_deadline = std::min(limits.request_deadline, std::chrono::milliseconds(2000));
  }
  limited_stream strm(sock, limits);
  current = &strm;
  std::size_t left = short_lane ? 1 : std::max<std::size_t>(1, limits_.keep_alive_max_requests);
  bool ret = false;
  for (; left > 0; --left) {
    if (!strm.wait_for_request(limits.keep_alive_timeout, svr_sock_)) break;
    strm.start_request();
    bool closed = false;
    bool had_head = false;
    ret = process_request(strm, left == 1, closed, [&](httplib::Request&) {
      strm.head_done();
      had_head = true;
    });
    if (had_head) counters_.requests.fetch_add(1, std::memory_order_relaxed);
    connection_counters::raise(counters_.peak_request_bytes, strm.request_bytes());
    if (strm.cut() == cut_reason::deadline) {
      counters_.deadline_exceeded.fetch_add(1, std::memory_order_relaxed);
    } else if (strm.cut() != cut_reason::none) {
      counters_.too_large.fetch_add(1, std::memory_order_relaxed);
    }
    if (!ret || closed || strm.cut() != cut_reason::none || strm.close_requested()) break;
  }
  current = nullptr;
  if (strm.cut() != cut_reason::none || strm.close_requested()) {
    linger_close(sock, std::min(limits.read_timeout, std::chrono::milliseconds(1000)));
  } else {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
  counters_.active.fetch_sub(1, std::memory_order_relaxed);
  return ret;
}

}  // namespace chatpeg::server::detail

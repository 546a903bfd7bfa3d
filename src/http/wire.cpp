// Response heads and chunk framing as RFC 9112 wants them — one Date, one framing header, one
// Connection header and an honest Keep-Alive (the connection's real idle timeout and the
// requests it has left) — and socket writes that give up on a client that does not read.
#include "wire.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "chatpeg/http/server.h"

namespace chatpeg::http {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

namespace detail {

namespace {

bool server_owned(std::string_view name) {
  for (std::string_view owned :
       {"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Date"}) {
    if (iequals(name, owned)) return true;
  }
  return false;
}

}  // namespace

std::string response_head(int status, const std::vector<header>& headers, std::size_t body_size,
                          const connection_plan& plan) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  out += reason_phrase(status);
  out += "\r\nDate: " + http_date() + "\r\n";
  for (const auto& h : headers) {
    if (server_owned(h.name)) continue;
    out += h.name + ": " + h.value + "\r\n";
  }
  if (body_size == chunked_body) {
    out += "Transfer-Encoding: chunked\r\n";
  } else if (body_size != close_delimited_body) {
    out += "Content-Length: " + std::to_string(body_size) + "\r\n";
  }
  if (plan.keep_alive) {
    out += "Connection: keep-alive\r\nKeep-Alive: timeout=" +
           std::to_string(std::max<std::int64_t>(1, plan.idle_timeout.count() / 1000)) +
           ", max=" + std::to_string(plan.remaining) + "\r\n";
  } else {
    out += "Connection: close\r\n";
  }
  out += "\r\n";
  return out;
}

std::string chunk(std::string_view piece) {
  if (piece.empty()) return {};
  char size[24];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
  std::string out(size, static_cast<std::size_t>(n));
  out.append(piece);
  out += "\r\n";
  return out;
}

std::string http_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

write_result socket_writer::write(std::string_view data) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto left = limits_.budget - duration_cast<milliseconds>(waited_);
      const auto wait = std::min(limits_.write_timeout, left);
      if (wait.count() <= 0) return write_result::timeout;
      pollfd p{.fd = fd_, .events = POLLOUT, .revents = 0};
      const auto start = clock_type::now();
      const int r = ::poll(&p, 1, static_cast<int>(wait.count()));
      waited_ += clock_type::now() - start;
      if (r == 0) return write_result::timeout;
      if (r < 0 && errno != EINTR) return write_result::failed;
      if (r > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) && !(p.revents & POLLOUT)) {
        return write_result::failed;
      }
      continue;
    }
    return write_result::failed;
  }
  return write_result::ok;
}

std::chrono::milliseconds socket_writer::waited() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(waited_);
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

}  // namespace detail
}  // namespace chatpeg::http

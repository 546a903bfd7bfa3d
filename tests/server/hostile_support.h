// Pieces shared by the hostile-client tests: a raw TCP client (what misbehaving clients are
// made of), response picking, tight server limits (1 s timeouts) and a health probe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <string_view>

#include "gateway_harness.h"

namespace chatpeg::server::testing {

inline std::string chat_body(const std::string& extra = "") {
  return R"({"messages":[{"role":"user","content":"hi"}])" + extra + "}";
}

// A raw TCP client (what misbehaving clients are made of). recv waits at most `timeout`.
class raw_client {
 public:
  // receive_buffer > 0: a small receive window (a client that reads slowly fills it soon).
  explicit raw_client(int port, std::chrono::seconds timeout = std::chrono::seconds(10),
                      int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count());
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~raw_client() { close(); }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  bool connected() const { return connected_; }
  bool send(std::string_view bytes) {
    return fd_ >= 0 && ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                           static_cast<ssize_t>(bytes.size());
  }
  // Reads until the server closes the connection (or the recv timeout passes: timed_out).
  std::string read_all(bool* timed_out = nullptr) {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        out.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (timed_out) *timed_out = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      return out;
    }
  }
  // Has the server answered or closed the connection (is there something to read now)?
  bool readable_now() const {
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    return fd_ >= 0 && ::poll(&p, 1, 0) > 0;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

inline int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

inline json::value body_of(const std::string& response) {
  const auto at = response.find("\r\n\r\n");
  if (at == std::string::npos) return {};
  auto v = json::parse(response.substr(at + 4));
  return v ? *v : json::value();
}

inline server_options tight_server() {
  return {.threads = 4,
          .max_body_bytes = 64u << 10,
          .client_read_timeout = std::chrono::seconds(1),
          .client_write_timeout = std::chrono::seconds(1),
          .keep_alive_timeout = std::chrono::seconds(1),
          .keep_alive_max_requests = 10,
          .max_queued_connections = 8,
          .overflow_threads = 2,
          .log = log_format::none};
}

inline bool healthy(const gateway_harness& h) {
  auto c = h.client();
  auto r = c.Get("/health");
  return r && r->status == 200;
}

}  // namespace chatpeg::server::testing

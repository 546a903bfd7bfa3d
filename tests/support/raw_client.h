// A raw TCP client for tests of servers (what misbehaving clients are made of): connect,
// send bytes, half-close, read until the server closes; and the status of a raw response.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

namespace chatpeg::testing {

// A raw TCP client (what misbehaving clients are made of). recv waits at most `timeout`.
class raw_client {
 public:
  // receive_buffer > 0: a small receive window (a client that reads slowly fills it soon).
  // connect_now = false: the socket is made now and connects on connect() (a test that fills
  // the descriptor table makes its clients' sockets first).
  explicit raw_client(int port, std::chrono::seconds timeout = std::chrono::seconds(10),
                      int receive_buffer = 0, bool connect_now = true)
      : port_(port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count());
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect_now) connect();
  }
  bool connect() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    return connected_;
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
  // Ends the sending side (the server sees end of input; the socket still reads).
  void shutdown_write() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
  }
  // Reads what is there within `wait` (at least one read), without waiting for the close.
  std::string read_some(std::chrono::milliseconds wait) {
    std::string out;
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    while (fd_ >= 0 && ::poll(&p, 1, static_cast<int>(wait.count())) > 0) {
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
      wait = std::chrono::milliseconds(50);
    }
    return out;
  }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int port_ = 0;
  int fd_ = -1;
  bool connected_ = false;
};

inline int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

}  // namespace chatpeg::testing

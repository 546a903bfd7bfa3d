// A backend that is not an HTTP server: it accepts one connection at a time, reads what the
// client sends (up to the end of its head and a little body), then misbehaves as told —
// closes without answering, answers bytes that are not HTTP, or stays silent until told to go.
// For the labels of backend failures that the httplib fixture cannot produce.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

namespace chatpeg::server::testing {

class raw_backend {
 public:
  enum class behaviour { close_silently, send_garbage, stay_silent };

  explicit raw_backend(behaviour b) : behaviour_(b) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~raw_backend() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_.load(); }
  // With stay_silent: the client closed its connection (read returned end or error).
  int client_closes() const { return client_closes_.load(); }

 private:
  void run() {
    while (!stop_) {
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      ++accepted_;
      char buf[4096];
      std::string got;
      while (got.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, static_cast<std::size_t>(n));
      }
      if (behaviour_ == behaviour::send_garbage) {
        const std::string junk = "SSH-2.0-OpenSSH_9.2\r\n\x01\x02 not http at all\r\n\r\n";
        ::send(c, junk.data(), junk.size(), MSG_NOSIGNAL);
      } else if (behaviour_ == behaviour::stay_silent) {
        for (;;) {  // until the client goes away or the test ends
          pollfd q{.fd = c, .events = POLLIN, .revents = 0};
          if (stop_) break;
          if (::poll(&q, 1, 50) <= 0) continue;
          if (::recv(c, buf, sizeof buf, 0) <= 0) {
            ++client_closes_;
            break;
          }
        }
      }
      ::close(c);
    }
  }

  behaviour behaviour_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> client_closes_{0};
  std::thread thread_;
};

}  // namespace chatpeg::server::testing

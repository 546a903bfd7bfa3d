// backend_socket and deadline_timer (see backend_socket.h). TCP_INFO comes from the kernel's
// own header, which cannot share a translation unit with glibc's <netinet/tcp.h> (httplib's).
#include "backend_socket.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>

namespace chatpeg::server::detail {

backend_socket::~backend_socket() {
  if (fd_ >= 0) ::close(fd_);
}

void backend_socket::adopt(int fd) {
  const int copy = ::dup(fd);
  std::lock_guard lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = copy;
  if (aborted_ && fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void backend_socket::abort() {
  std::lock_guard lock(mutex_);
  aborted_ = true;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

bool backend_socket::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

std::optional<std::uint64_t> backend_socket::bytes_received() const {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) return std::nullopt;
  tcp_info info{};
  socklen_t len = sizeof info;
  if (::getsockopt(fd_, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
  if (len < offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
    return std::nullopt;
  }
  return info.tcpi_bytes_received;
}

deadline_timer::~deadline_timer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t deadline_timer::at(std::chrono::steady_clock::time_point when,
                                 std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  const std::uint64_t id = next_id_++;
  due_.emplace(std::make_pair(when, id), std::move(fn));
  cv_.notify_all();
  return id;
}

void deadline_timer::remove(std::uint64_t id) {
  std::unique_lock lock(mutex_);
  for (auto it = due_.begin(); it != due_.end(); ++it) {
    if (it->first.second == id) {
      due_.erase(it);
      break;
    }
  }
  cv_.wait(lock, [&] { return running_ != id; });
}

void deadline_timer::run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (due_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto first = due_.begin();
    // A copy: the wait releases the lock, and remove() may free the entry meanwhile.
    const auto when = first->first.first;
    if (std::chrono::steady_clock::now() < when) {
      cv_.wait_until(lock, when);
      continue;
    }
    auto fn = std::move(first->second);
    running_ = first->first.second;
    due_.erase(first);
    lock.unlock();
    fn();
    lock.lock();
    running_ = 0;
    cv_.notify_all();
  }
}

}  // namespace chatpeg::server::detail

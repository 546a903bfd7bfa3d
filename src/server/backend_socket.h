// The backend connection seen from outside httplib: a duplicate of its socket taken when
// httplib creates it, so another thread can abort the exchange (shutdown() wakes a blocked
// read at once) and, after a failure, the kernel can say whether the backend sent anything.
// The duplicate is ours, so its number is never reused while we hold it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace chatpeg::server::detail {

class backend_socket {
 public:
  backend_socket() = default;
  ~backend_socket();
  backend_socket(const backend_socket&) = delete;
  backend_socket& operator=(const backend_socket&) = delete;

  // httplib's socket, as it is created (before it connects).
  void adopt(int fd);
  // Shuts the connection down (now, or as soon as it exists); thread-safe.
  void abort();
  bool aborted() const;
  // Bytes the backend sent on this connection (TCP_INFO), nullopt when unknown.
  std::optional<std::uint64_t> bytes_received() const;

 private:
  mutable std::mutex mutex_;
  int fd_ = -1;
  bool aborted_ = false;
};

// Runs callbacks at deadlines on one thread (started with the first one).
class deadline_timer {
 public:
  deadline_timer() = default;
  ~deadline_timer();
  deadline_timer(const deadline_timer&) = delete;
  deadline_timer& operator=(const deadline_timer&) = delete;

  std::uint64_t at(std::chrono::steady_clock::time_point when, std::function<void()> fn);
  // Removes a callback; waits for it when it is running.
  void remove(std::uint64_t id);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>, std::function<void()>>
      due_;
  std::uint64_t next_id_ = 1;
  std::uint64_t running_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace chatpeg::server::detail

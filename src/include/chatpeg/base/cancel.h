// Cancellation shared between the party that notices a request is no longer wanted (a client
// that went away, a deadline) and the work it abandons (a backend read blocked on a socket).
// cancel() sets the flag once and runs every registered callback on the cancelling thread;
// a callback registered after cancel() runs at once. Callbacks must be quick and must not
// register or remove callbacks themselves.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace chatpeg::base {

class cancel_source {
 public:
  cancel_source() = default;
  cancel_source(const cancel_source&) = delete;
  cancel_source& operator=(const cancel_source&) = delete;

  // Cancels with a reason (kept from the first call; later calls do nothing).
  void cancel(std::string reason);
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  std::string reason() const;

  // Runs `fn` on cancel (now, when already cancelled). The id removes it (remove() waits for a
  // callback that is running on another thread to end, so its captures may then be destroyed).
  std::uint64_t on_cancel(std::function<void()> fn);
  void remove(std::uint64_t id);

 private:
  mutable std::mutex mutex_;
  std::atomic<bool> cancelled_{false};
  std::string reason_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::function<void()>> callbacks_;
  bool running_ = false;  // callbacks are running (under cancel(), outside the mutex)
};

// Registers a callback for the lifetime of a scope.
class cancel_callback {
 public:
  cancel_callback(cancel_source* source, std::function<void()> fn)
      : source_(source), id_(source ? source->on_cancel(std::move(fn)) : 0) {}
  ~cancel_callback() {
    if (source_) source_->remove(id_);
  }
  cancel_callback(const cancel_callback&) = delete;
  cancel_callback& operator=(const cancel_callback&) = delete;

 private:
  cancel_source* source_;
  std::uint64_t id_;
};

}  // namespace chatpeg::base

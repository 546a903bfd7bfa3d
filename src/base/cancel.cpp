// cancel_source: a flag set once, and callbacks run when it is set. The callbacks run outside
// the mutex (a callback may take other locks); remove() waits for running callbacks, so an
// object a callback captured can be destroyed once remove() returns.
#include "chatpeg/base/cancel.h"

#include <thread>
#include <vector>

namespace chatpeg::base {

void cancel_source::cancel(std::string reason) {
  std::vector<std::function<void()>> run;
  {
    std::lock_guard lock(mutex_);
    if (cancelled_.load(std::memory_order_relaxed)) return;
    reason_ = std::move(reason);
    cancelled_.store(true, std::memory_order_release);
    for (auto& [id, fn] : callbacks_) run.push_back(fn);
    running_ = true;
  }
  for (auto& fn : run) fn();
  std::lock_guard lock(mutex_);
  running_ = false;
}

std::string cancel_source::reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

std::uint64_t cancel_source::on_cancel(std::function<void()> fn) {
  std::unique_lock lock(mutex_);
  if (cancelled_.load(std::memory_order_relaxed)) {
    lock.unlock();
    fn();
    return 0;
  }
  const std::uint64_t id = next_id_++;
  callbacks_.emplace(id, std::move(fn));
  return id;
}

void cancel_source::remove(std::uint64_t id) {
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      callbacks_.erase(id);
      if (!running_) return;
    }
    std::this_thread::yield();
  }
}

}  // namespace chatpeg::base

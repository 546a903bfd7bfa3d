// cancel_source: set once with the first reason, callbacks run once on the cancelling thread,
// a callback registered late runs at once, a removed one never runs, and remove() waits for a
// callback running on another thread (so what it captured may be destroyed afterwards).
#include "chatpeg/base/cancel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace chatpeg::base {
namespace {

TEST(CancelSource, CallbacksRunOnceWithTheFirstReason) {
  cancel_source s;
  int runs = 0;
  int removed_runs = 0;
  const auto id = s.on_cancel([&] { ++runs; });
  const auto gone = s.on_cancel([&] { ++removed_runs; });
  s.remove(gone);
  EXPECT_FALSE(s.cancelled());
  s.cancel("first");
  s.cancel("second");
  EXPECT_TRUE(s.cancelled());
  EXPECT_EQ(s.reason(), "first");
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(removed_runs, 0);
  s.remove(id);
  int late = 0;
  s.on_cancel([&] { ++late; });
  EXPECT_EQ(late, 1);
}

TEST(CancelSource, ScopedCallbackIsRemovedAtTheEndOfItsScope) {
  cancel_source s;
  int runs = 0;
  {
    cancel_callback c(&s, [&] { ++runs; });
  }
  s.cancel("x");
  EXPECT_EQ(runs, 0);
  cancel_callback none(nullptr, [&] { ++runs; });  // no source: nothing to do
  EXPECT_EQ(runs, 0);
}

TEST(CancelSource, RemoveWaitsForARunningCallback) {
  cancel_source s;
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  const auto id = s.on_cancel([&] {
    started = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    finished = true;
  });
  std::thread t([&] { s.cancel("slow"); });
  while (!started) std::this_thread::yield();
  s.remove(id);
  EXPECT_TRUE(finished.load());
  t.join();
}

}  // namespace
}  // namespace chatpeg::base

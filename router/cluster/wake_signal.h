#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

namespace santral::router {

// Wakes a thread that waits between rounds: ring() from any thread cuts the current or the
// next wait short; stop() ends the waits for good.
class WakeSignal {
 public:
  void ring() {
    {
      std::lock_guard guard(mutex_);
      rung_ = true;
    }
    wake_.notify_all();
  }
  // False when it was stopped already.
  bool stop() {
    {
      std::lock_guard guard(mutex_);
      if (std::exchange(stopping_, true)) return false;
    }
    wake_.notify_all();
    return true;
  }
  bool stopping() const {
    std::lock_guard guard(mutex_);
    return stopping_;
  }
  // Waits until rung (since the last wait) or `timeout` passed; false once stopped.
  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock guard(mutex_);
    wake_.wait_for(guard, timeout, [this] { return rung_ || stopping_; });
    rung_ = false;
    return !stopping_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool rung_ = false;
  bool stopping_ = false;
};

}  // namespace santral::router

#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace santral::router {

// MONITOR: the clients that are shown every command this router runs, by client id and the
// worker that serves each. Written when a client sends MONITOR and when it sends RESET or
// leaves; the request path reads only watching() (one relaxed load) while nobody monitors.
class Monitors {
 public:
  struct Watcher {
    std::uint64_t client = 0;
    unsigned worker = 0;
  };

  bool watching() const { return count_.load(std::memory_order_relaxed) > 0; }

  void add(std::uint64_t client, unsigned worker) {
    std::lock_guard lock(lock_);
    watchers_.push_back({client, worker});
    count_.store(watchers_.size(), std::memory_order_relaxed);
  }
  void remove(std::uint64_t client) {
    std::lock_guard lock(lock_);
    std::erase_if(watchers_, [client](const Watcher& w) { return w.client == client; });
    count_.store(watchers_.size(), std::memory_order_relaxed);
  }
  std::vector<Watcher> watchers() const {
    std::lock_guard lock(lock_);
    return watchers_;
  }

 private:
  mutable std::mutex lock_;
  std::vector<Watcher> watchers_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace santral::router

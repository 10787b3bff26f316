#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace santral::router {

// Which worker serves each connected client, by client id: a client may name another one that
// a different worker serves (CLIENT TRACKING ... REDIRECT <id>). Written on connect and
// disconnect, read when a client names another and at each invalidation of a client that
// redirects (Client::invalidate); never on the request path.
class ClientDirectory {
 public:
  void add(std::uint64_t client, unsigned worker) {
    std::lock_guard lock(lock_);
    workers_[client] = worker;
  }
  void remove(std::uint64_t client) {
    std::lock_guard lock(lock_);
    workers_.erase(client);
  }
  std::optional<unsigned> worker_of(std::uint64_t client) const {
    std::lock_guard lock(lock_);
    auto found = workers_.find(client);
    if (found == workers_.end()) return std::nullopt;
    return found->second;
  }

 private:
  mutable std::mutex lock_;
  std::unordered_map<std::uint64_t, unsigned> workers_;
};

}  // namespace santral::router

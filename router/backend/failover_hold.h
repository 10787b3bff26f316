#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "router/backend/reply_sink.h"
#include "router/metrics/stats.h"

namespace santral::router {

// Requests that came for a shard marked down, not sent: with failover.wait_ms (a primary that
// follows Sentinel) they wait up to that long instead of failing at once, until the shard
// answers again or the pool hands them to the connection of Sentinel's new primary. Oldest
// first; the connection that owns it (backend_connection.h) decides when they go or fail.
class FailoverHold {
 public:
  struct Waiting {
    std::string request;
    ReplySinkPtr sink;
    std::uint64_t slot;
    std::uint32_t fragment;
    std::chrono::steady_clock::duration limit;  // its reply's, once sent
    std::chrono::steady_clock::time_point until;
    std::optional<config::WriteConcern> concern;  // its namespace's
    std::chrono::steady_clock::time_point arrived = std::chrono::steady_clock::now();
  };

  // How long a request may wait; 0: requests for a down shard fail at once.
  std::chrono::milliseconds wait() const { return wait_; }
  void set_wait(std::chrono::milliseconds wait) { wait_ = wait; }
  bool holds() const { return wait_.count() > 0; }

  // Holds a request (as BackendConnection::send's arguments) for up to wait().
  void hold(std::string_view request, ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment,
            std::chrono::steady_clock::duration limit, const config::WriteConcern* concern);
  // Requests held longer than another's: they go first.
  void put_first(std::deque<Waiting> older);
  // Every request held, in the order it came.
  std::deque<Waiting> take();
  // Fails every request held with `reply` (the connection stops).
  void fail(const std::string& reply, ShardStats& stats);
  // Whether the oldest request's wait is over at `now`.
  bool expired(std::chrono::steady_clock::time_point now) const {
    return !waiting_.empty() && waiting_.front().until <= now;
  }
  // Fails every request whose wait is over at `now` with `reply` (FailoverWaitOver), each
  // told how long it waited for shard `shard_index`.
  void expire(std::chrono::steady_clock::time_point now, std::size_t shard_index,
              const std::string& reply, ShardStats& stats);

  bool empty() const { return waiting_.empty(); }
  std::size_t size() const { return waiting_.size(); }

 private:
  std::chrono::milliseconds wait_{0};
  std::deque<Waiting> waiting_;  // oldest first
};

}  // namespace santral::router

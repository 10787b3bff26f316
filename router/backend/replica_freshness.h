#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace santral::router {

// Whether each replica may serve reads, as the first worker measures it (replica_watch.h) and
// every worker reads it when it picks a replica (connection_pool.h). A replica serves reads
// only while it is in sync with its primary: not syncing or loading, its link to the primary
// up (or down for less than `read_from.max_lag_ms`), and, with `max_lag_ms`, no write older
// than that missing.
class ReplicaFreshness {
 public:
  enum class Verdict : int { Unknown, Fresh, Stale };

  // One replica's: written by the first worker, read by all.
  struct State {
    std::atomic<Verdict> verdict{Verdict::Unknown};
    std::atomic<std::int64_t> lag_ms{-1};  // -1: not measured
    // Whether reads may go there; an unmeasured replica only while no lag bound is set.
    bool fresh(bool bounded) const {
      auto v = verdict.load(std::memory_order_relaxed);
      return v == Verdict::Fresh || (v == Verdict::Unknown && !bounded);
    }
    std::string why() const;  // for an error and SANTRAL SHARDMAP
    void set(Verdict v, std::int64_t lag, std::string why);

   private:
    mutable std::mutex lock_;
    std::string why_ = "not measured yet";
  };

  // The state of the replica at `address` (made on first use; lives as long as any user).
  std::shared_ptr<State> state(const std::string& address);

 private:
  std::mutex lock_;
  std::map<std::string, std::weak_ptr<State>> states_;
};

// What INFO replication says of a replica, and of its primary's offset over time: the
// measurement behind a verdict, kept apart so that it can be tested without servers.
struct ReplicaReading {
  bool is_replica = false;         // role:slave
  bool link_up = false;            // master_link_status:up
  bool syncing = false;            // master_sync_in_progress:1 (also while it loads what it got)
  std::int64_t down_since_s = -1;  // master_link_down_since_seconds (-1: never up since start)
  std::int64_t offset = -1;        // slave_repl_offset: what it has applied
};
ReplicaReading read_replica_info(std::string_view info);
// master_repl_offset of a primary's INFO replication; -1 when absent.
std::int64_t read_primary_offset(std::string_view info);

// A primary's replication offset as sampled over time.
class OffsetHistory {
 public:
  using Clock = std::chrono::steady_clock;
  void add(Clock::time_point at, std::int64_t offset);
  // How long ago the first write a replica at `offset` lacks reached the primary (as of `now`;
  // 0 when it lacks nothing the samples show).
  std::chrono::milliseconds behind(std::int64_t offset, Clock::time_point now) const;

 private:
  std::deque<std::pair<Clock::time_point, std::int64_t>> samples_;  // offsets only rise
};

struct ReplicaJudgement {
  ReplicaFreshness::Verdict verdict;
  std::int64_t lag_ms;  // -1 when unknown
  std::string why;
};
// `max_lag`: read_from.max_lag_ms (0: no bound on lag).
ReplicaJudgement judge_replica(const ReplicaReading& reading, const OffsetHistory& primary,
                               OffsetHistory::Clock::time_point now,
                               std::chrono::milliseconds max_lag);

}  // namespace santral::router

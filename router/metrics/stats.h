#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "protocol/command_table.h"

namespace santral::router {

// Request latencies in logarithmic buckets (about 19% wide), from 1 µs to about 70 s, so that
// percentiles are cheap to keep per worker and exact enough to merge.
class LatencyHistogram {
 public:
  static constexpr std::size_t kBuckets = 108;

  void record(std::chrono::nanoseconds latency);
  void merge(const LatencyHistogram& other);
  std::uint64_t count() const { return count_; }
  double sum_seconds() const { return static_cast<double>(sum_ns_) / 1e9; }
  // The latency below which `quantile` (0..1) of the recorded ones fall, in seconds.
  double percentile(double quantile) const;
  // Upper bound of bucket `i`, in seconds; the cumulative buckets of the Prometheus output.
  static double upper_bound(std::size_t i);
  std::uint64_t bucket(std::size_t i) const { return buckets_[i]; }

 private:
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ns_ = 0;
};

// What one worker saw of one shard (a primary or a replica address).
struct ShardStats {
  std::uint64_t requests = 0;
  std::uint64_t errors = 0;  // error replies and failed requests
  std::uint64_t timeouts = 0;
  std::uint64_t writes_unconfirmed = 0;  // answered NOREPLICAS: too few replicas (write_concern)
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t in_flight = 0;  // filled in when stats are collected
  LatencyHistogram latency;

  void merge(const ShardStats& other);
};

struct CommandStats {
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  LatencyHistogram latency;

  void merge(const CommandStats& other);
};

// Counters of one worker, touched only by its thread; the admin API collects a copy from each
// worker and merges them, so counting never takes a lock on the request path.
struct WorkerStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t connected_clients = 0;  // filled in when stats are collected
  std::uint64_t client_bytes_in = 0;
  // Requests read whole from clients: each parsed once, however long it waits before it runs.
  std::uint64_t requests_parsed = 0;
  std::uint64_t client_bytes_out = 0;
  std::map<std::string, ShardStats, std::less<>> shards;  // by "name" or "name@replica"
  std::unordered_map<const protocol::CommandSpec*, CommandStats> commands;

  // A client's command was dispatched, and later answered after `latency` (an error reply).
  // The counters of a command are found once per request (at its call) and kept with the
  // request's reply slot; an unordered_map's elements stay where they are.
  CommandStats& called(const protocol::CommandSpec& command) {
    auto& stats = commands[&command];
    ++stats.calls;
    return stats;
  }
  static void answered(CommandStats& stats, std::chrono::nanoseconds latency, bool error) {
    stats.latency.record(latency);
    if (error) ++stats.errors;
  }
  void merge(const WorkerStats& other);
};

// Totals a worker republishes on every tick, for INFO on any worker to read without a lock
// (at most one tick old).
struct WorkerTotals {
  std::atomic<std::uint64_t> commands{0};
  std::atomic<std::uint64_t> command_errors{0};
  std::atomic<std::uint64_t> shard_requests{0};
  std::atomic<std::uint64_t> shard_errors{0};
  std::atomic<std::uint64_t> shard_timeouts{0};
  std::atomic<std::uint64_t> client_bytes_in{0};
  std::atomic<std::uint64_t> requests_parsed{0};
  std::atomic<std::uint64_t> client_bytes_out{0};
  std::atomic<std::uint64_t> near_cache_hits{0};
  std::atomic<std::uint64_t> near_cache_misses{0};
  std::atomic<std::uint64_t> near_cache_evictions{0};
  std::atomic<std::uint64_t> near_cache_invalidations{0};
  std::atomic<std::uint64_t> near_cache_bytes{0};
  std::atomic<std::uint64_t> near_cache_keys{0};
};

}  // namespace santral::router

#include "router/metrics/stats.h"

#include <bit>
#include <cmath>

namespace santral::router {

namespace {

// Bucket of a latency in ns: 4 buckets per doubling from 1 µs (1024 ns).
std::size_t bucket_of(std::uint64_t ns) {
  if (ns < 1024) return 0;
  int exponent = std::bit_width(ns) - 1;  // floor(log2 ns), >= 10
  std::uint64_t quarter = (ns >> (exponent - 2)) & 3;
  std::size_t index = static_cast<std::size_t>(exponent - 10) * 4 + quarter + 1;
  return std::min(index, LatencyHistogram::kBuckets - 1);
}

}  // namespace

double LatencyHistogram::upper_bound(std::size_t i) {
  if (i == 0) return 1024e-9;
  std::size_t exponent = (i - 1) / 4 + 10;
  std::size_t quarter = (i - 1) % 4;
  double low = std::ldexp(1.0, static_cast<int>(exponent));
  return low * (1.0 + 0.25 * static_cast<double>(quarter + 1)) * 1e-9;
}

void LatencyHistogram::record(std::chrono::nanoseconds latency) {
  auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(latency.count(), 0));
  ++buckets_[bucket_of(ns)];
  ++count_;
  sum_ns_ += ns;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
}

double LatencyHistogram::percentile(double quantile) const {
  if (count_ == 0) return 0;
  auto rank = static_cast<std::uint64_t>(std::ceil(quantile * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank && buckets_[i] > 0) return upper_bound(i);
  }
  return upper_bound(kBuckets - 1);
}

void ShardStats::merge(const ShardStats& other) {
  requests += other.requests;
  errors += other.errors;
  timeouts += other.timeouts;
  writes_unconfirmed += other.writes_unconfirmed;
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  in_flight += other.in_flight;
  latency.merge(other.latency);
}

void CommandStats::merge(const CommandStats& other) {
  calls += other.calls;
  errors += other.errors;
  latency.merge(other.latency);
}

void WorkerStats::merge(const WorkerStats& other) {
  connections_accepted += other.connections_accepted;
  connected_clients += other.connected_clients;
  client_bytes_in += other.client_bytes_in;
  requests_parsed += other.requests_parsed;
  client_bytes_out += other.client_bytes_out;
  for (const auto& [name, shard] : other.shards) shards[name].merge(shard);
  for (const auto& [name, command] : other.commands) commands[name].merge(command);
}

}  // namespace santral::router

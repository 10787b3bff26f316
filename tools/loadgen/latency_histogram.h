#pragma once

#include <cstdint>
#include <vector>

namespace santral::loadgen {

// Latencies in µs, kept HDR-style in log-linear buckets: exact below 256 µs, and within 1/128
// (0.8%) of the value above, in a fixed 60 KiB however long the run. The maximum is exact.
class LatencyHistogram {
 public:
  LatencyHistogram();

  void record(std::uint64_t us);
  std::uint64_t count() const { return count_; }
  std::uint64_t max() const { return max_; }
  // The value at or below which `percent` % of the recorded latencies lie (the highest value of
  // that bucket, at most max()); 0 when nothing was recorded.
  std::uint64_t percentile(double percent) const;

 private:
  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0;
  std::uint64_t max_ = 0;
};

}  // namespace santral::loadgen

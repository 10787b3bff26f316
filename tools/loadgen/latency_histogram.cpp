#include "tools/loadgen/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace santral::loadgen {
namespace {

// Values below 2 * kSubBuckets have a bucket each; above, each power of two is split into
// kSubBuckets buckets: value v with bit width w goes to shift = w - 8 and mantissa v >> shift
// (128 .. 255), bucket shift * 128 + mantissa.
constexpr int kSubBits = 7;
constexpr std::uint64_t kSubBuckets = 1u << kSubBits;
constexpr std::size_t kBucketCount = (64 - kSubBits) * kSubBuckets + kSubBuckets;

std::size_t bucket_of(std::uint64_t value) {
  if (value < 2 * kSubBuckets) return static_cast<std::size_t>(value);
  const int shift = std::bit_width(value) - (kSubBits + 1);
  return static_cast<std::size_t>(shift) * kSubBuckets + (value >> shift);
}

std::uint64_t highest_in_bucket(std::size_t bucket) {
  if (bucket < 2 * kSubBuckets) return bucket;
  const std::uint64_t shift = bucket / kSubBuckets - 1;
  const std::uint64_t mantissa = bucket - shift * kSubBuckets;
  return ((mantissa + 1) << shift) - 1;
}

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBucketCount, 0) {}

void LatencyHistogram::record(std::uint64_t us) {
  ++buckets_[bucket_of(us)];
  ++count_;
  max_ = std::max(max_, us);
}

std::uint64_t LatencyHistogram::percentile(double percent) const {
  if (count_ == 0) return 0;
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(percent / 100.0 * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t bucket = 0; bucket < buckets_.size(); ++bucket) {
    seen += buckets_[bucket];
    if (seen >= rank) return std::min(highest_in_bucket(bucket), max_);
  }
  return max_;
}

}  // namespace santral::loadgen

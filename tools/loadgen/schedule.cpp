#include "tools/loadgen/schedule.h"

#include <algorithm>
#include <cmath>

namespace santral::loadgen {

Clock::time_point Schedule::due(std::uint64_t i) const {
  const auto ns = std::llround(static_cast<double>(i) * 1e9 / rate_);
  return start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns));
}

std::uint64_t Schedule::due_by(Clock::time_point now) const {
  if (now < start_) return 0;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  auto n = static_cast<std::uint64_t>(std::floor(elapsed * rate_)) + 1;
  n = std::min(n, total_);
  // The floating-point estimate can be one off; due() is the definition.
  while (n > 0 && due(n - 1) > now) --n;
  while (n < total_ && due(n) <= now) ++n;
  return n;
}

}  // namespace santral::loadgen

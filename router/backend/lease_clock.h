#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace santral::router {

// The clock a fleet lease is judged by (router/cluster/): CLOCK_BOOTTIME, which counts on while
// the machine or its VM is suspended. steady_clock (CLOCK_MONOTONIC) stops then, so a router
// woken from a suspend would believe its lease still had the time it had when it slept. Like
// steady_clock it never jumps with the wall clock (NTP, an operator's date).
inline std::int64_t lease_clock_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_BOOTTIME, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

inline std::int64_t lease_clock_ns(std::chrono::nanoseconds from_now) {
  return lease_clock_ns() + from_now.count();
}

}  // namespace santral::router

#pragma once

#include <chrono>
#include <cstdint>

namespace santral::loadgen {

using Clock = std::chrono::steady_clock;

// When each request is meant to leave: request i at start + i / rate, for i below total. The
// generator keeps to it whatever the replies do (open loop).
class Schedule {
 public:
  Schedule(Clock::time_point start, double rate, std::uint64_t total)
      : start_(start), rate_(rate), total_(total) {}

  Clock::time_point due(std::uint64_t i) const;
  // The number of requests due at `now` (requests 0 .. n-1), at most total().
  std::uint64_t due_by(Clock::time_point now) const;

  Clock::time_point start() const { return start_; }
  std::uint64_t total() const { return total_; }
  // Ends the schedule early: requests from `total` on are not sent (--until-eof).
  void end_at(std::uint64_t total) { total_ = total; }

 private:
  Clock::time_point start_;
  double rate_;
  std::uint64_t total_;
};

}  // namespace santral::loadgen

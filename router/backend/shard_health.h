#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "config/config.h"

namespace santral::router {

// Whether a shard answers, as one of its connections sees it (Envoy keeps this apart from the
// connection too, as outlier detection):
//   - health.failures failures in a row mark the shard down (ejected): its requests fail at
//     once with the reason instead of waiting out timeouts;
//   - a down shard is tried again after reconnect_min, then twice as long each time, up to
//     reconnect_max;
//   - it is taken back only when a PING on a new connection is answered;
//   - an idle connection owes a PING every health.interval, which counts like a request.
// Times are passed in, so that tests can run it on a clock of their own.
class ShardHealth {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ShardHealth(const config::Config& config) { configure(config); }
  // The settings in force from now on (after a reload).
  void configure(const config::Config& config);

  bool ejected() const { return ejected_; }
  std::uint32_t failures() const { return failures_; }  // in a row
  // Why the shard is down (or the connection, a lent one that is not marked down).
  const std::string& down_reason() const { return down_reason_; }
  void set_down_reason(std::string reason) { down_reason_ = std::move(reason); }

  // The connection is up: it has been idle since `now`.
  void connected(Clock::time_point now) { last_reply_ = now; }
  // The shard answered something: its failures in a row end.
  void answered(Clock::time_point now) {
    last_reply_ = now;
    failures_ = 0;
  }
  // The connection failed; `counts`: as a failure of the shard's (not the router's own write
  // fence). True: the shard is to be marked down (it is already, or this failure is the
  // health.failures-th in a row).
  bool failed(bool counts);
  // Marks the shard down for `reason`. True if it was not down before (say so once).
  bool eject(std::string reason);
  // How long to wait before connecting again to a shard marked down.
  std::chrono::milliseconds next_backoff();
  // A PING was answered. True when it takes a shard marked down back.
  bool probe_answered();
  // Whether an idle connection that is not marked down owes a PING at `now`; if so it is
  // taken as sent.
  bool probe_due(Clock::time_point now);

 private:
  std::uint32_t threshold_ = 3;  // health.failures
  std::chrono::milliseconds interval_{1000};
  std::chrono::milliseconds reconnect_min_{100};
  std::chrono::milliseconds reconnect_max_{2000};

  bool ejected_ = false;  // marked down; traffic only after a PING is answered
  std::uint32_t failures_ = 0;
  std::chrono::milliseconds backoff_{0};
  Clock::time_point last_reply_;
  std::string down_reason_;
};

}  // namespace santral::router

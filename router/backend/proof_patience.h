#pragma once

#include <algorithm>
#include <chrono>

namespace santral::router {

// A question whose answer is a shard's proof (CLIENT KILL ID for a connection given up on, an
// earlier run's CLIENT LIST) has no deadline: a stalled shard answers once it wakes, and only
// its answer proves anything. But a link can lose the question without closing its connection
// (a half-open TCP connection; the fault harness's blackhole), and then no answer ever comes.
// So a question silent for its patience is asked again on a new connection (the old one closed:
// a question of this kind running late does no harm). The patience starts at the request
// timeout and doubles each time, up to 16 s; an answer from the shard sets it back.
class ProofPatience {
 public:
  static constexpr std::chrono::milliseconds kLongest{16000};

  explicit ProofPatience(std::chrono::milliseconds request_timeout)
      : first_(std::clamp(request_timeout, std::chrono::milliseconds(100), kLongest)),
        now_(first_) {}

  std::chrono::milliseconds now() const { return now_; }
  void ran_out() { now_ = std::min(now_ * 2, kLongest); }
  void answered() { now_ = first_; }

 private:
  std::chrono::milliseconds first_;
  std::chrono::milliseconds now_;
};

}  // namespace santral::router

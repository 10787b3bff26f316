#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace santral::router {

class ControlPlane;

// What GET /livez and GET /readyz answer: 200 or 503, with a JSON body of `status` and
// `reason` only (the probes need no admin token, so they say nothing more).
struct ProbeAnswer {
  bool ok = false;
  std::string status;  // live, stuck; ready, starting, shard_down, worker_silent, and
                       // ControlPlane::Unready's
  std::string reason;  // empty when ok
};

// The orchestrator's probes, on the server's thread (the admin listener's):
//
//   live():  a probe posted to every worker's io_context answers within `bound` (the
//            server's own loop answers, or this would not run): the process serves its loops.
//   ready(): nothing of the process stands in the way (ControlPlane::unready(): draining,
//            out of touch with the fleet, its map refused or behind), and every worker
//            reaches the primary of every shard of the map it routes by.
//
//   admin ──post──► worker 0 ──answer──► admin ┐
//         ──post──► worker 1 ──answer──► admin ┼─ all in, or `bound` passed: done(answer)
//         ──timer(bound) ────────────────────► ┘
class HealthProbes {
 public:
  static constexpr std::chrono::milliseconds kBound{1000};

  explicit HealthProbes(ControlPlane& server, std::chrono::milliseconds bound = kBound)
      : server_(server), bound_(bound) {}

  void live(std::function<void(ProbeAnswer)> done);
  void ready(std::function<void(ProbeAnswer)> done);

 private:
  ControlPlane& server_;
  std::chrono::milliseconds bound_;
  // Until the first time it was ready, a shard not yet reached is "starting", not "down".
  bool ever_ready_ = false;
};

}  // namespace santral::router

#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "router/analysis/sampled_request.h"
#include "router/routes/routing.h"

namespace santral::router {

// One worker's share of SANTRAL ANALYZE: while an analysis runs (its rate published in
// `every`, one request in `every`; 0 when none runs) each due request is copied here. Used on
// its worker's thread only; the server takes what was sampled with take().
class RequestSampler {
 public:
  // At most this many samples per worker and analysis: the rest are not kept.
  static constexpr std::size_t kMostSamples = 500'000;

  // Whether this request is due: one in `every` on average, the gaps drawn at random (uniform
  // in [1, 2 * every - 1]) so that a client's repeating pattern (SET, GET, SET, GET) cannot
  // line up with them. A countdown; the draw only when it ends.
  bool due(std::uint32_t every) {
    if (countdown_ > 2 * every) countdown_ = every;  // the rate went up
    if (--countdown_ != 0) return false;
    countdown_ = next_gap(every);
    return true;
  }
  void sample(const Routed& routed);
  std::vector<SampledRequest> take() { return std::exchange(taken_, {}); }

 private:
  std::uint32_t next_gap(std::uint32_t every) {
    // xorshift64: quick, and plenty random for spacing samples.
    random_ ^= random_ << 13;
    random_ ^= random_ >> 7;
    random_ ^= random_ << 17;
    return every <= 1 ? 1 : 1 + static_cast<std::uint32_t>(random_ % (2 * every - 1));
  }

  std::uint32_t countdown_ = 1;
  std::uint64_t random_ = 0x9e3779b97f4a7c15ULL;
  std::vector<SampledRequest> taken_;
};

}  // namespace santral::router

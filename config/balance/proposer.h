#pragma once

#include <cstddef>
#include <span>

#include "config/balance/proposal.h"
#include "config/balance/unit.h"

namespace santral::balance {

struct Goal {
  std::size_t shards = 0;
  double target_ratio = 1.2;  // the busiest shard's load over the mean, at most (seeds: hot spot)
};

// Proposes moves that bring the busiest shard within `goal.target_ratio` of the mean load, moving
// as few keys as it can. Pure: it reads the units and returns a proposal, nothing is applied.
//
//   ceiling  = target x mean, or the heaviest jumbo's load when that is more (no proposal can go
//              below a jumbo, so no shard need be lighter than it)
//   split    every unit heavier than the ceiling that has children; one without is a jumbo
//   repeat   while the busiest shard is above the ceiling, move one of its pieces that fits on
//            another shard: one piece that sheds the whole excess, if it costs no more keys
//            than the densest pieces (load per key) would; else the heaviest of the densest.
//            It goes to a shard that holds a piece of the same split, if one has room (a split
//            unit stays on few shards), else to the least loaded.
//   stuck    nothing fits anywhere: split the heaviest splittable piece there and go on, or stop
//            with the target not met
Proposal propose_balance(std::span<const Unit> units, const Goal& goal);

}  // namespace santral::balance

#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace santral::balance {

// What the balancer places: a directory group, a range, a slot range, a ring arc. Its load (ops/s,
// or accesses in a trace) is what the hot-spot ratio counts; its keys and bytes are what moving it
// costs. `children` are the finer units it can be cut into (a seller's seller-day groups, a range's
// halves at a sampled median); their loads add up to the unit's, and their `shard` is ignored: a
// split leaves every piece on the unit's shard. A unit without children moves whole or not at all.
struct Unit {
  std::string name;
  std::size_t shard = 0;
  double load = 0;
  std::uint64_t keys = 0;
  std::uint64_t bytes = 0;
  std::vector<Unit> children;
  // Placed by a hash (a ring's, a zone's): its load counts on its shard, but it never moves.
  bool pinned = false;
};

}  // namespace santral::balance

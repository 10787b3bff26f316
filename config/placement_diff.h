#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "config/shard_map.h"

namespace santral::config {

// What a new map moves, as the units an operator recognises: ring arcs, slots, ranges,
// directory groups. One MovingUnit per placement (the default one, or a namespace) and pair of
// shards; `what` lists its pieces ("slots 0-1023, 4096-4100", "12 ring arcs").
struct MovingUnit {
  std::string placement;  // "default" or the namespace's name
  std::string what;
  std::string from, to;  // shard names
  double share = 0;      // of the placement's hash space, slots or groups (0..1); 0: unknown
};

// Every unit whose owner differs between the maps, compared by shard address (a renamed shard
// has not moved). Empty when nothing moves; a placement at random is never compared.
std::vector<MovingUnit> moving_units(const ShardMap& from, const ShardMap& to);

// The placement (default or a namespace's name) a key is placed by in `map`.
std::string placement_of(const ShardMap& map, std::string_view key);

}  // namespace santral::config

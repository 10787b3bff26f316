#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "placement/shard_map.h"

namespace santral::placement {

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
// has not moved). Empty when nothing moves; a placement at random is never compared. When the
// key -> shard function itself changes (key_function_change), any key may move: one unit,
// "every key", which the move's walk settles key by key.
std::vector<MovingUnit> moving_units(const ShardMap& from, const ShardMap& to);

// What changes the way a key becomes a shard before any table is consulted: the hash or its
// tag, the namespaces' patterns, order or shard-key fields, or what a range namespace passes
// on to the next rule. Empty when nothing of that changes (the tables are then compared unit
// by unit).
std::string key_function_change(const ShardMap& from, const ShardMap& to);

// The share of keys whose owner (by shard address) differs between the maps, estimated from
// sampled keys: plain keys, and keys shaped like every namespace's pattern.
double sampled_moved_share(const ShardMap& from, const ShardMap& to);

// The placement (default or a namespace's name) a key is placed by in `map`.
std::string placement_of(const ShardMap& map, std::string_view key);

}  // namespace santral::placement

#pragma once

#include <string>
#include <vector>

#include "placement/shard_map.h"

namespace santral::placement {

// What a new shard map would move, before any data is copied: which shards come and go, and
// how much of the hash space (so, of the keys) gets another owner.
struct PlacementChange {
  std::vector<std::string> added;  // shard names
  std::vector<std::string> removed;
  double moved_fraction = 0;  // of the hash space, 0..1
  bool comparable = true;     // false when either map places keys at random
  // The key -> shard function changed (`why`): the fraction is of sampled keys, not of the
  // hash space.
  bool sampled_keys = false;
  std::string why;
  std::string summary() const;
};

PlacementChange compare_placement(const ShardMap& before, const ShardMap& after);

}  // namespace santral::placement

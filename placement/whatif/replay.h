#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "placement/shard_map.h"
#include "placement/whatif/trace.h"

namespace santral::whatif {

// A key of no namespace: the map's default placement.
constexpr std::int16_t kDefaultPlacement = -1;

// Where every trace key lands under one ShardMap: its shard (ShardMap::shard_for_key, the
// router's own entry point) and the namespace that placed it.
struct Replay {
  std::size_t shard_count = 0;
  std::vector<std::uint16_t> shard;  // per trace key
  std::vector<std::int16_t> space;   // per trace key: namespace index or kDefaultPlacement
};

// The namespace that places `key` and its shard key, as ShardMap decides it: the first whose
// pattern matches and whose table accepts the shard key; a non-empty hash tag replaces the shard
// key. kDefaultPlacement when none does.
std::int16_t namespace_of(const placement::ShardMap& map, std::string_view key,
                          std::string_view& shard_key);

// Throws std::logic_error if namespace_of and ShardMap::place disagree on a sampled key.
Replay replay(const placement::ShardMap& map, const Trace& trace);

}  // namespace santral::whatif

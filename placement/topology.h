#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"

namespace santral::placement {

// A placement change in progress: the keys whose owner in `from` differs from the topology's
// map are moving. Each is looked for on its old owner first (and pulled over), then served by
// its new one (router/resharding/).
struct Move {
  std::shared_ptr<const ShardMap> from;  // the map the data is leaving
  // from's shard index -> the index of the same server in the topology's map.
  std::vector<std::size_t> from_shard;
  // Changes with every switch of direction: a key pulled under another epoch is pulled again.
  std::uint64_t epoch = 0;
  // The placements this move cannot touch (placement/move_scope.h): by index of the
  // topology's map's namespaces (`namespaces` is that map's first), and its default placement.
  // Left empty and false, every key is looked up on `from` too.
  const Namespace* namespaces = nullptr;
  std::vector<char> settled;
  bool default_settled = false;

  // The shard that may still hold `key` when it is not `owner`'s: its old owner, in the
  // topology's indices; nullopt when the key does not move.
  std::optional<std::size_t> source_of(std::string_view key, std::size_t owner) const {
    std::size_t was = from_shard[from->shard_for_key(key)];
    if (was == owner) return std::nullopt;
    return was;
  }
  // The same for a key the topology's map placed (`owner`, with its namespace): a key of a
  // settled placement is not looked up on `from`.
  std::optional<std::size_t> source_of(std::string_view key, const KeyOwner& owner) const {
    if (settled_placement(owner.ns)) return std::nullopt;
    return source_of(key, owner.shard);
  }
  // `ns`: one of the topology's map's namespaces (the map settle_unmoved was given), or nullptr.
  bool settled_placement(const Namespace* ns) const {
    if (ns == nullptr) return default_settled;
    // As addresses: a namespace of another map is simply not found.
    auto at = reinterpret_cast<std::uintptr_t>(ns);
    auto first = reinterpret_cast<std::uintptr_t>(namespaces);
    if (at < first) return false;
    std::size_t index = (at - first) / sizeof(Namespace);
    return index < settled.size() && settled[index] != 0;
  }
};

// One version of the configuration and the shard map built from it. A reload makes a new one
// and hands it to every worker; requests already routed finish on the one they started with.
struct Topology {
  std::uint64_t version = 1;  // this router's own count, one per topology it serves
  // The version operators see (INFO config_version, SANTRAL SHARDMAP, /config): in a fleet the
  // etcd revision of the map (router/cluster/); `version` otherwise (0 here).
  std::uint64_t map_version = 0;
  std::shared_ptr<const config::Config> config;
  std::shared_ptr<const ShardMap> map;
  std::shared_ptr<const Move> move;  // set while keys move
  // The map salted counters' sub-keys are named by (nullptr: `map`). A move keeps the names
  // its counters already have: only their shards change, and the sub-keys move like any key.
  std::shared_ptr<const ShardMap> salt_naming;

  const ShardMap& naming_map() const { return salt_naming ? *salt_naming : *map; }
  std::uint64_t shown_version() const { return map_version != 0 ? map_version : version; }
};

using TopologyPtr = std::shared_ptr<const Topology>;

inline TopologyPtr make_topology(config::Config config, std::uint64_t version) {
  auto shared_config = std::make_shared<const config::Config>(std::move(config));
  auto map = std::make_shared<const ShardMap>(*shared_config);
  return std::make_shared<const Topology>(
      Topology{version, 0, std::move(shared_config), std::move(map), nullptr, nullptr});
}

}  // namespace santral::placement

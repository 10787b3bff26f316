#include "router/resharding/moving_topology.h"

#include <algorithm>

#include "placement/move_scope.h"

namespace santral::router {

placement::TopologyPtr moving_topology(const placement::Topology& from,
                                       const placement::Topology& to, std::uint64_t version,
                                       std::uint64_t epoch) {
  config::Config config = *to.config;
  auto index_of = [&config](const config::ShardConfig& shard) {
    for (std::size_t i = 0; i < config.shards.size(); ++i)
      if (config.shards[i].address.text() == shard.address.text()) return i;
    return config.shards.size();
  };
  for (const auto& shard : from.map->shards()) {
    if (index_of(shard) < config.shards.size()) continue;
    config::ShardConfig leaving = shard;
    leaving.draining = true;
    auto taken = [&config](const std::string& name) {
      return std::any_of(config.shards.begin(), config.shards.end(),
                         [&name](const auto& s) { return s.name == name; });
    };
    if (taken(leaving.name)) leaving.name += "-leaving";
    config.shards.push_back(std::move(leaving));
  }
  auto move = std::make_shared<placement::Move>();
  move->from = from.map;
  move->epoch = epoch;
  for (const auto& shard : from.map->shards()) move->from_shard.push_back(index_of(shard));
  auto shared_config = std::make_shared<const config::Config>(std::move(config));
  auto map = std::make_shared<const placement::ShardMap>(*shared_config);
  placement::settle_unmoved(*move, *map);
  auto naming = from.salt_naming ? from.salt_naming : from.map;
  return std::make_shared<const placement::Topology>(placement::Topology{
      version, 0, std::move(shared_config), std::move(map), std::move(move), std::move(naming)});
}

}  // namespace santral::router

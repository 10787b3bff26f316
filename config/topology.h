#pragma once

#include <cstdint>
#include <memory>

#include "config/config.h"
#include "config/shard_map.h"

namespace santral::config {

// One version of the configuration and the shard map built from it. A reload makes a new one
// and hands it to every worker; requests already routed finish on the one they started with.
struct Topology {
  std::uint64_t version = 1;
  std::shared_ptr<const Config> config;
  std::shared_ptr<const ShardMap> map;
};

using TopologyPtr = std::shared_ptr<const Topology>;

inline TopologyPtr make_topology(Config config, std::uint64_t version) {
  auto shared_config = std::make_shared<const Config>(std::move(config));
  auto map = std::make_shared<const ShardMap>(*shared_config);
  return std::make_shared<const Topology>(
      Topology{version, std::move(shared_config), std::move(map)});
}

}  // namespace santral::config

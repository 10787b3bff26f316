#include "router/resharding/move_sampler.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "router/resharding/shard_sampler.h"

namespace santral::router {

namespace {

// The unit of `key`'s placement and pair of shards, or nullptr when the key stays.
UnitProgress* unit_for(const placement::Topology& topology, std::vector<UnitProgress>& units,
                       std::string_view key) {
  const auto& map = *topology.map;
  std::size_t owner = map.shard_for_key(key);
  auto source = topology.move->source_of(key, owner);
  if (!source) return nullptr;
  auto placement = placement::placement_of(map, key);
  // Units whose shards are not known beforehand: every key, or a namespace added or removed.
  for (auto& unit : units)
    if (unit.unit.from == "*" && unit.unit.to == "*" &&
        (unit.unit.placement == "every key" || unit.unit.placement == placement))
      return &unit;
  for (auto& unit : units)
    if (unit.unit.placement == placement && unit.unit.from == map.shard(*source).name &&
        unit.unit.to == map.shard(owner).name)
      return &unit;
  return nullptr;
}

}  // namespace

std::function<void()> sample_move(boost::asio::io_context& io,
                                  const placement::TopologyPtr& topology,
                                  std::vector<UnitProgress> units, unsigned samples,
                                  std::function<void(std::vector<UnitProgress>)> done) {
  std::vector<std::size_t> sources = topology->move->from_shard;
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  return sample_shards(
      io, topology, sources, samples,
      [topology, units = std::move(units),
       done = std::move(done)](const std::vector<ShardSample>& shards) mutable {
        for (const auto& shard : shards) {
          if (shard.keys == 0 || shard.draws.empty()) continue;
          double weight = double(shard.keys) / double(shard.draws.size());
          for (const auto& draw : shard.draws) {
            UnitProgress* unit = unit_for(*topology, units, draw.key);
            if (unit == nullptr) continue;
            unit->keys_estimated += static_cast<std::uint64_t>(std::llround(weight));
            unit->bytes_estimated += static_cast<std::uint64_t>(double(draw.bytes) * weight);
          }
        }
        done(std::move(units));
      });
}

}  // namespace santral::router

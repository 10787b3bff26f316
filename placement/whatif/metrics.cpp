#include "placement/whatif/metrics.h"

#include <algorithm>
#include <numeric>

namespace santral::whatif {

double hot_spot_ratio(std::span<const std::uint64_t> loads, std::span<const std::size_t> shards,
                      std::span<const std::uint32_t> weights) {
  auto weight = [&](std::size_t s) {
    return weights.empty() ? 1.0 : static_cast<double>(weights[s]);
  };
  double busiest = 0;  // load per unit of weight
  double total = 0;
  double total_weight = 0;
  for (auto s : shards) {
    busiest = std::max(busiest, static_cast<double>(loads[s]) / weight(s));
    total += static_cast<double>(loads[s]);
    total_weight += weight(s);
  }
  if (total == 0) return 0;
  return busiest * total_weight / total;
}

double hot_spot_ratio(std::span<const std::uint64_t> loads) {
  std::vector<std::size_t> all(loads.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  return hot_spot_ratio(loads, all);
}

std::vector<std::uint64_t> shard_loads(const Replay& replay, const Trace& trace,
                                       std::int16_t space) {
  std::vector<std::uint64_t> loads(replay.shard_count);
  for (std::size_t i = 0; i < replay.shard.size(); ++i)
    if (space == kEverySpace || replay.space[i] == space) loads[replay.shard[i]] += trace.count(i);
  return loads;
}

std::vector<std::uint64_t> shard_keys(const Replay& replay, std::int16_t space) {
  std::vector<std::uint64_t> keys(replay.shard_count);
  for (std::size_t i = 0; i < replay.shard.size(); ++i)
    if (space == kEverySpace || replay.space[i] == space) ++keys[replay.shard[i]];
  return keys;
}

double moved_share(const Replay& before, const Replay& after, std::int16_t space) {
  std::uint64_t keys = 0;
  std::uint64_t moved = 0;
  for (std::size_t i = 0; i < before.shard.size(); ++i) {
    if (space != kEverySpace && before.space[i] != space) continue;
    ++keys;
    if (after.shard[i] != before.shard[i]) ++moved;
  }
  return keys == 0 ? 0 : static_cast<double>(moved) / static_cast<double>(keys);
}

double moved_share(const Replay& before, const Replay& after, std::int16_t space,
                   std::span<const double> weights) {
  double keys = 0;
  double moved = 0;
  for (std::size_t i = 0; i < before.shard.size(); ++i) {
    if (space != kEverySpace && before.space[i] != space) continue;
    keys += weights[i];
    if (after.shard[i] != before.shard[i]) moved += weights[i];
  }
  return keys == 0 ? 0 : moved / keys;
}

int store_touches(std::optional<config::Strategy> strategy) {
  return strategy == config::Strategy::Directory || strategy == config::Strategy::Zone ? 2 : 1;
}

ScanCost scan_cost(std::span<const std::size_t> touched,
                   std::span<const std::uint64_t> keys_per_shard) {
  ScanCost cost;
  cost.shards = touched.size();
  for (auto s : touched) cost.keys += keys_per_shard[s];
  return cost;
}

}  // namespace santral::whatif

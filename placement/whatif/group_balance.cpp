#include "placement/whatif/group_balance.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace santral::whatif {
namespace {

template <class Load>
std::vector<std::size_t> assign_greedily(std::span<const Load> group_loads, std::size_t shards) {
  std::vector<std::size_t> order(group_loads.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return group_loads[a] > group_loads[b]; });
  std::vector<Load> load(shards);
  std::vector<std::size_t> placed(group_loads.size());
  for (auto g : order) {
    auto least =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    placed[g] = least;
    load[least] += group_loads[g];
  }
  return placed;
}

}  // namespace

std::vector<std::size_t> greedy_assign(std::span<const std::uint64_t> group_loads,
                                       std::size_t shards) {
  return assign_greedily(group_loads, shards);
}

std::vector<std::size_t> greedy_assign(std::span<const double> group_loads, std::size_t shards) {
  return assign_greedily(group_loads, shards);
}

std::size_t fill_new_shard(std::span<const std::uint64_t> group_loads,
                           std::vector<std::size_t>& group_shard,
                           std::vector<std::uint64_t>& shard_loads, std::size_t new_shard) {
  std::uint64_t total = std::accumulate(shard_loads.begin(), shard_loads.end(), std::uint64_t{0});
  const std::uint64_t mean = total / shard_loads.size();
  std::vector<std::size_t> by_load(shard_loads.size());
  std::size_t moves = 0;
  while (shard_loads[new_shard] < mean) {
    std::uint64_t room = mean - shard_loads[new_shard];
    std::iota(by_load.begin(), by_load.end(), std::size_t{0});
    std::stable_sort(by_load.begin(), by_load.end(),
                     [&](std::size_t a, std::size_t b) { return shard_loads[a] > shard_loads[b]; });
    std::optional<std::size_t> pick;
    for (auto from : by_load) {
      if (from == new_shard) continue;
      for (std::size_t g = 0; g < group_loads.size(); ++g) {
        std::uint64_t w = group_loads[g];
        if (group_shard[g] != from || w == 0 || w > room || shard_loads[from] < mean + w) continue;
        if (!pick || w > group_loads[*pick]) pick = g;
      }
      if (pick) break;
    }
    if (!pick) break;
    shard_loads[group_shard[*pick]] -= group_loads[*pick];
    shard_loads[new_shard] += group_loads[*pick];
    group_shard[*pick] = new_shard;
    ++moves;
  }
  return moves;
}

}  // namespace santral::whatif

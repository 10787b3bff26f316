#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace santral::whatif {

// The lesson's first placement of a directory (ilkAtama): groups in order of falling load, each
// to the least loaded shard (the lowest index on a tie). Returns the shard of each group.
std::vector<std::size_t> greedy_assign(std::span<const std::uint64_t> group_loads,
                                       std::size_t shards);
std::vector<std::size_t> greedy_assign(std::span<const double> group_loads, std::size_t shards);

// A directory gains an empty shard: it takes whole groups until it carries the mean load. Each
// step moves the largest group that fits from the busiest shard that has one; a group fits when
// it lifts neither the new shard above the mean nor leaves its old shard below it, so shards
// only shed their excess and a group bigger than a shard's excess stays where it is (the
// lesson's "undivided largest group" floor). `group_shard` and `shard_loads` (which includes
// the new shard) are updated; returns how many groups moved.
std::size_t fill_new_shard(std::span<const std::uint64_t> group_loads,
                           std::vector<std::size_t>& group_shard,
                           std::vector<std::uint64_t>& shard_loads, std::size_t new_shard);

}  // namespace santral::whatif

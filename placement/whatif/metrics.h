#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "config/namespace/namespace_config.h"
#include "placement/whatif/replay.h"
#include "placement/whatif/trace.h"

namespace santral::whatif {

// Replay keys of one namespace, or of every namespace and the default placement.
constexpr std::int16_t kEverySpace = -2;

// The busiest shard's load over the mean load of `shards` (the lesson's "sicak nokta orani"):
// 1.00 is perfect balance, N means one of N shards does all the work. 0 when nothing is loaded.
// With `weights` (per shard index) a shard's load is measured against its weight's share, so a
// shard of weight 2 carrying twice the load of one of weight 1 is not a hot spot.
double hot_spot_ratio(std::span<const std::uint64_t> loads, std::span<const std::size_t> shards,
                      std::span<const std::uint32_t> weights = {});
double hot_spot_ratio(std::span<const std::uint64_t> loads);

// Accesses (trace counts) per shard for the keys of `space`.
std::vector<std::uint64_t> shard_loads(const Replay& replay, const Trace& trace,
                                       std::int16_t space = kEverySpace);
// Stored keys (trace lines) per shard for the keys of `space`.
std::vector<std::uint64_t> shard_keys(const Replay& replay, std::int16_t space = kEverySpace);

// The share of the keys of `space` (as placed `before`) whose shard differs `after`.
double moved_share(const Replay& before, const Replay& after, std::int16_t space = kEverySpace);
// The same with a weight per trace key (keys drawn from a shard stand for many, a key only seen
// in requests for none): the weighted share of the keys of `space` whose shard differs.
double moved_share(const Replay& before, const Replay& after, std::int16_t space,
                   std::span<const double> weights);

// Store touches per access in the lesson's model: a strategy that looks the group up in a table
// (directory, zone) reads the table, then the data: 2; a rule computed from the key: 1. Santral
// keeps the table in the router's memory, so each access still reaches one backend.
int store_touches(std::optional<config::Strategy> strategy);

// What a scan costs: the shards it visits, and the keys it reads there. A shard cannot tell the
// scanned group's keys from its other keys of the period, so it reads all of them.
struct ScanCost {
  std::size_t shards = 0;
  std::uint64_t keys = 0;
};
ScanCost scan_cost(std::span<const std::size_t> touched,
                   std::span<const std::uint64_t> keys_per_shard);

}  // namespace santral::whatif

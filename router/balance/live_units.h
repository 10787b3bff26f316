#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/balance/unit.h"
#include "config/config.h"
#include "placement/shard_map.h"
#include "router/resharding/shard_sampler.h"

namespace santral::router {

// What the balancer evens out: Santral's requests per second, keys, or bytes.
enum class BalanceMetric { Ops, Keys, Bytes };
std::string_view metric_name(BalanceMetric metric);
std::optional<BalanceMetric> metric_named(std::string_view name);

// One shard as measured: a sample of what it holds, and Santral's requests per second to it
// (its primary and replicas).
struct ShardMeasure {
  ShardSample sample;
  double ops_per_sec = 0;
};

// A hot key's own rate (from hot-key detection), so that its load is put on its unit rather
// than spread over its shard's keys. Salted counters are not here: their load is spread.
struct HotKeyMeasure {
  std::string key;
  double ops_per_sec = 0;
};

// Where a unit is in the config, so that a plan can be written back: a namespace's range, slot
// range or directory group, and the pieces a split would cut it into.
struct UnitRef {
  std::size_t ns = 0;  // index into Config::namespaces
  config::Strategy strategy = config::Strategy::Range;
  std::optional<std::string> from, to;       // range: [from, to), absent bounds open
  std::uint32_t slot_from = 0, slot_to = 0;  // slots: inclusive
  std::string group;                         // directory
  std::string split_at;                      // where its children meet ("k", or slot "4096")
  std::vector<std::string> children;         // their unit names, in order
};

// The units of a live cluster, with loads from a measure: each range, slot range and listed
// directory group of a namespace is a unit (ranges and slot ranges with halves at the sampled
// median, three levels down, as children); what hashes place (the default ring, hashed and zone
// namespaces, a directory's fallback) is one pinned unit per placement and shard.
struct LiveUnits {
  std::vector<balance::Unit> units;
  std::map<std::string, UnitRef> refs;  // every movable unit and child, by name
  double ops_total = 0;                 // the measured requests per second, all shards
};

// Unit names, as the balancer reports them: "handles [g, n)", "keys slots 0-8191",
// "orders group seller42".
std::string range_unit_name(std::string_view ns, const std::optional<std::string>& from,
                            const std::optional<std::string>& to);
std::string slot_unit_name(std::string_view ns, std::uint32_t from, std::uint32_t to);
std::string group_unit_name(std::string_view ns, std::string_view group);

// `shards` are the map's placed shards, in order. Each draw of a shard's sample stands for
// keys / draws of its keys, their bytes, and an equal part of the shard's requests after its
// hot keys' own.
LiveUnits live_units(const config::Config& config, const placement::ShardMap& map,
                     std::span<const ShardMeasure> shards, std::span<const HotKeyMeasure> hot,
                     BalanceMetric metric);

}  // namespace santral::router

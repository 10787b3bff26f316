#include "placement/whatif/grow.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "config/namespace/range_table.h"
#include "placement/whatif/group_balance.h"
#include "placement/whatif/metrics.h"

namespace santral::whatif {
namespace {

using config::Strategy;

std::string new_shard_name(const config::Config& config) {
  for (std::size_t n = config.shards.size();; ++n) {
    std::string name = fmt::format("shard{}", n);
    if (std::none_of(config.shards.begin(), config.shards.end(),
                     [&](const auto& s) { return s.name == name; }))
      return name;
  }
}

void grow_slots(std::vector<config::SlotRange>& ranges, std::size_t added) {
  std::vector<std::size_t> owner(config::kSlotCount);
  std::map<std::size_t, std::uint32_t> owned;
  for (const auto& r : ranges)
    for (auto s = r.from; s <= r.to; ++s) {
      owner[s] = r.shard;
      ++owned[r.shard];
    }
  std::map<std::size_t, std::uint32_t> give;
  for (auto [shard, count] : owned) give[shard] = count / (owned.size() + 1);
  for (std::size_t s = config::kSlotCount; s-- > 0;)
    if (give[owner[s]] > 0) {
      --give[owner[s]];
      owner[s] = added;
    }
  ranges.clear();
  for (std::uint32_t s = 0; s < config::kSlotCount; ++s)
    if (ranges.empty() || ranges.back().shard != owner[s])
      ranges.push_back({s, s, owner[s]});
    else
      ranges.back().to = s;
}

// The accesses of one namespace's keys, by the shard key (the directory's group, the range's
// key). Keys are views into the trace.
std::unordered_map<std::string_view, std::uint64_t> shard_key_loads(const placement::ShardMap& map,
                                                                    const Trace& trace,
                                                                    const Replay& replay,
                                                                    std::int16_t space) {
  std::unordered_map<std::string_view, std::uint64_t> loads;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (replay.space[i] != space) continue;
    std::string_view shard_key;
    namespace_of(map, trace.key(i), shard_key);
    loads[shard_key] += trace.count(i);
  }
  return loads;
}

void grow_range(config::NamespaceConfig& ns, const placement::ShardMap& map, const Trace& trace,
                const Replay& replay, std::int16_t space, std::size_t added) {
  config::RangeTable table(ns.order, ns.ranges);
  std::vector<std::size_t> range_of(trace.size());
  std::vector<std::uint64_t> range_load(ns.ranges.size());
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (replay.space[i] != space) continue;
    std::string_view shard_key;
    namespace_of(map, trace.key(i), shard_key);
    range_of[i] = *table.find(shard_key);
    range_load[range_of[i]] += trace.count(i);
  }
  auto busiest = static_cast<std::size_t>(std::max_element(range_load.begin(), range_load.end()) -
                                          range_load.begin());
  struct Accessed {
    std::int64_t number;  // numeric order
    std::string_view key;
    std::uint64_t load;
  };
  std::vector<Accessed> keys;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (replay.space[i] != space || range_of[i] != busiest || trace.count(i) == 0) continue;
    std::string_view shard_key;
    namespace_of(map, trace.key(i), shard_key);
    auto number = ns.order == config::RangeOrder::Numeric ? *config::parse_int64(shard_key) : 0;
    keys.push_back({number, shard_key, trace.count(i)});
  }
  std::sort(keys.begin(), keys.end(), [&](const Accessed& a, const Accessed& b) {
    return ns.order == config::RangeOrder::Numeric ? a.number < b.number : a.key < b.key;
  });
  // Split before the first key at or past half the range's accesses; the lower part keeps at
  // least one key, so a range whose first key holds most accesses splits after it.
  std::uint64_t seen = 0;
  std::size_t split = keys.size();
  for (std::size_t i = 1; i < keys.size(); ++i) {
    seen += keys[i - 1].load;
    if (seen * 2 >= range_load[busiest] || i + 1 == keys.size()) {
      split = i;
      break;
    }
  }
  if (split >= keys.size()) return;  // fewer than two accessed keys: nothing to split
  std::string at(keys[split].key);
  config::KeyRange upper{at, ns.ranges[busiest].to, added};
  ns.ranges[busiest].to = at;
  ns.ranges.insert(ns.ranges.begin() + static_cast<std::ptrdiff_t>(busiest) + 1, upper);
}

void grow_directory(config::NamespaceConfig& ns, const placement::ShardMap& map, const Trace& trace,
                    const Replay& replay, std::int16_t space, std::size_t added) {
  auto key_loads = shard_key_loads(map, trace, replay, space);
  std::vector<std::uint64_t> group_loads;
  std::vector<std::size_t> group_shard;
  for (const auto& [group, shard] : ns.groups) {
    auto it = key_loads.find(group);
    group_loads.push_back(it == key_loads.end() ? 0 : it->second);
    group_shard.push_back(shard);
  }
  // Balance over the namespace's own shards and the new one.
  std::vector<std::size_t> index = map.namespaces()[space].shards();
  index.push_back(added);
  auto loads = shard_loads(replay, trace, space);
  loads.push_back(0);
  std::vector<std::uint64_t> members;
  members.reserve(index.size());
  for (auto s : index) members.push_back(loads[s]);
  std::vector<std::size_t> local(group_shard.size());
  for (std::size_t g = 0; g < group_shard.size(); ++g)
    local[g] = static_cast<std::size_t>(std::find(index.begin(), index.end(), group_shard[g]) -
                                        index.begin());
  fill_new_shard(group_loads, local, members, index.size() - 1);
  for (std::size_t g = 0; g < ns.groups.size(); ++g) ns.groups[g].second = index[local[g]];
  if (ns.fallback == Strategy::Slots)
    grow_slots(ns.slots, added);
  else
    ns.hashed.shards.push_back(added);
}

void grow_zone(config::NamespaceConfig& ns, const Trace& trace, const Replay& replay,
               std::int16_t space, std::size_t added) {
  auto loads = shard_loads(replay, trace, space);
  auto zone_load = [&](const config::Zone& z) {
    std::uint64_t sum = 0;
    for (auto s : z.shards) sum += loads[s];
    return sum;
  };
  auto busiest =
      std::max_element(ns.zones.begin(), ns.zones.end(),
                       [&](const auto& a, const auto& b) { return zone_load(a) < zone_load(b); });
  busiest->shards.push_back(added);
}

}  // namespace

config::Config with_added_shard(const config::Config& config, const placement::ShardMap& map,
                                const Trace& trace, const Replay& replay) {
  config::Config grown = config;
  const std::size_t added = grown.shards.size();
  config::ShardConfig shard;
  shard.name = new_shard_name(config);
  shard.ring_name = shard.name;
  shard.address = {"127.0.0.1", 0};
  grown.shards.push_back(shard);
  for (std::size_t i = 0; i < grown.namespaces.size(); ++i) {
    auto& ns = grown.namespaces[i];
    auto space = static_cast<std::int16_t>(i);
    switch (ns.strategy) {
      case Strategy::Hashed:
        ns.hashed.shards.push_back(added);
        break;
      case Strategy::Slots:
        grow_slots(ns.slots, added);
        break;
      case Strategy::Range:
        grow_range(ns, map, trace, replay, space, added);
        break;
      case Strategy::Directory:
        grow_directory(ns, map, trace, replay, space, added);
        break;
      case Strategy::Zone:
        grow_zone(ns, trace, replay, space, added);
        break;
    }
  }
  return grown;
}

}  // namespace santral::whatif

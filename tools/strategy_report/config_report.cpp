#include "tools/strategy_report/config_report.h"

#include <numeric>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "config/config.h"
#include "placement/shard_map.h"
#include "placement/whatif/grow.h"
#include "placement/whatif/metrics.h"
#include "placement/whatif/replay.h"
#include "placement/whatif/trace.h"
#include "tools/strategy_report/table.h"

namespace santral::strategy_report {

using namespace whatif;  // the what-if replay (placement/whatif/) this tool reports on
namespace {

std::vector<std::size_t> shards_of(const placement::ShardMap& map, std::int16_t space) {
  if (space != kDefaultPlacement) return map.namespaces()[space].shards();
  std::vector<std::size_t> all(map.shard_count());
  std::iota(all.begin(), all.end(), std::size_t{0});
  return all;
}

}  // namespace

void print_config_report(const ConfigReportOptions& options, std::ostream& out) {
  auto config = config::load_config(options.config);
  auto trace = read_trace(options.trace);
  placement::ShardMap map(config);
  auto placed = replay(map, trace);
  auto grown_config = with_added_shard(config, map, trace, placed);
  placement::ShardMap grown_map(grown_config);
  auto grown = replay(grown_map, trace);

  out << fmt::format("{}: {} shards; trace {}: {} keys, {} accesses\n\n", options.config.string(),
                     map.shard_count(), options.trace.string(), with_commas(trace.size()),
                     with_commas(trace.total_count()));
  Table table({"namespace", "strategy", "keys", "accesses", "hot-spot", "store touches",
               "moved +1 shard", "hot-spot +1"});
  auto weights_of = [](const placement::ShardMap& m) {
    std::vector<std::uint32_t> weights;
    for (const auto& shard : m.shards()) weights.push_back(shard.weight);
    return weights;
  };
  auto weights = weights_of(map);
  auto grown_weights = weights_of(grown_map);
  auto spaces = static_cast<std::int16_t>(map.namespaces().size());
  for (std::int16_t space = kDefaultPlacement; space < spaces; ++space) {
    auto keys = shard_keys(placed, space);
    auto key_count = std::accumulate(keys.begin(), keys.end(), std::uint64_t{0});
    if (key_count == 0) continue;
    std::optional<config::Strategy> strategy;
    if (space != kDefaultPlacement) strategy = map.namespaces()[space].strategy();
    auto loads = shard_loads(placed, trace, space);
    auto grown_loads = shard_loads(grown, trace, space);
    table.add({space == kDefaultPlacement ? "(default placement)" : map.namespaces()[space].name(),
               strategy ? std::string(config::strategy_name(*strategy))
               : map.distribution() == config::Distribution::Ketama ? "ketama"
                                                                    : "modula/random",
               with_commas(key_count),
               with_commas(std::accumulate(loads.begin(), loads.end(), std::uint64_t{0})),
               fmt::format("{:.2f}", hot_spot_ratio(loads, shards_of(map, space), weights)),
               std::to_string(store_touches(strategy)),
               fmt::format("{:.1f}%", moved_share(placed, grown, space) * 100),
               fmt::format("{:.2f}", hot_spot_ratio(grown_loads, shards_of(grown_map, space),
                                                    grown_weights))});
  }
  out << (options.markdown ? table.markdown() : table.text());

  auto keys = shard_keys(placed);
  for (const auto& glob : options.scans) {
    auto touched = map.shards_for_pattern(glob);
    auto cost = scan_cost(touched, keys);
    std::string names;
    for (auto s : touched) names += (names.empty() ? "" : ", ") + map.shard(s).name;
    out << fmt::format("\nSCAN MATCH {}: {} of {} shards ({}), {} keys scanned\n", glob,
                       cost.shards, map.shard_count(), names, with_commas(cost.keys));
  }
}

}  // namespace santral::strategy_report

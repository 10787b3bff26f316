#include "router/analysis/whatif_rows.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "placement/whatif/group_balance.h"
#include "placement/whatif/grow.h"
#include "placement/whatif/metrics.h"
#include "placement/whatif/replay.h"
#include "placement/whatif/trace.h"

namespace santral::router {

namespace {

using config::Strategy;

// A directory lists its groups: past this many it is not a table anyone should keep.
constexpr std::size_t kMostGroups = 20000;
// Values joined to their key in a what-if of a key no pattern field holds (a regex, the
// hashed part): a separator keys almost never contain.
constexpr char kJoin = '\x1f';

struct Weighted {
  std::string_view value;
  std::uint64_t weight;
};

// `ns` placed by `strategy` over shards 0..shards-1, its table built from the values (with
// their accesses); `excluded` says why when it cannot be built.
void fill_table(config::NamespaceConfig& ns, Strategy strategy, std::size_t shards,
                const std::vector<Weighted>& values, bool numeric, std::string& excluded) {
  ns.strategy = strategy;
  ns.slots.clear();
  ns.ranges.clear();
  ns.groups.clear();
  ns.zones.clear();
  ns.hashed.shards.resize(shards);
  std::iota(ns.hashed.shards.begin(), ns.hashed.shards.end(), std::size_t{0});
  switch (strategy) {
    case Strategy::Slots:
      for (std::size_t i = 0; i < shards; ++i)
        ns.slots.push_back({static_cast<std::uint32_t>(config::kSlotCount * i / shards),
                            static_cast<std::uint32_t>(config::kSlotCount * (i + 1) / shards - 1),
                            i});
      break;
    case Strategy::Range: {
      // Boundaries at the sampled accesses' quantiles (keys' when nothing was accessed).
      ns.order = numeric ? config::RangeOrder::Numeric : config::RangeOrder::Lexical;
      std::vector<Weighted> sorted(values);
      auto less = [numeric](const Weighted& a, const Weighted& b) {
        if (numeric) return *whole_number(a.value) < *whole_number(b.value);
        return a.value < b.value;
      };
      std::sort(sorted.begin(), sorted.end(), less);
      std::uint64_t total = 0;
      for (const auto& v : sorted) total += v.weight;
      std::vector<std::string> bounds;
      std::uint64_t running = 0;
      std::size_t next = 1;
      for (std::size_t i = 0; i < sorted.size() && next < shards; ++i) {
        if (running * shards >= total * next &&
            (bounds.empty() || bounds.back() != sorted[i].value) &&
            (i == 0 || sorted[i - 1].value != sorted[i].value)) {
          bounds.emplace_back(sorted[i].value);
          ++next;
        }
        running += sorted[i].weight;
      }
      for (std::size_t i = 0; i <= bounds.size(); ++i) {
        config::KeyRange r;
        if (i > 0) r.from = bounds[i - 1];
        if (i < bounds.size()) r.to = bounds[i];
        r.shard = i;
        ns.ranges.push_back(r);
      }
      break;
    }
    case Strategy::Directory: {
      std::map<std::string_view, std::uint64_t> loads;
      for (const auto& v : values) loads[v.value] += v.weight;
      if (loads.size() > kMostGroups) {
        excluded = fmt::format("{} distinct values are too many groups to list in a directory",
                               loads.size());
        ns.strategy = Strategy::Hashed;
        return;
      }
      std::vector<std::uint64_t> weights;
      weights.reserve(loads.size());
      for (const auto& [group, load] : loads) weights.push_back(load);
      auto placed = whatif::greedy_assign(weights, shards);
      std::size_t i = 0;
      for (const auto& [group, load] : loads)
        ns.groups.emplace_back(std::string(group), placed[i++]);
      ns.fallback = Strategy::Hashed;
      break;
    }
    case Strategy::Hashed:
    case Strategy::Zone:
      break;
  }
}

// Replays `trace` under `config` and once more with a shard added (whatif::with_added_shard),
// into `row`'s figures.
void replay_into(WhatIf& row, const config::Config& config, const whatif::Trace& trace,
                 std::span<const double> weights, std::int16_t space,
                 const std::string& scan_pattern) {
  placement::ShardMap map(config);
  auto placed = whatif::replay(map, trace);
  row.hot_spot = whatif::hot_spot_ratio(whatif::shard_loads(placed, trace, space));
  auto grown_config = whatif::with_added_shard(config, map, trace, placed);
  placement::ShardMap grown_map(grown_config);
  auto grown = whatif::replay(grown_map, trace);
  row.moved = whatif::moved_share(placed, grown, space, weights);
  row.hot_spot_grown = whatif::hot_spot_ratio(whatif::shard_loads(grown, trace, space));
  row.scan_shards =
      scan_pattern.empty() ? map.placed_count() : map.shards_for_pattern(scan_pattern).size();
}

// What a placement by a key with `figures` cannot escape: the floor its largest value puts on
// balance, and why it must not be recommended (a range by a rising key, too few values).
void judge(WhatIf& row, const KeyFigures& figures, Strategy strategy, std::size_t shards) {
  if (!figures.top.empty())
    row.floor = std::max(1.0, figures.top.front().second * static_cast<double>(shards));
  if (strategy == Strategy::Range && figures.monotonic)
    row.excluded =
        fmt::format("{} rises with time (r = {:.2f}): every new key goes to the last range's shard",
                    figures.name, *figures.monotonicity);
  else if (figures.low_cardinality)
    row.excluded = fmt::format("only about {:.0f} distinct values of {} for {} shards",
                               figures.distinct, figures.name, shards);
}

// Whether some of the keys live in a namespace placed by ranges.
bool placed_by_range(const WhatIfScope& scope, const TargetKeys& keys) {
  for (const auto& [key, count] : keys.lines) {
    std::string_view shard_key;
    auto space = whatif::namespace_of(scope.map, key, shard_key);
    if (space >= 0 &&
        scope.config.namespaces[static_cast<std::size_t>(space)].strategy == Strategy::Range)
      return true;
  }
  return false;
}

std::string field_name(const config::KeyPattern& pattern, int field) {
  int index = 0;
  for (const auto& segment : pattern.segments())
    if (segment.field && index++ == field) return segment.text;
  return {};
}

}  // namespace

TargetKeys target_keys(std::span<const SampledRequest* const> requests,
                       std::span<const StoredKey* const> stored) {
  std::unordered_map<std::string_view, std::uint32_t> accesses;
  std::unordered_map<std::string_view, double> drawn;
  for (const auto* request : requests) ++accesses[request->key];
  for (const auto* key : stored) {
    accesses.try_emplace(key->key, 0);
    drawn[key->key] += key->weight;
  }
  TargetKeys out;
  out.lines.assign(accesses.begin(), accesses.end());
  std::sort(out.lines.begin(), out.lines.end());
  out.weights.reserve(out.lines.size());
  for (const auto& [key, count] : out.lines) {
    auto it = drawn.find(key);
    out.weights.push_back(drawn.empty() ? 1.0 : it == drawn.end() ? 0.0 : it->second);
    out.accessed = out.accessed || count > 0;
  }
  return out;
}

WhatIf current_row(const WhatIfScope& scope, const KeyFigures& key, const TargetKeys& keys) {
  whatif::Trace trace;
  for (const auto& [name, count] : keys.lines) trace.add(name, count);
  WhatIf row;
  row.current = true;
  row.key = key.name;
  std::optional<Strategy> strategy;
  if (scope.ns) {
    row.table = scope.config.namespaces[*scope.ns];
    strategy = row.table.strategy;
    row.strategy = fmt::format("current ({})", config::strategy_name(*strategy));
  } else {
    row.strategy = "current";
  }
  auto space = scope.ns ? static_cast<std::int16_t>(*scope.ns) : whatif::kEverySpace;
  replay_into(row, scope.config, trace, keys.weights, space, scope.scan_pattern);
  row.store_touches = whatif::store_touches(strategy);
  // Keys of several placements are judged by the worst of them: one range among them keeps a
  // rising key on one shard.
  if (!strategy && placed_by_range(scope, keys)) strategy = Strategy::Range;
  judge(row, key, strategy.value_or(Strategy::Hashed), scope.map.placed_count());
  return row;
}

std::vector<WhatIf> strategy_rows(const WhatIfScope& scope, const KeyValues& values,
                                  const KeyFigures& figures, const TargetKeys& keys) {
  const std::size_t shards = scope.map.placed_count();
  const bool real_keys = scope.ns && values.field_index() >= 0;
  config::Config base = scope.config;
  config::NamespaceConfig table;
  std::size_t index = 0;
  whatif::Trace trace;
  std::vector<double> weights;
  if (real_keys) {
    index = *scope.ns;
    table = scope.config.namespaces[index];
    table.shard_key = field_name(scope.map.namespaces()[index].pattern(), values.field_index());
    for (std::size_t i = 0; i < keys.lines.size(); ++i) {
      trace.add(keys.lines[i].first, keys.lines[i].second);
      weights.push_back(keys.weights[i]);
    }
  } else {
    table.name = scope.ns ? scope.config.namespaces[*scope.ns].name : std::string("analyzed");
    table.match = std::string("{value}") + kJoin + "{key}";
    table.shard_key = "value";
    base.namespaces.clear();
    for (std::size_t i = 0; i < keys.lines.size(); ++i)
      if (auto value = values.of(keys.lines[i].first)) {
        trace.add(std::string(*value) + kJoin + std::string(keys.lines[i].first),
                  keys.lines[i].second);
        weights.push_back(keys.weights[i]);
      }
  }
  if (trace.size() == 0) return {};
  std::vector<Weighted> weighted;
  weighted.reserve(trace.size());
  for (std::size_t i = 0; i < trace.size(); ++i) {
    auto key = trace.key(i);
    auto value = real_keys ? values.of(key) : key.substr(0, key.find(kJoin));
    if (value) weighted.push_back({*value, keys.accessed ? trace.count(i) : 1});
  }

  std::vector<WhatIf> rows;
  for (auto strategy : {Strategy::Hashed, Strategy::Slots, Strategy::Range, Strategy::Directory}) {
    WhatIf row;
    row.key = values.name();
    row.strategy = std::string(config::strategy_name(strategy));
    row.table = table;
    fill_table(row.table, strategy, shards, weighted, figures.numeric, row.excluded);
    if (row.excluded.empty()) {
      config::Config variant = base;
      if (real_keys)
        variant.namespaces[index] = row.table;
      else
        variant.namespaces = {row.table};
      replay_into(row, variant, trace, weights, static_cast<std::int16_t>(index),
                  real_keys ? scope.scan_pattern : std::string());
      if (!real_keys && scope.ns) {  // a namespace placed by its whole key: its own entry
        row.table.match = scope.config.namespaces[*scope.ns].match;
        row.table.shard_key = scope.config.namespaces[*scope.ns].shard_key;
      }
      row.store_touches = whatif::store_touches(strategy);
      judge(row, figures, strategy, shards);
      // The whole key (or its hash tag) places like a field does; a regex's value does not.
      if (row.excluded.empty() && values.is_regex())
        row.excluded =
            "a regular expression cannot be a shard key: name it as a field of the "
            "namespace's match: pattern to apply this";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace santral::router

#include "router/balance/live_units.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "config/namespace/range_table.h"
#include "placement/namespace/key_slot.h"

namespace santral::router {

namespace {

// A unit's children are cut at sampled medians while each half has draws enough to place a
// median on, and no more than this many levels down (8 pieces).
constexpr int kSplitLevels = 3;
constexpr std::size_t kDrawsToSplit = 8;

// One draw (or one hot key) with what it stands for.
struct Item {
  std::string key;
  std::size_t shard = 0;
  double keys = 0, bytes = 0, ops = 0;
  bool draw = true;         // false: a hot key's own load
  std::string value;        // the shard key
  std::int64_t number = 0;  // the shard key, numeric ranges
  std::uint32_t slot = 0;
};

double load_of(const Item& item, BalanceMetric metric) {
  switch (metric) {
    case BalanceMetric::Ops:
      return item.ops;
    case BalanceMetric::Keys:
      return item.keys;
    case BalanceMetric::Bytes:
      return item.bytes;
  }
  return 0;
}

class Builder {
 public:
  Builder(const config::Config& config, const placement::ShardMap& map, BalanceMetric metric)
      : config_(config), map_(map), metric_(metric) {}

  void add(Item item) {
    auto owner = map_.owner(item.key);
    if (owner.ns == nullptr) return pin("default ring", owner.shard, item);
    std::size_t ns = static_cast<std::size_t>(owner.ns - map_.namespaces().data());
    const auto& nsc = config_.namespaces[ns];
    std::string_view value;
    owner.ns->match(item.key, value);
    item.value = std::string(value);
    switch (nsc.strategy) {
      case config::Strategy::Range: {
        const auto* table = owner.ns->range_table();
        auto range = table->find(value);
        if (!range) return pin(nsc.name + " (outside its ranges)", owner.shard, item);
        if (table->numeric()) item.number = *config::parse_int64(value);
        return file({ns, *range}, std::move(item));
      }
      case config::Strategy::Slots: {
        item.slot = placement::key_slot(value);
        for (std::size_t i = 0; i < nsc.slots.size(); ++i)
          if (item.slot >= nsc.slots[i].from && item.slot <= nsc.slots[i].to)
            return file({ns, i}, std::move(item));
        return pin(nsc.name, owner.shard, item);
      }
      case config::Strategy::Directory: {
        auto at = std::lower_bound(nsc.groups.begin(), nsc.groups.end(), value,
                                   [](const auto& g, std::string_view v) { return g.first < v; });
        if (at == nsc.groups.end() || at->first != value)
          return pin(nsc.name + " (fallback)", owner.shard, item);
        return file({ns, static_cast<std::size_t>(at - nsc.groups.begin())}, std::move(item));
      }
      case config::Strategy::Hashed:
      case config::Strategy::Zone:
        return pin(nsc.name + " (" + std::string(config::strategy_name(nsc.strategy)) + ")",
                   owner.shard, item);
    }
  }

  // Requests to a shard none of whose keys was drawn (it is empty, or did not answer).
  void add_unsampled(std::size_t shard, double ops) {
    pin("requests to keys not sampled", shard, {"", shard, 0, 0, ops, false, {}, 0, 0});
  }

  LiveUnits finish() {
    LiveUnits out;
    for (auto& [where, items] : filed_) out.units.push_back(unit_of(where, items, out.refs));
    for (auto& [name, pinned] : pinned_) {
      pinned.unit.keys = static_cast<std::uint64_t>(pinned.keys);
      pinned.unit.bytes = static_cast<std::uint64_t>(pinned.bytes);
      out.units.push_back(std::move(pinned.unit));
    }
    return out;
  }

 private:
  using Where = std::pair<std::size_t, std::size_t>;  // namespace, table entry

  void pin(const std::string& placement, std::size_t shard, const Item& item) {
    std::string name = placement + " on " + map_.shard(shard).name;
    auto& pinned = pinned_[name];
    pinned.unit.name = name;
    pinned.unit.shard = shard;
    pinned.unit.pinned = true;
    pinned.unit.load += load_of(item, metric_);
    pinned.keys += item.keys;
    pinned.bytes += item.bytes;
  }

  void file(Where where, Item item) { filed_[where].push_back(std::move(item)); }

  balance::Unit totals(std::string name, std::size_t shard, std::span<const Item> items) const {
    balance::Unit unit;
    unit.name = std::move(name);
    unit.shard = shard;
    double keys = 0, bytes = 0;
    for (const auto& item : items) {
      unit.load += load_of(item, metric_);
      keys += item.keys;
      bytes += item.bytes;
    }
    unit.keys = static_cast<std::uint64_t>(keys);
    unit.bytes = static_cast<std::uint64_t>(bytes);
    return unit;
  }

  balance::Unit unit_of(const Where& where, std::vector<Item>& items,
                        std::map<std::string, UnitRef>& refs) const {
    const auto& nsc = config_.namespaces[where.first];
    UnitRef ref{where.first, nsc.strategy, {}, {}, 0, 0, {}, {}, {}};
    switch (nsc.strategy) {
      case config::Strategy::Range: {
        const auto& r = nsc.ranges[where.second];
        ref.from = r.from;
        ref.to = r.to;
        bool numeric = nsc.order == config::RangeOrder::Numeric;
        std::sort(items.begin(), items.end(), [numeric](const Item& a, const Item& b) {
          return numeric ? a.number < b.number : a.value < b.value;
        });
        return range_unit(ref, r.shard, items, kSplitLevels, refs);
      }
      case config::Strategy::Slots: {
        const auto& s = nsc.slots[where.second];
        ref.slot_from = s.from;
        ref.slot_to = s.to;
        std::sort(items.begin(), items.end(),
                  [](const Item& a, const Item& b) { return a.slot < b.slot; });
        return slot_unit(ref, s.shard, items, kSplitLevels, refs);
      }
      default: {
        const auto& [group, shard] = nsc.groups[where.second];
        ref.group = group;
        std::string name = group_unit_name(nsc.name, group);
        refs[name] = ref;
        return totals(name, shard, items);
      }
    }
  }

  static std::size_t draws(std::span<const Item> items) {
    return static_cast<std::size_t>(
        std::count_if(items.begin(), items.end(), [](const Item& i) { return i.draw; }));
  }

  // The first item of the upper half: at the median, or past the run of the lowest value.
  template <typename Same>
  static std::optional<std::size_t> median(std::span<const Item> items, Same same) {
    std::size_t at = items.size() / 2;
    while (at > 0 && same(items[at - 1], items[at])) --at;
    if (at == 0) {
      at = 1;
      while (at < items.size() && same(items[0], items[at])) ++at;
    }
    if (at == 0 || at >= items.size()) return std::nullopt;
    return at;
  }

  balance::Unit range_unit(UnitRef ref, std::size_t shard, std::span<const Item> items, int levels,
                           std::map<std::string, UnitRef>& refs) const {
    const auto& nsc = config_.namespaces[ref.ns];
    bool numeric = nsc.order == config::RangeOrder::Numeric;
    std::string name = range_unit_name(nsc.name, ref.from, ref.to);
    balance::Unit unit = totals(name, shard, items);
    std::optional<std::size_t> at;
    if (levels > 0 && draws(items) >= kDrawsToSplit)
      at = median(items, [numeric](const Item& a, const Item& b) {
        return numeric ? a.number == b.number : a.value == b.value;
      });
    if (at) {
      std::string cut = numeric ? std::to_string(items[*at].number) : items[*at].value;
      UnitRef low = ref, high = ref;
      low.to = cut;
      high.from = cut;
      unit.children.push_back(range_unit(low, shard, items.subspan(0, *at), levels - 1, refs));
      unit.children.push_back(range_unit(high, shard, items.subspan(*at), levels - 1, refs));
      ref.split_at = cut;
      ref.children = {unit.children[0].name, unit.children[1].name};
    }
    refs[name] = std::move(ref);
    return unit;
  }

  balance::Unit slot_unit(UnitRef ref, std::size_t shard, std::span<const Item> items, int levels,
                          std::map<std::string, UnitRef>& refs) const {
    const auto& nsc = config_.namespaces[ref.ns];
    std::string name = slot_unit_name(nsc.name, ref.slot_from, ref.slot_to);
    balance::Unit unit = totals(name, shard, items);
    std::optional<std::size_t> at;
    if (levels > 0 && draws(items) >= kDrawsToSplit)
      at = median(items, [](const Item& a, const Item& b) { return a.slot == b.slot; });
    if (at) {
      std::uint32_t cut = items[*at].slot;
      UnitRef low = ref, high = ref;
      low.slot_to = cut - 1;
      high.slot_from = cut;
      unit.children.push_back(slot_unit(low, shard, items.subspan(0, *at), levels - 1, refs));
      unit.children.push_back(slot_unit(high, shard, items.subspan(*at), levels - 1, refs));
      ref.split_at = std::to_string(cut);
      ref.children = {unit.children[0].name, unit.children[1].name};
    }
    refs[name] = std::move(ref);
    return unit;
  }

  const config::Config& config_;
  const placement::ShardMap& map_;
  BalanceMetric metric_;
  std::map<Where, std::vector<Item>> filed_;
  struct Pinned {
    balance::Unit unit;
    double keys = 0, bytes = 0;  // summed as they come, rounded once
  };
  std::map<std::string, Pinned> pinned_;
};

}  // namespace

std::string range_unit_name(std::string_view ns, const std::optional<std::string>& from,
                            const std::optional<std::string>& to) {
  return fmt::format("{} [{}, {})", ns, from ? *from : "-inf", to ? *to : "+inf");
}

std::string slot_unit_name(std::string_view ns, std::uint32_t from, std::uint32_t to) {
  return fmt::format("{} slots {}-{}", ns, from, to);
}

std::string group_unit_name(std::string_view ns, std::string_view group) {
  return fmt::format("{} group {}", ns, group);
}

std::string_view metric_name(BalanceMetric metric) {
  switch (metric) {
    case BalanceMetric::Ops:
      return "ops";
    case BalanceMetric::Keys:
      return "keys";
    case BalanceMetric::Bytes:
      return "bytes";
  }
  return "ops";
}

std::optional<BalanceMetric> metric_named(std::string_view name) {
  for (auto metric : {BalanceMetric::Ops, BalanceMetric::Keys, BalanceMetric::Bytes})
    if (name == metric_name(metric)) return metric;
  return std::nullopt;
}

LiveUnits live_units(const config::Config& config, const placement::ShardMap& map,
                     std::span<const ShardMeasure> shards, std::span<const HotKeyMeasure> hot,
                     BalanceMetric metric) {
  Builder builder(config, map, metric);
  std::vector<double> hot_on(map.shard_count(), 0);
  for (const auto& key : hot) hot_on[map.shard_for_key(key.key)] += key.ops_per_sec;
  double ops_total = 0;
  std::vector<double> hot_scale(map.shard_count(), 1);
  for (const auto& shard : shards) {
    const auto& sample = shard.sample;
    ops_total += shard.ops_per_sec;
    double hot_ops = sample.shard < hot_on.size() ? hot_on[sample.shard] : 0;
    // Hot-key rates are upper estimates: they never take more than the shard's own.
    if (hot_ops > shard.ops_per_sec && hot_ops > 0)
      hot_scale[sample.shard] = shard.ops_per_sec / hot_ops;
    double spread = std::max(0.0, shard.ops_per_sec - hot_ops);
    if (sample.draws.empty()) {
      if (spread > 0) builder.add_unsampled(sample.shard, spread);
      continue;
    }
    double n = static_cast<double>(sample.draws.size());
    double keys = static_cast<double>(sample.keys) / n;
    for (const auto& draw : sample.draws)
      builder.add({draw.key,
                   sample.shard,
                   keys,
                   static_cast<double>(draw.bytes) * keys,
                   spread / n,
                   true,
                   {},
                   0,
                   0});
  }
  for (const auto& key : hot) {
    std::size_t shard = map.shard_for_key(key.key);
    builder.add({key.key, shard, 0, 0, key.ops_per_sec * hot_scale[shard], false, {}, 0, 0});
  }
  LiveUnits out = builder.finish();
  out.ops_total = ops_total;
  return out;
}

}  // namespace santral::router

#include "placement/diff.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace santral::placement {

namespace {

constexpr std::uint32_t kHashSamples = 1u << 16;
constexpr std::size_t kPiecesShown = 8;

// Units of one placement, gathered by (from, to) shard address.
class UnitCollector {
 public:
  UnitCollector(std::string placement, const ShardMap& from, const ShardMap& to, double total)
      : placement_(std::move(placement)), from_(from), to_(to), total_(total) {}

  // `piece` (in from's and to's shard indices) weighs `weight` of `total`.
  void add(std::size_t was, std::size_t is, std::string piece, double weight) {
    const auto& a = from_.shard(was);
    const auto& b = to_.shard(is);
    if (a.address.text() == b.address.text()) return;
    auto& unit = units_[{a.name, b.name}];
    ++unit.count;
    unit.weight += weight;
    if (unit.pieces.size() < kPiecesShown) unit.pieces.push_back(std::move(piece));
  }

  void finish(const std::string& noun, std::vector<MovingUnit>& out) const {
    for (const auto& [pair, unit] : units_) {
      std::string what;
      if (unit.pieces.empty() || unit.pieces.front().empty()) {
        what = fmt::format("{} {}", unit.count, noun);
      } else {
        what = fmt::format("{} {}", noun, fmt::join(unit.pieces, ", "));
        if (unit.count > unit.pieces.size())
          what += fmt::format(" (+{} more)", unit.count - unit.pieces.size());
      }
      out.push_back(
          {placement_, what, pair.first, pair.second, total_ > 0 ? unit.weight / total_ : 0});
    }
  }

 private:
  struct Unit {
    std::size_t count = 0;
    double weight = 0;
    std::vector<std::string> pieces;
  };
  std::string placement_;
  const ShardMap& from_;
  const ShardMap& to_;
  double total_;
  std::map<std::pair<std::string, std::string>, Unit> units_;
};

// The default placement: exact arcs between the two rings' points (ketama), else samples.
void default_units(const ShardMap& from, const ShardMap& to, std::vector<MovingUnit>& out) {
  UnitCollector units("default", from, to, 4294967296.0);
  std::vector<std::uint32_t> bounds;
  if (from.distribution() == config::Distribution::Ketama &&
      to.distribution() == config::Distribution::Ketama && from.ketama() != nullptr &&
      to.ketama() != nullptr) {
    for (const auto& p : from.ketama()->points()) bounds.push_back(p.value);
    for (const auto& p : to.ketama()->points()) bounds.push_back(p.value);
  } else {
    for (std::uint32_t i = 1; i <= kHashSamples; ++i)
      bounds.push_back(static_cast<std::uint32_t>((std::uint64_t{i} << 32) / kHashSamples - 1));
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  // An arc (previous, bound] belongs to whoever owns its end; the one past the last point
  // wraps to the first.
  std::uint64_t previous = bounds.empty() ? 0 : bounds.back();
  for (std::uint32_t bound : bounds) {
    std::uint64_t length = (std::uint64_t{bound} - previous) & 0xffffffffull;
    if (length == 0) length = std::uint64_t{1} << 32;
    units.add(from.shard_for_hash(bound), to.shard_for_hash(bound), "", double(length));
    previous = bound;
  }
  units.finish("ring arcs", out);
}

const Namespace* find_namespace(const ShardMap& map, const std::string& name) {
  for (const auto& ns : map.namespaces())
    if (ns.name() == name) return &ns;
  return nullptr;
}

void slot_units(const Namespace& was, const Namespace& is, const ShardMap& from, const ShardMap& to,
                std::vector<MovingUnit>& out) {
  UnitCollector units(is.name(), from, to, config::kSlotCount);
  const auto& a = *was.slot_table();
  const auto& b = *is.slot_table();
  for (std::size_t slot = 0; slot < config::kSlotCount;) {
    std::size_t end = slot;
    while (end + 1 < config::kSlotCount && a[end + 1] == a[slot] && b[end + 1] == b[slot]) ++end;
    units.add(a[slot], b[slot],
              slot == end ? std::to_string(slot) : fmt::format("{}-{}", slot, end),
              double(end - slot + 1));
    slot = end + 1;
  }
  units.finish("slots", out);
}

void range_units(const Namespace& was, const Namespace& is, const ShardMap& from,
                 const ShardMap& to, std::vector<MovingUnit>& out) {
  const auto& table = *is.range_table();
  UnitCollector units(is.name(), from, to, double(table.size()));
  for (std::size_t r = 0; r < table.size(); ++r) {
    auto lower = table.lower_bound(r);
    std::string probe = lower.value_or("");
    if (!was.accepts(probe)) continue;
    units.add(was.locate(probe), is.locate(probe), table.label(r), 1);
  }
  units.finish("range", out);
}

void group_units(const Namespace& was, const Namespace& is, const ShardMap& from,
                 const ShardMap& to, std::vector<MovingUnit>& out) {
  std::vector<std::string> names;
  for (const auto& [group, place] : was.groups()) names.push_back(group);
  for (const auto& [group, place] : is.groups()) names.push_back(group);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  UnitCollector units(is.name(), from, to, double(names.size()));
  for (const auto& group : names) units.add(was.locate(group), is.locate(group), group, 1);
  units.finish("groups", out);
  // Keys of no listed group follow the fallback, which may have changed too.
  UnitCollector rest(is.name() + " (unlisted groups)", from, to, kHashSamples);
  for (std::uint32_t i = 0; i < kHashSamples; ++i) {
    std::string probe = fmt::format("santral-probe-{}", i);
    rest.add(was.locate(probe), is.locate(probe), "", 1);
  }
  rest.finish("sampled shard keys", out);
}

// Hashed and zone namespaces (and a strategy that changed): sampled shard keys.
void sampled_units(const Namespace& was, const Namespace& is, const ShardMap& from,
                   const ShardMap& to, std::vector<MovingUnit>& out) {
  UnitCollector units(is.name(), from, to, kHashSamples);
  for (std::uint32_t i = 0; i < kHashSamples; ++i) {
    std::string probe = fmt::format("santral-probe-{}", i);
    if (!was.accepts(probe) || !is.accepts(probe)) continue;
    units.add(was.locate(probe), is.locate(probe), "", 1);
  }
  units.finish("ring arcs (sampled)", out);
}

// Keys to sample: plain ones, and for each namespace keys its pattern matches (every field
// filled with the sample's number, in one of a few shapes so fields differ between keys).
std::vector<std::string> sample_keys(const ShardMap& from, const ShardMap& to, std::uint32_t per) {
  std::vector<std::string> keys;
  for (std::uint32_t i = 0; i < per; ++i) keys.push_back(fmt::format("santral-probe-{}", i));
  for (const ShardMap* map : {&from, &to})
    for (const auto& ns : map->namespaces())
      for (std::uint32_t i = 0; i < per; ++i) {
        std::string key;
        std::uint32_t field = 0;
        for (const auto& segment : ns.pattern().segments())
          key += segment.field ? fmt::format("{}x{}", i, ++field) : segment.text;
        keys.push_back(std::move(key));
      }
  return keys;
}

// The namespaces as they decide which rule places a key: in order, each one's name, pattern
// and shard-key field.
std::string rule_order(const ShardMap& map) {
  std::string text;
  for (const auto& ns : map.namespaces())
    text += fmt::format("{}|{}|{};", ns.name(), ns.pattern().text(), ns.shard_key_field());
  return text;
}

}  // namespace

std::string key_function_change(const ShardMap& from, const ShardMap& to) {
  if (from.hash_name() != to.hash_name())
    return fmt::format("hash: {} -> {}", from.hash_name(), to.hash_name());
  if (from.hash_tag() != to.hash_tag())
    return fmt::format("hash_tag: \"{}\" -> \"{}\"", from.hash_tag(), to.hash_tag());
  if (rule_order(from) != rule_order(to))
    return "namespaces: their patterns, order or shard-key fields";
  // A range namespace that does not cover every shard key passes the rest to the next rule:
  // a change of its table may change which rule places a key.
  for (std::size_t i = 0; i < to.namespaces().size(); ++i) {
    const auto& was = from.namespaces()[i];
    const auto& is = to.namespaces()[i];
    if ((!was.total() || !is.total()) && was.describe(from.shards()) != is.describe(to.shards()))
      return fmt::format("namespace {}: the shard keys its ranges cover", is.name());
  }
  return {};
}

double sampled_moved_share(const ShardMap& from, const ShardMap& to) {
  if (from.distribution() == config::Distribution::Random ||
      to.distribution() == config::Distribution::Random)
    return 0;
  auto keys = sample_keys(from, to, 4096);
  std::size_t moved = 0;
  for (const auto& key : keys)
    if (from.shard(from.shard_for_key(key)).address.text() !=
        to.shard(to.shard_for_key(key)).address.text())
      ++moved;
  return keys.empty() ? 0 : double(moved) / double(keys.size());
}

std::vector<MovingUnit> moving_units(const ShardMap& from, const ShardMap& to) {
  std::vector<MovingUnit> out;
  if (auto change = key_function_change(from, to); !change.empty()) {
    out.push_back({"every key",
                   fmt::format("the key -> shard function changed ({}): any key may have another "
                               "owner, the walk visits every key",
                               change),
                   "*", "*", sampled_moved_share(from, to)});
    return out;
  }
  if (from.distribution() != config::Distribution::Random &&
      to.distribution() != config::Distribution::Random)
    default_units(from, to, out);
  for (const auto& is : to.namespaces()) {
    const Namespace* was = find_namespace(from, is.name());
    if (was == nullptr) {
      out.push_back({is.name(), "a new namespace: its keys may be anywhere", "*", "*", 0});
      continue;
    }
    if (was->describe(from.shards()) == is.describe(to.shards())) continue;
    if (was->strategy() == config::Strategy::Slots && is.strategy() == config::Strategy::Slots)
      slot_units(*was, is, from, to, out);
    else if (was->strategy() == config::Strategy::Range && is.strategy() == config::Strategy::Range)
      range_units(*was, is, from, to, out);
    else if (was->strategy() == config::Strategy::Directory &&
             is.strategy() == config::Strategy::Directory)
      group_units(*was, is, from, to, out);
    else
      sampled_units(*was, is, from, to, out);
  }
  for (const auto& was : from.namespaces())
    if (find_namespace(to, was.name()) == nullptr)
      out.push_back(
          {was.name(), "a removed namespace: its keys fall to the next rule", "*", "*", 0});
  return out;
}

std::string placement_of(const ShardMap& map, std::string_view key) {
  auto owner = map.owner(key);
  return owner.ns != nullptr ? owner.ns->name() : "default";
}

}  // namespace santral::placement

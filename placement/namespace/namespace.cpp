#include "placement/namespace/namespace.h"

#include <algorithm>

#include <fmt/format.h>

#include "placement/namespace/key_slot.h"

namespace santral::placement {
namespace {

std::vector<std::size_t> sorted_unique(std::vector<std::size_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string shard_names(const std::vector<std::size_t>& indices,
                        const std::vector<config::ShardConfig>& shards) {
  std::string out;
  for (auto i : indices) out += (out.empty() ? "" : ", ") + shards[i].name;
  return out;
}

}  // namespace

Namespace::Ring Namespace::make_ring(const config::HashedPlacement& hashed,
                                     const std::vector<std::size_t>& members,
                                     const std::vector<config::ShardConfig>& shards) const {
  std::vector<HashRing::Member> ring_members;
  ring_members.reserve(members.size());
  for (auto i : members) ring_members.push_back({{shards[i].name, shards[i].weight}, i});
  return Ring{members, std::make_shared<const HashRing>(ring_members, hashed.vnodes)};
}

Namespace::Namespace(const config::NamespaceConfig& config,
                     const std::vector<config::ShardConfig>& shards)
    : name_(config.name),
      strategy_(config.strategy),
      read_from_(config.read_from),
      write_concern_(config.write_concern),
      near_cache_(config.near_cache),
      hashed_(config.hashed),
      fallback_(config.fallback),
      slot_ranges_(config.slots),
      groups_(config.groups),
      zones_(config.zones),
      default_zone_(config.default_zone) {
  std::string problem;
  pattern_ = config::KeyPattern::compile(config.match, problem).value();  // validated at load
  shard_key_ = config.shard_key;
  if (!shard_key_.empty()) field_ = pattern_.field_index(shard_key_);
  std::sort(groups_.begin(), groups_.end());

  bool hashed = strategy_ == config::Strategy::Hashed ||
                (strategy_ == config::Strategy::Directory && fallback_ == config::Strategy::Hashed);
  bool slots = strategy_ == config::Strategy::Slots ||
               (strategy_ == config::Strategy::Directory && fallback_ == config::Strategy::Slots);
  if (hashed) {
    ring_ = make_ring(hashed_, hashed_.shards, shards);
    shards_.insert(shards_.end(), hashed_.shards.begin(), hashed_.shards.end());
  }
  if (slots) {
    auto table = std::make_shared<SlotTable>();
    for (const auto& r : slot_ranges_)
      for (auto s = r.from; s <= r.to; ++s) (*table)[s] = static_cast<std::uint16_t>(r.shard);
    slots_ = table;
    for (const auto& r : slot_ranges_) shards_.push_back(r.shard);
  }
  if (strategy_ == config::Strategy::Range) {
    ranges_.emplace(config.order, config.ranges);
    for (const auto& r : config.ranges) shards_.push_back(r.shard);
  }
  if (strategy_ == config::Strategy::Directory)
    for (const auto& [group, shard] : groups_) shards_.push_back(shard);
  if (strategy_ == config::Strategy::Zone)
    for (const auto& zone : zones_) {
      zone_rings_.push_back(make_ring(hashed_, zone.shards, shards));
      shards_.insert(shards_.end(), zone.shards.begin(), zone.shards.end());
    }
  shards_ = sorted_unique(std::move(shards_));
}

bool Namespace::match(std::string_view key, std::string_view& field_value) const {
  if (field_ < 0) {
    field_value = key;
    return pattern_.match(key);
  }
  return pattern_.match(key, field_, &field_value);
}

bool Namespace::accepts(std::string_view shard_key) const {
  return !ranges_ || ranges_->find(shard_key).has_value();
}

std::size_t Namespace::hashed_locate(const Ring& ring, std::string_view shard_key) const {
  return ring.ring->locate(hashed_.hash(shard_key));
}

const std::pair<std::string, std::size_t>* Namespace::group(std::string_view shard_key) const {
  auto it = std::lower_bound(groups_.begin(), groups_.end(), shard_key,
                             [](const auto& g, std::string_view k) { return g.first < k; });
  return it != groups_.end() && it->first == shard_key ? &*it : nullptr;
}

std::size_t Namespace::locate(std::string_view shard_key, std::string_view spread) const {
  switch (strategy_) {
    case config::Strategy::Hashed:
      return hashed_locate(*ring_, shard_key);
    case config::Strategy::Slots:
      return (*slots_)[key_slot(shard_key)];
    case config::Strategy::Range:
      return ranges_->shard(ranges_->find(shard_key).value_or(0));
    case config::Strategy::Directory:
      if (const auto* g = group(shard_key)) return g->second;
      return fallback_ == config::Strategy::Slots ? (*slots_)[key_slot(shard_key)]
                                                  : hashed_locate(*ring_, shard_key);
    case config::Strategy::Zone: {
      const auto* g = group(shard_key);
      return hashed_locate(zone_rings_[g ? g->second : default_zone_],
                           spread.empty() ? shard_key : spread);
    }
  }
  return 0;
}

std::vector<std::size_t> Namespace::shards_of(std::string_view shard_key) const {
  if (strategy_ != config::Strategy::Zone) return {locate(shard_key)};
  const auto* g = group(shard_key);
  return zones_[g ? g->second : default_zone_].shards;
}

std::string Namespace::detail(std::string_view shard_key) const {
  switch (strategy_) {
    case config::Strategy::Hashed:
      return fmt::format("{} hash {} on a ring of {} points", hashed_.hash_name,
                         hashed_.hash(shard_key), ring_->ring->point_count());
    case config::Strategy::Slots:
      return fmt::format("slot {}", key_slot(shard_key));
    case config::Strategy::Range: {
      auto range = ranges_->find(shard_key);
      return range ? "range " + ranges_->label(*range) : "no range";
    }
    case config::Strategy::Directory:
      if (group(shard_key)) return fmt::format("group {} -> listed", shard_key);
      if (fallback_ == config::Strategy::Slots)
        return fmt::format("group {} -> fallback slots, slot {}", shard_key, key_slot(shard_key));
      return fmt::format("group {} -> fallback hashed", shard_key);
    case config::Strategy::Zone: {
      const auto* g = group(shard_key);
      if (g) return fmt::format("zone {}", zones_[g->second].name);
      return fmt::format("zone {} (default_zone: group {} is not listed)",
                         zones_[default_zone_].name, shard_key);
    }
  }
  return "";
}

std::vector<std::size_t> Namespace::shards_for_prefix(std::string_view prefix) const {
  if (ranges_) return ranges_->shards_for_prefix(prefix);
  return shards_;
}

std::string Namespace::describe(const std::vector<config::ShardConfig>& shards) const {
  auto ring_text = [&](const std::vector<std::size_t>& members) {
    return fmt::format("hashed ({}, {} points per unit of weight) over {}", hashed_.hash_name,
                       hashed_.vnodes, shard_names(members, shards));
  };
  auto slot_lines = [&](std::string& out, std::string_view indent) {
    for (const auto& r : slot_ranges_)
      out += fmt::format("{}slots {}-{} -> {}\n", indent, r.from, r.to, shards[r.shard].name);
  };
  std::string text =
      fmt::format("namespace {}: match {}, shard key {}, strategy {}", name_, pattern_.text(),
                  field_ < 0 ? std::string("(the whole key)") : "{" + shard_key_ + "}",
                  config::strategy_name(strategy_));
  switch (strategy_) {
    case config::Strategy::Hashed:
      text += "\n  " + ring_text(ring_->shards) + "\n";
      break;
    case config::Strategy::Slots:
      text += "\n";
      slot_lines(text, "  ");
      break;
    case config::Strategy::Range:
      text += ranges_->numeric() ? " (numeric order)\n" : " (byte order)\n";
      for (std::size_t r = 0; r < ranges_->size(); ++r)
        text +=
            fmt::format("  range {} -> {}\n", ranges_->label(r), shards[ranges_->shard(r)].name);
      break;
    case config::Strategy::Directory:
      text += "\n";
      for (const auto& [group, shard] : groups_)
        text += fmt::format("  group {} -> {}\n", group, shards[shard].name);
      if (fallback_ == config::Strategy::Slots) {
        text += "  other groups: fallback slots\n";
        slot_lines(text, "    ");
      } else {
        text += "  other groups: fallback " + ring_text(ring_->shards) + "\n";
      }
      break;
    case config::Strategy::Zone:
      text += fmt::format(", hashed within the zone ({}, {} points per unit of weight)\n",
                          hashed_.hash_name, hashed_.vnodes);
      for (std::size_t z = 0; z < zones_.size(); ++z)
        text +=
            fmt::format("  zone {}: {}{}\n", zones_[z].name, shard_names(zones_[z].shards, shards),
                        z == default_zone_ ? " (default_zone)" : "");
      for (const auto& [group, zone] : groups_)
        text += fmt::format("  group {} -> zone {}\n", group, zones_[zone].name);
      break;
  }
  if (read_from_) text += fmt::format("  read_from: {}\n", config::read_from_name(*read_from_));
  if (write_concern_)
    text += fmt::format("  write_concern: replicas {}, timeout_ms {}\n", write_concern_->replicas,
                        write_concern_->timeout.count());
  return text;
}

}  // namespace santral::placement

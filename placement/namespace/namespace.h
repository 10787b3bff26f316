#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/namespace/key_pattern.h"
#include "config/namespace/range_table.h"
#include "placement/namespace/hash_ring.h"

namespace santral::placement {

// A slots table: slot -> shard.
using SlotTable = std::array<std::uint16_t, config::kSlotCount>;

// One namespace of a ShardMap: which keys belong to it (the pattern), what of the key is
// placed (the shard key field), and the table that turns the shard key into a shard.
class Namespace {
 public:
  Namespace(const config::NamespaceConfig& config, const std::vector<config::ShardConfig>& shards);

  const std::string& name() const { return name_; }
  config::Strategy strategy() const { return strategy_; }
  const config::KeyPattern& pattern() const { return pattern_; }
  int shard_key_field() const { return field_; }  // -1: the whole key
  // Where this namespace's read-only commands go; unset: the config's read_from.
  std::optional<config::ReadFrom> read_from() const { return read_from_; }
  // Its single-key writes' write concern; unset: the config's write_concern.
  std::optional<config::WriteConcern> write_concern() const { return write_concern_; }
  // Whether its GETs may be near-cached; unset: the config's near_cache.enabled.
  std::optional<bool> near_cache() const { return near_cache_; }

  // The shard key field of `key` (or the whole key), when the pattern matches.
  bool match(std::string_view key, std::string_view& field_value) const;
  // False when the namespace passes this shard key on (a range table that does not cover it).
  bool accepts(std::string_view shard_key) const;
  // Where an accepted shard key goes. `spread` is what a zone hashes within the zone: the key
  // (or its hash tag), so that one group's keys spread over its zone; empty: the shard key.
  std::size_t locate(std::string_view shard_key, std::string_view spread = {}) const;
  // Why, in words: "slot 4312", "range [m, t)", "group seller42 -> listed", "zone eu".
  std::string detail(std::string_view shard_key) const;
  // The shards every key of this shard key can land on: its zone's for a zone, else one.
  std::vector<std::size_t> shards_of(std::string_view shard_key) const;
  // True when every key the pattern matches is in the namespace.
  bool total() const { return !ranges_ || ranges_->total(); }

  // Every shard a key of this namespace can land on (sorted).
  const std::vector<std::size_t>& shards() const { return shards_; }
  // The shards that can hold a shard key starting with `prefix` (sorted).
  std::vector<std::size_t> shards_for_prefix(std::string_view prefix) const;
  // Its tables, for comparing two maps (placement/diff.h): nullptr / empty when the
  // strategy has none.
  const SlotTable* slot_table() const { return slots_.get(); }
  const config::RangeTable* range_table() const { return ranges_ ? &*ranges_ : nullptr; }
  const std::vector<std::pair<std::string, std::size_t>>& groups() const { return groups_; }
  // The table, one line per entry, for SANTRAL SHARDMAP.
  std::string describe(const std::vector<config::ShardConfig>& shards) const;
  // The hash ring of a hashed namespace or a directory's hashed fallback (else nullptr), and
  // zone `zone`'s ring of a zone namespace: for drawing the placement (the admin API).
  const HashRing* ring() const { return ring_ ? ring_->ring.get() : nullptr; }
  const HashRing* zone_ring(std::size_t zone) const {
    return zone < zone_rings_.size() ? zone_rings_[zone].ring.get() : nullptr;
  }

 private:
  struct Ring {
    std::vector<std::size_t> shards;
    std::shared_ptr<const HashRing> ring;  // immutable: copies share it
  };
  Ring make_ring(const config::HashedPlacement& hashed, const std::vector<std::size_t>& members,
                 const std::vector<config::ShardConfig>& shards) const;
  std::size_t hashed_locate(const Ring& ring, std::string_view shard_key) const;
  const std::pair<std::string, std::size_t>* group(std::string_view shard_key) const;

  std::string name_;
  config::Strategy strategy_;
  config::KeyPattern pattern_;
  int field_ = -1;
  std::string shard_key_;  // the field's name
  std::optional<config::ReadFrom> read_from_;
  std::optional<config::WriteConcern> write_concern_;
  std::optional<bool> near_cache_;
  config::HashedPlacement hashed_;
  config::Strategy fallback_ = config::Strategy::Hashed;
  std::optional<Ring> ring_;                                 // hashed; directory's hashed fallback
  std::shared_ptr<const SlotTable> slots_;                   // slots; directory's slots fallback
  std::vector<config::SlotRange> slot_ranges_;               // as configured, for describe()
  std::optional<config::RangeTable> ranges_;                 // range
  std::vector<std::pair<std::string, std::size_t>> groups_;  // sorted: group -> shard or zone
  std::vector<config::Zone> zones_;
  std::vector<Ring> zone_rings_;
  std::size_t default_zone_ = 0;
  std::vector<std::size_t> shards_;
};

}  // namespace santral::placement

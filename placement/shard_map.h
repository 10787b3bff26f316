#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/hashkit/ketama.h"
#include "config/hashkit/modula.h"
#include "placement/namespace/namespace.h"

namespace santral::placement {

// Where one key goes, and why (SANTRAL EXPLAIN shows these). The views point into the
// ShardMap, which must outlive the Placement.
struct Placement {
  std::string_view namespace_name;  // "" for the default placement
  std::string_view strategy;        // "hashed", "slots", "range", "directory", "zone", or the
                                    // default's distribution ("ketama", "modula", "random")
  std::string shard_key;            // what was placed (the tag text, the field, or the key)
  std::string detail;               // "slot 4312", "range [m, t)", "group seller42 -> listed", ...
  std::size_t shard = 0;
};

// The shard that owns a key and the namespace that placed it (nullptr: the default
// placement): what a request's plan keeps per key, so the namespace list is matched once.
struct KeyOwner {
  std::size_t shard = 0;
  const Namespace* ns = nullptr;
};

// Where every key lives: the shards and the placement rule, built once from a Config and
// never changed. A new config builds a new ShardMap that replaces the old one as a whole.
//
//   key ──► namespaces, in order: first pattern that matches ──► its strategy ──► shard
//      └──► no namespace: the default placement (hash + distribution, twemproxy's) ──► shard
class ShardMap {
 public:
  explicit ShardMap(const config::Config& config);

  std::size_t shard_count() const { return shards_.size(); }
  const config::ShardConfig& shard(std::size_t index) const { return shards_[index]; }
  const std::vector<config::ShardConfig>& shards() const { return shards_; }
  // The shard at `address` ("host:port"), if the map has one.
  std::optional<std::size_t> shard_at(std::string_view address) const;
  // The shards keys are placed on: the first placed_count(); the rest are draining (a move
  // is emptying them) and hold only keys not yet moved.
  std::size_t placed_count() const { return placed_; }

  // The index of the shard that owns `key`. No allocation.
  std::size_t shard_for_key(std::string_view key) const;
  // The same, with the namespace that placed it.
  KeyOwner owner(std::string_view key) const;
  // The same, and why.
  Placement place(std::string_view key) const;
  // The shards that can hold a key matching the Redis glob (KEYS, SCAN MATCH): sorted, unique,
  // never missing one that can hold a match; all shards when in doubt.
  std::vector<std::size_t> shards_for_pattern(std::string_view glob) const;
  // The default placement, then each namespace and its table (SANTRAL SHARDMAP).
  std::string describe() const;
  // Where a read-only command on `key` goes when its namespace says (read_from); nullopt: the
  // config's read_from.
  std::optional<config::ReadFrom> read_from_of(std::string_view key) const;
  std::optional<config::ReadFrom> read_from_of(const Namespace* ns) const {
    return ns != nullptr ? ns->read_from() : std::nullopt;
  }
  // A single-key write's write concern when its namespace sets one; nullopt: the config's.
  std::optional<config::WriteConcern> write_concern_of(const Namespace* ns) const {
    return ns != nullptr ? ns->write_concern() : std::nullopt;
  }
  // Whether GET on `key` may be answered by the near cache: its namespace's near_cache, or
  // the top-level near_cache.enabled.
  bool near_cached(std::string_view key) const;
  bool near_cached(const Namespace* ns) const {
    return ns != nullptr ? ns->near_cache().value_or(near_cache_default_) : near_cache_default_;
  }
  // Whether any key may be (the near cache is on somewhere).
  bool near_cache_anywhere() const { return near_cache_anywhere_; }

  // The default placement: the index of the shard that owns a hash value (not for
  // distribution: random).
  std::size_t shard_for_hash(std::uint32_t hash) const;
  config::Distribution distribution() const { return distribution_; }
  const std::string& hash_name() const { return hash_name_; }
  const std::string& hash_tag() const { return hash_tag_; }
  // The part of `key` that is hashed: the text inside the hash tag when there is a non-empty
  // one (twemproxy's and Redis Cluster's rule), else the whole key.
  std::string_view hashed_part(std::string_view key) const;
  const std::vector<Namespace>& namespaces() const { return namespaces_; }
  // The default placement's table: the ketama ring or the modula slots (nullptr for the other
  // distributions), for drawing it.
  const hashkit::KetamaRing* ketama() const { return ketama_ ? &*ketama_ : nullptr; }
  const hashkit::ModulaTable* modula() const { return modula_ ? &*modula_ : nullptr; }

 private:
  // The namespace that places `key`, its shard key, and (`spread`) the part of the key a hash
  // tag leaves: the tag's text, or the whole key.
  const Namespace* namespace_of(std::string_view key, std::string_view& shard_key,
                                std::string_view* spread = nullptr) const;
  std::size_t default_shard(std::string_view key) const;
  std::vector<std::size_t> all_shards() const;

  std::vector<config::ShardConfig> shards_;
  std::size_t placed_ = 0;
  hashkit::HashFunction hash_;
  std::string hash_name_;
  std::string hash_tag_;
  config::Distribution distribution_;
  std::optional<hashkit::KetamaRing> ketama_;
  std::optional<hashkit::ModulaTable> modula_;
  std::vector<Namespace> namespaces_;
  bool any_read_from_ = false;  // some namespace sets read_from
  bool near_cache_default_ = false;
  bool near_cache_anywhere_ = false;
  bool any_near_cache_ = false;  // some namespace sets near_cache
};

}  // namespace santral::placement

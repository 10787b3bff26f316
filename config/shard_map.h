#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/hashkit/ketama.h"
#include "config/hashkit/modula.h"

namespace santral::config {

// Where every key lives: the shards and the placement rule, built once from a Config and
// never changed. A new config builds a new ShardMap that replaces the old one as a whole.
class ShardMap {
 public:
  explicit ShardMap(const Config& config);

  std::size_t shard_count() const { return shards_.size(); }
  const ShardConfig& shard(std::size_t index) const { return shards_[index]; }
  const std::vector<ShardConfig>& shards() const { return shards_; }

  // The index of the shard that owns `key`.
  std::size_t shard_for_key(std::string_view key) const;
  // The index of the shard that owns a hash value (not for distribution: random).
  std::size_t shard_for_hash(std::uint32_t hash) const;
  Distribution distribution() const { return distribution_; }
  // The part of `key` that is hashed: the text inside the hash tag when there is a non-empty
  // one (twemproxy's and Redis Cluster's rule), else the whole key.
  std::string_view hashed_part(std::string_view key) const;

 private:
  std::vector<ShardConfig> shards_;
  hashkit::HashFunction hash_;
  std::string hash_tag_;
  Distribution distribution_;
  std::optional<hashkit::KetamaRing> ketama_;
  std::optional<hashkit::ModulaTable> modula_;
};

}  // namespace santral::config

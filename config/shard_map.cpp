#include "config/shard_map.h"

#include <random>

namespace santral::config {
namespace {

std::vector<hashkit::RingNode> ring_nodes(const std::vector<ShardConfig>& shards) {
  std::vector<hashkit::RingNode> nodes;
  nodes.reserve(shards.size());
  for (const auto& shard : shards) nodes.push_back({shard.ring_name, shard.weight});
  return nodes;
}

}  // namespace

ShardMap::ShardMap(const Config& config)
    : shards_(config.shards),
      hash_(config.hash),
      hash_tag_(config.hash_tag),
      distribution_(config.distribution) {
  auto nodes = ring_nodes(shards_);
  if (distribution_ == Distribution::Ketama) ketama_.emplace(nodes);
  if (distribution_ == Distribution::Modula) modula_.emplace(nodes);
}

std::string_view ShardMap::hashed_part(std::string_view key) const {
  if (hash_tag_.size() != 2) return key;
  auto open = key.find(hash_tag_[0]);
  if (open == std::string_view::npos) return key;
  auto close = key.find(hash_tag_[1], open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::size_t ShardMap::shard_for_hash(std::uint32_t hash) const {
  if (shards_.size() == 1) return 0;
  if (distribution_ == Distribution::Ketama) return ketama_->locate(hash);
  if (distribution_ == Distribution::Modula) return modula_->locate(hash);
  return 0;
}

std::size_t ShardMap::shard_for_key(std::string_view key) const {
  if (shards_.size() == 1) return 0;
  // twemproxy gives the empty key hash 0 rather than hashing zero bytes.
  auto hash = [this](std::string_view k) { return k.empty() ? 0u : hash_(hashed_part(k)); };
  switch (distribution_) {
    case Distribution::Ketama:
      return ketama_->locate(hash(key));
    case Distribution::Modula:
      return modula_->locate(hash(key));
    case Distribution::Random: {
      // twemproxy's `random` ignores the key and the weights: any shard, uniformly.
      thread_local std::minstd_rand generator{std::random_device{}()};
      return generator() % shards_.size();
    }
  }
  return 0;
}

}  // namespace santral::config

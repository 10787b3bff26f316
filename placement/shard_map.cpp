#include "placement/shard_map.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "placement/namespace/prefix_reach.h"

namespace santral::placement {
namespace {

// The shards keys are placed on: all but the draining ones, which a move keeps at the end.
std::vector<hashkit::RingNode> ring_nodes(const std::vector<config::ShardConfig>& shards) {
  std::vector<hashkit::RingNode> nodes;
  nodes.reserve(shards.size());
  for (const auto& shard : shards)
    if (!shard.draining) nodes.push_back({shard.ring_name, shard.weight});
  return nodes;
}

}  // namespace

ShardMap::ShardMap(const config::Config& config)
    : shards_(config.shards),
      hash_(config.hash),
      hash_name_(config.hash_name),
      hash_tag_(config.hash_tag),
      distribution_(config.distribution),
      near_cache_default_(config.near_cache.enabled),
      near_cache_anywhere_(config.near_cache.enabled) {
  auto nodes = ring_nodes(shards_);
  placed_ = nodes.size();
  if (distribution_ == config::Distribution::Ketama) ketama_.emplace(nodes);
  if (distribution_ == config::Distribution::Modula) modula_.emplace(nodes);
  for (const auto& ns : config.namespaces) {
    namespaces_.emplace_back(ns, shards_);
    any_read_from_ = any_read_from_ || ns.read_from.has_value();
    any_near_cache_ = any_near_cache_ || ns.near_cache.has_value();
    near_cache_anywhere_ = near_cache_anywhere_ || ns.near_cache.value_or(false);
  }
}

std::string_view ShardMap::hashed_part(std::string_view key) const {
  if (hash_tag_.size() != 2) return key;
  auto open = key.find(hash_tag_[0]);
  if (open == std::string_view::npos) return key;
  auto close = key.find(hash_tag_[1], open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

// This is where "a hash tag still wins" is decided for namespaces: the pattern picks the
// namespace, but a key with a non-empty tag is placed by the tag's text instead of its shard
// key field, so keys that share a tag share a shard within a namespace (as in Redis Cluster).
const Namespace* ShardMap::namespace_of(std::string_view key, std::string_view& shard_key,
                                        std::string_view* spread) const {
  std::string_view tag = hashed_part(key);
  if (spread != nullptr) *spread = tag;
  bool tagged = tag.size() != key.size();
  for (const auto& ns : namespaces_) {
    std::string_view field;
    if (!ns.match(key, field)) continue;
    std::string_view candidate = tagged ? tag : field;
    if (!ns.accepts(candidate)) continue;  // e.g. outside a range table: the next one decides
    shard_key = candidate;
    return &ns;
  }
  return nullptr;
}

std::size_t ShardMap::shard_for_hash(std::uint32_t hash) const {
  if (placed_ == 1) return 0;
  if (distribution_ == config::Distribution::Ketama) return ketama_->locate(hash);
  if (distribution_ == config::Distribution::Modula) return modula_->locate(hash);
  return 0;
}

std::size_t ShardMap::default_shard(std::string_view key) const {
  if (placed_ == 1) return 0;
  // twemproxy gives the empty key hash 0 rather than hashing zero bytes.
  auto hash = [this](std::string_view k) { return k.empty() ? 0u : hash_(hashed_part(k)); };
  switch (distribution_) {
    case config::Distribution::Ketama:
      return ketama_->locate(hash(key));
    case config::Distribution::Modula:
      return modula_->locate(hash(key));
    case config::Distribution::Random: {
      // twemproxy's `random` ignores the key and the weights: any shard, uniformly.
      thread_local std::minstd_rand generator{std::random_device{}()};
      return generator() % placed_;
    }
  }
  return 0;
}

std::size_t ShardMap::shard_for_key(std::string_view key) const {
  return owner(key).shard;
}

KeyOwner ShardMap::owner(std::string_view key) const {
  if (!namespaces_.empty()) {
    std::string_view shard_key, spread;
    if (const Namespace* ns = namespace_of(key, shard_key, &spread))
      return {ns->locate(shard_key, spread), ns};
  }
  return {default_shard(key), nullptr};
}

Placement ShardMap::place(std::string_view key) const {
  Placement p;
  std::string_view shard_key, spread;
  if (const Namespace* ns = namespace_of(key, shard_key, &spread)) {
    p.namespace_name = ns->name();
    p.strategy = config::strategy_name(ns->strategy());
    p.shard_key = std::string(shard_key);
    p.detail = ns->detail(shard_key);
    p.shard = ns->locate(shard_key, spread);
    return p;
  }
  p.strategy = config::distribution_name(distribution_);
  p.shard_key = std::string(hashed_part(key));
  p.shard = default_shard(key);
  if (distribution_ == config::Distribution::Random)
    p.detail = "any shard, at random";
  else
    p.detail = fmt::format("{} hash {}", hash_name_, key.empty() ? 0u : hash_(p.shard_key));
  return p;
}

std::vector<std::size_t> ShardMap::all_shards() const {
  std::vector<std::size_t> all(shards_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

std::vector<std::size_t> ShardMap::shards_for_pattern(std::string_view glob) const {
  std::vector<std::size_t> out;
  auto finish = [&out] {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  // One key, or a key placed at random: its shard, or every shard.
  auto add_key = [&](std::string_view key) {
    std::string_view shard_key;
    if (distribution_ == config::Distribution::Random && !namespace_of(key, shard_key))
      out = all_shards();
    else
      out.push_back(shard_for_key(key));
  };
  std::string_view prefix = glob_literal_prefix(glob);
  if (prefix.size() == glob.size()) {
    add_key(glob);
    return finish();
  }
  // A key's tag can come from the part of the key the glob leaves open, unless the prefix
  // already settles it: a complete tag (every key has that tag) or an empty one (no key has
  // one: the first tag decides).
  enum class Tag { None, Fixed, Open } tag = Tag::None;
  std::string_view tag_text;
  if (hash_tag_.size() == 2) {
    auto open = prefix.find(hash_tag_[0]);
    auto close = open == std::string_view::npos ? open : prefix.find(hash_tag_[1], open + 1);
    if (close == std::string_view::npos) {
      tag = Tag::Open;
    } else if (close > open + 1) {
      tag = Tag::Fixed;
      tag_text = prefix.substr(open + 1, close - open - 1);
    }
  }
  for (const auto& ns : namespaces_) {
    PrefixReach r = reach(ns.pattern(), ns.shard_key_field(), prefix);
    if (r.disjoint) continue;
    bool covered = r.covers && ns.total();
    if (tag == Tag::Fixed) {
      covered = r.covers && ns.accepts(tag_text);
      if (ns.accepts(tag_text)) out.push_back(ns.locate(tag_text));
    } else if (tag == Tag::None && r.shard_key) {
      covered = r.covers && ns.accepts(*r.shard_key);
      if (ns.accepts(*r.shard_key)) {
        auto shards = ns.shards_of(*r.shard_key);
        out.insert(out.end(), shards.begin(), shards.end());
      }
    } else if (tag == Tag::None && r.shard_key_prefix) {
      auto shards = ns.shards_for_prefix(*r.shard_key_prefix);
      out.insert(out.end(), shards.begin(), shards.end());
    } else {
      out.insert(out.end(), ns.shards().begin(), ns.shards().end());
    }
    if (covered) {
      // Every key with the prefix stays in this namespace, but perhaps the prefix itself.
      if (r.prefix_unmatched) add_key(prefix);
      return finish();
    }
  }
  // Some keys fall to the default placement.
  if (tag == Tag::Fixed && distribution_ != config::Distribution::Random)
    out.push_back(shard_for_hash(hash_(tag_text)));
  else
    out = all_shards();
  return finish();
}

std::optional<config::ReadFrom> ShardMap::read_from_of(std::string_view key) const {
  if (!any_read_from_) return std::nullopt;
  std::string_view shard_key;
  return read_from_of(namespace_of(key, shard_key));
}

bool ShardMap::near_cached(std::string_view key) const {
  if (!any_near_cache_) return near_cache_default_;
  std::string_view shard_key;
  return near_cached(namespace_of(key, shard_key));
}

std::string ShardMap::describe() const {
  std::string names;
  for (const auto& s : shards_)
    names += (names.empty() ? "" : ", ") + s.name + (s.draining ? " (draining)" : "");
  std::string text = fmt::format("default placement: {} over {} (hash {}, hash tag {})\n",
                                 config::distribution_name(distribution_), names, hash_name_,
                                 hash_tag_.empty() ? std::string("none") : hash_tag_);
  if (namespaces_.empty()) return text + "namespaces: none: every key uses the default placement\n";
  text += fmt::format("namespaces: {}, tried in order; keys of none use the default placement\n",
                      namespaces_.size());
  for (const auto& ns : namespaces_) text += ns.describe(shards_);
  return text;
}

std::optional<std::size_t> ShardMap::shard_at(std::string_view address) const {
  for (std::size_t s = 0; s < shards_.size(); ++s)
    if (shards_[s].address.text() == address) return s;
  return std::nullopt;
}

}  // namespace santral::placement

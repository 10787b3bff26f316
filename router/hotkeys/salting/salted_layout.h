#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/salting_config.h"
#include "placement/shard_map.h"

namespace santral::router {

// A salted counter's layout: sub-key 0 is the key itself (salting a live counter moves
// nothing), the others are named by the shard map so that they land on distinct shards
// wherever there are at least as many shards as salts.
//
//   likes:500 (shard2)   likes:500:s1 (shard0)   likes:500:s3 (shard1)   likes:500:s4 (shard3)
//   candidates are tried in order; likes:500:s2 was skipped, it landed on shard2 again
//
// A key with a hash tag keeps its text around the tag and salts the tag itself:
// {user42}:likes -> {user42:s1}:likes, so the sub-keys do not all share the key's shard.
// Who salted a key: the config's `salting:`, SANTRAL SALT, or automatic salting (only these
// are ever unsalted automatically).
enum class SaltedBy : std::uint8_t { Config, Command, Auto };
const char* salted_by_name(SaltedBy by);

struct SaltedCounter {
  std::uint32_t salts = 0;
  SaltedBy salted_by = SaltedBy::Config;
  config::SaltReply reply = config::SaltReply::Estimate;
  std::vector<std::string> sub_keys;  // [0] is the key
  std::vector<std::size_t> shards;    // of each sub-key
};

// Lays out `key` over `salts` sub-keys with `map`. Deterministic: every worker, and every run
// with the same map, picks the same names.
SaltedCounter lay_out_counter(std::string_view key, std::uint32_t salts, config::SaltReply reply,
                              const placement::ShardMap& map);

}  // namespace santral::router

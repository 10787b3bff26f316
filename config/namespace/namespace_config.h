#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/hashkit/hash_functions.h"
#include "config/read_from.h"
#include "config/tenant_limits.h"
#include "config/write_concern.h"

namespace santral::config {

// How a namespace turns its shard key into a shard.
enum class Strategy { Hashed, Slots, Range, Directory, Zone };

std::string_view strategy_name(Strategy strategy);  // "hashed", "slots", ...

// Redis Cluster's slot count: slot = CRC16(shard key) mod 16384.
constexpr std::uint32_t kSlotCount = 16384;

// A consistent-hash ring over some shards: `vnodes` points per unit of shard weight.
struct HashedPlacement {
  std::string hash_name = "murmur";
  hashkit::HashFunction hash = hashkit::murmur;
  std::uint32_t vnodes = 160;
  std::vector<std::size_t> shards;  // indices into Config::shards
};

struct SlotRange {
  std::uint32_t from = 0;  // inclusive
  std::uint32_t to = 0;    // inclusive
  std::size_t shard = 0;
};

enum class RangeOrder { Lexical, Numeric };

// [from, to) on the shard key; an absent bound is open.
struct KeyRange {
  std::optional<std::string> from;
  std::optional<std::string> to;
  std::size_t shard = 0;
};

struct Zone {
  std::string name;
  std::vector<std::size_t> shards;
};

// One `namespaces:` entry, validated: every shard index is valid, tables are complete.
struct NamespaceConfig {
  std::string name;
  std::string match;                  // "order:{customer}:{id}"
  std::string shard_key;              // a field of `match`; empty: the whole key
  std::optional<ReadFrom> read_from;  // for this namespace's keys; unset: the config's
  // For this namespace's single-key writes; unset: the config's.
  std::optional<WriteConcern> write_concern;
  std::optional<bool> near_cache;  // unset: near_cache.enabled
  // `limits: {requests_per_s, burst}`: a token bucket for the requests on its keys, shared by
  // the router's workers (router/runtime/tenant_limiter.h); none when unset.
  TenantLimits limits;
  Strategy strategy = Strategy::Hashed;
  HashedPlacement hashed;        // hashed; zone (within a zone); directory's hashed fallback
  std::vector<SlotRange> slots;  // slots; directory's slots fallback. Sorted, no gaps.
  RangeOrder order = RangeOrder::Lexical;
  std::vector<KeyRange> ranges;  // sorted, adjacent
  // directory: group -> shard index; zone: group -> zone index. Sorted by group.
  std::vector<std::pair<std::string, std::size_t>> groups;
  Strategy fallback = Strategy::Hashed;  // directory: hashed or slots, for unlisted groups
  std::vector<Zone> zones;
  std::size_t default_zone = 0;
};

}  // namespace santral::config

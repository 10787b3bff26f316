#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "protocol/command_table.h"

namespace santral::router {

// The read-only multi-key commands Santral answers when their keys live on several shards
// (the command table's gather= column): it reads each key from its shard and computes the
// answer itself, as Redis would.
using protocol::GatherAlgorithm;

// One command sent for each key: `name`, the key, then `after_key`.
struct FetchCommand {
  std::string_view name;
  std::span<const std::string_view> after_key;
};

struct GatherRule {
  GatherAlgorithm algorithm;
  std::span<const FetchCommand> fetch;  // per key, in this order
  std::string_view computes;            // what the router computes, for EXPLAIN
};

// The rule of `spec`, or nullptr when its keys must share a shard.
const GatherRule* gather_rule(const protocol::CommandSpec& spec);

// The one numbering of a gathered read's fragments (the route sends them so, the merge and the
// tracked reads read them so): each key gets the rule's fetches, key by key, so key `key`'s
// fetch `f` is fragment first_fetch(rule, key) + f.
inline std::uint32_t first_fetch(const GatherRule& rule, std::size_t key) {
  return static_cast<std::uint32_t>(key * rule.fetch.size());
}
// Key `key`'s replies, in its fetches' order, among every fetch's (numbered as above).
template <typename Reply>
std::span<const Reply> fetched_for(const GatherRule& rule, std::span<const Reply> replies,
                                   std::size_t key) {
  return replies.subspan(first_fetch(rule, key), rule.fetch.size());
}

// The write forms Santral runs across shards when `cross_shard_writes: allow` is set (the
// command table's cross-write= column): as a read, a write and (for moves) a delete, one after
// the other, not atomically.
enum class StagedWriteKind : std::uint8_t {
  Store,     // SINTERSTORE, ZUNIONSTORE, ...: read as `reads_as`, then write the destination
  SetMove,   // SMOVE: SREM on the source, then SADD on the destination
  ListMove,  // LMOVE, RPOPLPUSH: pop from the source, then push to the destination
  Rename,    // RENAME, RENAMENX: DUMP, RESTORE on the destination, DEL the source
  Copy,      // COPY: DUMP, RESTORE on the destination
};

struct WriteRule {
  protocol::CrossShardWrite form;
  StagedWriteKind kind;
  GatherAlgorithm reads_as = GatherAlgorithm::None;  // Store: the read whose result is stored
  bool nx = false;                                   // RENAMENX: 0 when the destination exists
};

// The rule of `spec`, or nullptr when it cannot run across shards.
const WriteRule* cross_shard_write_rule(const protocol::CommandSpec& spec);
// Store: the read rule whose result is stored.
const GatherRule& stored_read(const WriteRule& rule);

// "SMEMBERS k", "ZRANGE k 0 -1 WITHSCORES": a fetch as EXPLAIN shows it.
std::string fetch_text(const FetchCommand& fetch, std::string_view key);

}  // namespace santral::router

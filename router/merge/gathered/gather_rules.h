#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "protocol/command_table.h"

namespace santral::router {

// The read-only multi-key commands Santral answers when their keys live on several shards:
// it reads each key from its shard and computes the answer itself, as Redis would.
enum class GatherAlgorithm : std::uint8_t {
  SetInter,
  SetInterCard,
  SetUnion,
  SetDiff,
  ZUnion,
  ZInter,
  ZInterCard,
  ZDiff,
  PfCount,
  Lcs,
};

// One command sent for each key: `name`, the key, then `after_key`.
struct FetchCommand {
  std::string_view name;
  std::span<const std::string_view> after_key;
};

struct GatherRule {
  std::string_view command;  // lower case, as in the command table
  GatherAlgorithm algorithm;
  std::span<const FetchCommand> fetch;  // per key, in this order
  std::string_view computes;            // what the router computes, for EXPLAIN
};

// The rule of `spec`, or nullptr when its keys must share a shard.
const GatherRule* gather_rule(const protocol::CommandSpec& spec);

// "SMEMBERS k", "ZRANGE k 0 -1 WITHSCORES": a fetch as EXPLAIN shows it.
std::string fetch_text(const FetchCommand& fetch, std::string_view key);

}  // namespace santral::router

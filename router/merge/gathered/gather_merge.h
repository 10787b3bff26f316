#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "protocol/reply_value.h"
#include "router/merge/gathered/gather_rules.h"
#include "router/merge/gathered/gathered_answers.h"
#include "router/merge/reply_merge.h"

namespace santral::router {

// A cross-shard read: what was fetched, and what to answer from it.
//
//   SUNION a b c           a,c on shard0, b on shard1
//     fragment 0 -> shard0: SMEMBERS a     the merge decodes each key's value, then
//     fragment 1 -> shard1: SMEMBERS b     computes SUNION as Redis would (gathered_answers.h)
//     fragment 2 -> shard0: SMEMBERS c
//
// With several fetches per key (ZUNION: ZRANGE and SMEMBERS), key k's fetch f is fragment
// k * fetches + f.
struct GatherBrief {
  const GatherRule* rule = nullptr;
  std::string command;            // upper case, for messages
  std::vector<std::string> args;  // the request (its read buffer is gone when replies arrive)
  std::vector<std::uint32_t> key_positions;  // into args, in argument order
  std::vector<std::string> fragment_names;   // the shard each fragment went to
  int protocol = 2;                          // the client's RESP version
  std::size_t max_bytes = 0;                 // limits.max_merge_bytes
};

std::unique_ptr<ReplyMerge> make_gather_merge(GatherBrief brief);

// A key's value from its shard's replies to the rule's fetches, in the rule's order; false
// when a reply has a shape none of them answers with.
bool decode_gathered_key(GatherAlgorithm algorithm, std::span<const protocol::ReplyValue> replies,
                         GatheredKey& key);

}  // namespace santral::router

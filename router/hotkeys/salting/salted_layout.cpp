#include "router/hotkeys/salting/salted_layout.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

namespace santral::router {
namespace {

// The i-th candidate name for a sub-key of `key`.
std::string candidate(std::string_view key, std::string_view hashed, std::uint32_t i) {
  if (hashed.size() == key.size()) return fmt::format("{}:s{}", key, i);
  auto end = static_cast<std::size_t>(hashed.data() - key.data()) + hashed.size();
  return fmt::format("{}:s{}{}", key.substr(0, end), i, key.substr(end));
}

}  // namespace

SaltedCounter lay_out_counter(std::string_view key, std::uint32_t salts, config::SaltReply reply,
                              const placement::ShardMap& map) {
  SaltedCounter counter;
  counter.salts = salts;
  counter.reply = reply;
  counter.sub_keys.emplace_back(key);
  counter.shards.push_back(map.shard_for_key(key));
  std::string_view hashed = map.hashed_part(key);
  std::size_t distinct = std::min<std::size_t>(salts, map.shard_count());
  std::vector<bool> used(map.shard_count(), false);
  used[counter.shards[0]] = true;
  std::size_t used_count = 1;
  // First pass: only candidates on a shard not used yet, until min(salts, shards) are used.
  // A placement that keeps refusing (a namespace whose shard key the suffix does not change)
  // gives up after a bounded search; the second pass then fills in the remaining sub-keys.
  std::uint32_t tried = 0;
  const std::uint32_t budget = 64 * salts;
  std::vector<std::uint32_t> skipped;
  for (std::uint32_t i = 1; used_count < distinct && tried < budget; ++i, ++tried) {
    std::string name = candidate(key, hashed, i);
    std::size_t shard = map.shard_for_key(name);
    if (used[shard]) {
      skipped.push_back(i);
      continue;
    }
    used[shard] = true;
    ++used_count;
    counter.sub_keys.push_back(std::move(name));
    counter.shards.push_back(shard);
  }
  // Then more salts than shards: level by level, so that no shard takes a third sub-key
  // before every shard has two (8 salts on 4 shards: 2 each). The candidates skipped so far
  // come first, then new ones; a level that keeps refusing (see above) takes any candidate.
  std::vector<std::uint32_t> per_shard(map.shard_count(), 0);
  for (std::size_t shard : counter.shards) ++per_shard[shard];
  std::deque<std::uint32_t> pending(skipped.begin(), skipped.end());
  std::vector<std::uint32_t> refused;
  std::uint32_t next = tried + 1;
  std::uint32_t level = 2;
  std::uint32_t refusals = 0;
  while (counter.sub_keys.size() < salts) {
    std::uint32_t i = next;
    if (!pending.empty()) {
      i = pending.front();
      pending.pop_front();
    } else {
      ++next;
    }
    std::string name = candidate(key, hashed, i);
    std::size_t shard = map.shard_for_key(name);
    if (per_shard[shard] >= level && refusals < budget) {
      refused.push_back(i);
      ++refusals;
      continue;
    }
    ++per_shard[shard];
    counter.shards.push_back(shard);
    counter.sub_keys.push_back(std::move(name));
    bool level_full = std::all_of(per_shard.begin(), per_shard.end(),
                                  [level](std::uint32_t n) { return n >= level; });
    if (level_full || refusals >= budget) {
      ++level;
      refusals = 0;
      pending.insert(pending.begin(), refused.begin(), refused.end());
      refused.clear();
    }
  }
  return counter;
}

const char* salted_by_name(SaltedBy by) {
  switch (by) {
    case SaltedBy::Config:
      return "config";
    case SaltedBy::Command:
      return "command";
    case SaltedBy::Auto:
      return "auto";
  }
  return "?";
}

}  // namespace santral::router

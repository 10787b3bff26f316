#include "router/runtime/scripts_in_flight.h"

#include <utility>

namespace santral::router {

ScriptsInFlight& scripts_in_flight() {
  static ScriptsInFlight scripts;
  return scripts;
}

void ScriptsInFlight::started(const std::string& shard, Clock::time_point at) {
  std::lock_guard guard(lock_);
  by_shard_[shard].insert(at);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void ScriptsInFlight::ended(const std::string& shard, Clock::time_point at) {
  std::lock_guard guard(lock_);
  auto found = by_shard_.find(shard);
  if (found == by_shard_.end()) return;
  auto one = found->second.find(at);
  if (one == found->second.end()) return;
  found->second.erase(one);
  if (found->second.empty()) by_shard_.erase(found);
  count_.fetch_sub(1, std::memory_order_relaxed);
}

std::vector<std::string> ScriptsInFlight::running_since(Clock::time_point before) const {
  std::vector<std::string> shards;
  std::lock_guard guard(lock_);
  for (const auto& [shard, starts] : by_shard_)
    if (!starts.empty() && *starts.begin() < before) shards.push_back(shard);
  return shards;
}

ScriptReply::ScriptReply(ReplySinkPtr sink, ScriptsInFlight& scripts, std::string shard)
    : sink_(std::move(sink)),
      scripts_(scripts),
      shard_(std::move(shard)),
      started_(ScriptsInFlight::Clock::now()) {
  scripts_.started(shard_, started_);
}

void ScriptReply::end() {
  if (std::exchange(ended_, true)) return;
  scripts_.ended(shard_, started_);
}

}  // namespace santral::router

#include "router/cluster/shard_fence.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "router/backend/shard_login.h"

namespace santral::router {

ShardFence::ShardFence(std::string fleet, ShardAccount admin, std::chrono::milliseconds timeout)
    : fleet_(std::move(fleet)), acl_(std::move(admin), timeout) {}

void ShardFence::use_shards(const std::vector<config::ShardConfig>& shards) {
  std::vector<Target> targets;
  for (const auto& shard : shards) {
    targets.push_back({shard.address, true, shard.tls});
    for (const auto& replica : shard.replicas) targets.push_back({replica, false, shard.tls});
  }
  std::lock_guard guard(lock_);
  targets_ = std::move(targets);
}

std::vector<ShardFence::Target> ShardFence::targets() const {
  std::lock_guard guard(lock_);
  return targets_;
}

std::string ShardFence::new_lease(std::int64_t lease) {
  account_ = lease_account(fleet_, lease);
  admitted_.clear();
  logged_in_ = false;
  return account_.user;
}

bool ShardFence::admit(bool serving) {
  if (account_.user.empty()) return false;
  auto all = targets();
  bool every_primary = true;
  for (const auto& target : all) {
    std::string where = target.address.text();
    if (admitted_.contains(where)) continue;
    std::string error;
    if (!serving)
      error = "not serving";
    else if (target.tls)
      error = where + ": cluster.fence: acl does not reach TLS shards yet";
    else
      error = acl_.admit(target.address, account_);
    if (error.empty()) {
      admitted_.insert(where);
      continue;
    }
    every_primary = every_primary && !target.primary;
    if (serving && error != last_error_)
      spdlog::error(
          "fleet '{}': cannot make this router's shard user {}: {}; its connections "
          "there fail until it is made (tried again at every read of etcd)",
          fleet_, account_.user, error);
    last_error_ = error;
  }
  if (every_primary && !logged_in_ && !all.empty()) {
    set_fence_login({account_.user, account_.password});
    logged_in_ = true;
  }
  return every_primary;
}

bool ShardFence::shut_out(const std::string& user) {
  auto entry =
      std::find_if(shut_.begin(), shut_.end(), [&](const auto& e) { return e.first == user; });
  if (entry == shut_.end()) {
    shut_.emplace_back(user, std::set<std::string>{});
    entry = std::prev(shut_.end());
  }
  bool every_primary = true;
  for (const auto& target : targets()) {
    std::string where = target.address.text();
    if (entry->second.contains(where)) continue;
    std::string error = target.tls ? where + ": cluster.fence: acl does not reach TLS shards yet"
                                   : acl_.shut_out(target.address, user);
    if (error.empty()) {
      entry->second.insert(where);
      continue;
    }
    every_primary = every_primary && !target.primary;
    if (error != last_error_)
      spdlog::error(
          "fleet '{}': cannot shut out {} (a router the fleet went on without): {}; "
          "moves and salting folds wait until it is done",
          fleet_, user, error);
    last_error_ = error;
  }
  if (every_primary && shut_.size() > 64) shut_.erase(shut_.begin());  // long done
  return every_primary;
}

}  // namespace santral::router

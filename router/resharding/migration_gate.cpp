#include "router/resharding/migration_gate.h"

#include <boost/asio/post.hpp>

namespace santral::router {

namespace {

// A source of one is a target of the other: the two must not run at once.
bool conflict(const MigrationGate::Claim& a, const MigrationGate::Claim& b) {
  auto shared = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    for (const auto& one : x)
      for (const auto& other : y)
        if (one == other) return true;
    return false;
  };
  return shared(a.sources, b.targets) || shared(a.targets, b.sources);
}

}  // namespace

bool MigrationGate::fits(const Claim& claim) const {
  auto busy = [](const std::unordered_map<std::string, int>& counts, const std::string& shard) {
    auto it = counts.find(shard);
    return it != counts.end() && it->second > 0;
  };
  for (const auto& source : claim.sources)
    if (busy(as_target_, source)) return false;
  for (const auto& target : claim.targets)
    if (busy(as_source_, target)) return false;
  return true;
}

void MigrationGate::take(const Claim& claim) {
  for (const auto& source : claim.sources) ++as_source_[source];
  for (const auto& target : claim.targets) ++as_target_[target];
}

void MigrationGate::enter(boost::asio::io_context& io, Claim claim, std::function<void()> go) {
  {
    std::lock_guard guard(lock_);
    // Behind older waiters it would overtake: they go first, so none waits for ever.
    bool overtakes = false;
    for (const auto& waiting : waiting_) overtakes = overtakes || conflict(waiting.claim, claim);
    if (overtakes || !fits(claim)) {
      waiting_.push_back({&io, std::move(claim), std::move(go)});
      return;
    }
    take(claim);
  }
  go();
}

void MigrationGate::leave(const Claim& claim) {
  std::vector<Waiting> ready;
  {
    std::lock_guard guard(lock_);
    for (const auto& source : claim.sources) --as_source_[source];
    for (const auto& target : claim.targets) --as_target_[target];
    // Oldest first; a waiter that still does not fit keeps the ones after it that conflict
    // with it waiting too.
    std::vector<Claim> blocked;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      bool behind = false;
      for (const auto& earlier : blocked) behind = behind || conflict(earlier, it->claim);
      if (!behind && fits(it->claim)) {
        take(it->claim);
        ready.push_back(std::move(*it));
        it = waiting_.erase(it);
      } else {
        blocked.push_back(it->claim);
        ++it;
      }
    }
  }
  for (auto& waiting : ready) boost::asio::post(*waiting.io, std::move(waiting.go));
}

}  // namespace santral::router

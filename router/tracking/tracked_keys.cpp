#include "router/tracking/tracked_keys.h"

#include <algorithm>

namespace santral::router {

std::vector<std::pair<std::string, TrackedKeys::Clients>> TrackedKeys::add(std::string_view key,
                                                                           std::uint64_t client) {
  auto [entry, inserted] = keys_.try_emplace(std::string(key));
  auto& clients = entry->second;
  if (std::find(clients.begin(), clients.end(), client) == clients.end()) clients.push_back(client);
  std::vector<std::pair<std::string, Clients>> dropped;
  if (!inserted) return dropped;
  // Over the bound: drop other keys, whichever the table offers first (Redis too evicts keys
  // at random).
  while (keys_.size() > max_keys_ && keys_.size() > 1) {
    auto victim = keys_.begin();
    if (victim->first == key) ++victim;
    dropped.emplace_back(victim->first, std::move(victim->second));
    keys_.erase(victim);
  }
  return dropped;
}

TrackedKeys::Clients TrackedKeys::take(std::string_view key) {
  auto entry = keys_.find(std::string(key));
  if (entry == keys_.end()) return {};
  Clients clients = std::move(entry->second);
  keys_.erase(entry);
  return clients;
}

void TrackedKeys::forget(std::string_view key, std::uint64_t client) {
  auto entry = keys_.find(std::string(key));
  if (entry == keys_.end()) return;
  auto& clients = entry->second;
  clients.erase(std::remove(clients.begin(), clients.end(), client), clients.end());
  if (clients.empty()) keys_.erase(entry);
}

}  // namespace santral::router

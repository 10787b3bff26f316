#include "router/tracking/own_writes.h"

namespace santral::router {

void OwnWrites::writing(std::uint64_t client, std::span<const std::string> keys) {
  auto& counts = writes_[client];
  for (const auto& key : keys) ++counts[key];
}

void OwnWrites::heard(std::uint64_t client, std::span<const std::string> keys,
                      std::uint64_t generation) {
  if (generation != generation_) return;
  auto found = writes_.find(client);
  if (found == writes_.end()) return;
  auto& counts = found->second;
  for (const auto& key : keys) {
    auto count = counts.find(key);
    if (count != counts.end() && --count->second == 0) counts.erase(count);
  }
  if (counts.empty()) writes_.erase(found);
}

bool OwnWrites::own(std::uint64_t client, std::string_view key) const {
  auto found = writes_.find(client);
  if (found == writes_.end()) return false;
  return found->second.contains(std::string(key));
}

}  // namespace santral::router

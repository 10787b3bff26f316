#include "router/tracking/own_writes.h"

namespace santral::router {

void OwnWrites::writing(std::uint64_t client, std::span<const std::string> keys) {
  auto& writes = writes_[client];
  for (const auto& key : keys) ++writes[key].open;
}

bool OwnWrites::take(std::uint64_t client, std::string_view key) {
  auto found = writes_.find(client);
  if (found == writes_.end()) return false;
  auto write = found->second.find(std::string(key));
  if (write == found->second.end() || write->second.open == 0) return false;
  --write->second.open;
  ++write->second.pushed;
  return true;
}

void OwnWrites::heard(std::uint64_t client, std::span<const std::string> keys,
                      std::uint64_t generation) {
  if (generation != generation_) return;
  auto found = writes_.find(client);
  if (found == writes_.end()) return;
  auto& writes = found->second;
  for (const auto& key : keys) {
    auto write = writes.find(key);
    if (write == writes.end()) continue;
    auto& counts = write->second;
    if (counts.pushed > 0) {
      --counts.pushed;
    } else if (counts.open > 0) {
      --counts.open;
    }
    if (counts.open == 0 && counts.pushed == 0) writes.erase(write);
  }
  if (writes.empty()) writes_.erase(found);
}

bool OwnWrites::own(std::uint64_t client, std::string_view key) const {
  auto found = writes_.find(client);
  if (found == writes_.end()) return false;
  auto write = found->second.find(std::string(key));
  return write != found->second.end() && write->second.open > 0;
}

}  // namespace santral::router

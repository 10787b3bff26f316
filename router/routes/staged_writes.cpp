#include "router/routes/staged_writes.h"

#include <unordered_map>

namespace santral::router {
namespace {

std::unordered_map<std::uint64_t, std::uint32_t>& in_flight() {
  thread_local std::unordered_map<std::uint64_t, std::uint32_t> writes;
  return writes;
}

}  // namespace

void staged_write_started(std::uint64_t client) {
  ++in_flight()[client];
}

void staged_write_ended(std::uint64_t client) {
  auto& writes = in_flight();
  auto it = writes.find(client);
  if (it != writes.end() && --it->second == 0) writes.erase(it);
}

bool staged_write_in_flight(std::uint64_t client) {
  return in_flight().contains(client);
}

}  // namespace santral::router

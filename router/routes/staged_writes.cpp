#include "router/routes/staged_writes.h"

#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace santral::router {
namespace {

struct Registry {
  std::unordered_map<std::uint64_t, std::uint32_t> by_client;
  std::map<std::uint64_t, std::uint64_t> writes;  // write -> client, oldest first
  std::uint64_t next = 1;
  // Callers of after_staged_writes(), with the last write number they wait for.
  std::vector<std::pair<std::uint64_t, std::function<void()>>> waiting;
};

Registry& registry() {
  thread_local Registry writes;
  return writes;
}

// The waiters whose writes have all ended.
void wake(Registry& r) {
  std::uint64_t oldest = r.writes.empty() ? r.next : r.writes.begin()->first;
  std::vector<std::function<void()>> ready;
  std::erase_if(r.waiting, [&](auto& waiter) {
    if (waiter.first >= oldest) return false;
    ready.push_back(std::move(waiter.second));
    return true;
  });
  for (auto& done : ready) done();
}

}  // namespace

std::uint64_t staged_write_started(std::uint64_t client) {
  auto& r = registry();
  ++r.by_client[client];
  auto write = r.next++;
  r.writes.emplace(write, client);
  return write;
}

void staged_write_ended(std::uint64_t client, std::uint64_t write) {
  auto& r = registry();
  auto it = r.by_client.find(client);
  if (it != r.by_client.end() && --it->second == 0) r.by_client.erase(it);
  r.writes.erase(write);
  if (!r.waiting.empty()) wake(r);
}

bool staged_write_in_flight(std::uint64_t client) {
  return registry().by_client.contains(client);
}

void after_staged_writes(std::function<void()> done) {
  auto& r = registry();
  if (r.writes.empty()) return done();
  r.waiting.emplace_back(r.next - 1, std::move(done));
}

}  // namespace santral::router

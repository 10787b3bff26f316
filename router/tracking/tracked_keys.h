#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace santral::router {

// One worker's table of which clients read which keys (Redis's tracking table, kept by the
// router for its clients): filled when a tracked read's reply arrives, emptied for a key when
// its invalidation arrives. Bounded like Redis's tracking-table-max-keys: past the bound a key
// is dropped, and its clients must then be sent its invalidation (the caller does).
class TrackedKeys {
 public:
  using Clients = std::vector<std::uint64_t>;

  explicit TrackedKeys(std::size_t max_keys = 1'000'000) : max_keys_(max_keys) {}
  void set_max_keys(std::size_t max_keys) { max_keys_ = max_keys; }

  // `client` read `key`. Returns the keys dropped to stay within the bound, with their clients.
  std::vector<std::pair<std::string, Clients>> add(std::string_view key, std::uint64_t client);
  // The clients that read `key` since its last invalidation; they are forgotten for it.
  Clients take(std::string_view key);
  // `client` wrote `key` with NOLOOP: it is not told about its own write.
  void forget(std::string_view key, std::uint64_t client);
  // FLUSHALL, or a lost connection every client is told about: nothing is tracked any more.
  void clear() { keys_.clear(); }

  std::size_t size() const { return keys_.size(); }

 private:
  std::size_t max_keys_;
  std::unordered_map<std::string, Clients> keys_;
};

}  // namespace santral::router

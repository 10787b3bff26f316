#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace santral::router {

// One worker's near cache: the replies to GET of hot keys, least recently used evicted first
// once the bytes (keys, values and a fixed overhead per entry) pass the bound. Used only on its
// worker's thread: no locks.
//
// Coherence (the flow lives in router/hotkeys/near_cache/near_cache_route.cpp): a value is filled
// only from a GET sent on the shard's tracking connection (CLIENT TRACKING ON), and Redis then
// tells that same connection when the key changes. A fill records a sequence number when it is
// sent; an invalidation of its key (or of its shard, or of everything) that arrives while it
// is in flight spoils it, so a reply that may predate a write is passed on but never stored.
//
//   fill k (seq 7) --> shard          invalidate k --> spoiled_upto(k) = 7
//   reply v (seq 7) <-- shard          7 <= 7: v goes to the client, not into the cache
//
// A hit never reaches Redis, so Redis's lazy expiry never fires for a cached key: each entry
// keeps its own deadline (the fill's send time plus the key's PTTL) and is a miss past it.
class NearCache {
 public:
  using Clock = std::chrono::steady_clock;
  // Bookkeeping charged per entry besides its key and value (list and map nodes, strings).
  static constexpr std::size_t kEntryOverhead = 128;
  // How a missing key is kept: the tracking connection's RESP3 nil (`$-1` for RESP2 clients).
  static constexpr std::string_view kNil = "_\r\n";

  struct Counters {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t evictions = 0;      // pushed out by the byte bound
    std::uint64_t invalidations = 0;  // entries dropped because the key changed or may have
    std::uint64_t bytes = 0;
    std::uint64_t keys = 0;

    Counters& operator+=(const Counters& other) {
      hits += other.hits;
      misses += other.misses;
      evictions += other.evictions;
      invalidations += other.invalidations;
      bytes += other.bytes;
      keys += other.keys;
      return *this;
    }
  };

  explicit NearCache(std::size_t max_bytes = 0) : max_bytes_(max_bytes) {}

  // A new bound (a reload); entries past it are evicted.
  void set_max_bytes(std::size_t max_bytes);
  std::size_t max_bytes() const { return max_bytes_; }
  // The largest value stored: one entry may not crowd out the rest.
  std::size_t max_value_bytes() const { return max_bytes_ / 8; }

  // The cached reply for `key`, counted as a hit (and made most recent) or a miss; an entry
  // whose deadline has passed is dropped and is a miss.
  const std::string* find(std::string_view key, Clock::time_point now = Clock::now());
  bool contains(std::string_view key) const { return index_.contains(key); }

  // A GET of `key` is sent to fill the cache; returns its sequence number.
  std::uint64_t begin_fill(std::string_view key);
  // Whether a GET reply may be stored: a value that fits, or the nil of a missing key.
  bool storable(std::string_view reply) const;
  // Its reply: stored, until `expires`, when nothing spoiled the fill and it is storable;
  // true when stored.
  bool finish_fill(std::string_view key, std::size_t shard, std::uint64_t seq,
                   std::string_view reply, Clock::time_point expires = Clock::time_point::max());

  // Redis said `key` changed (or Santral routed a write to it).
  void invalidate(std::string_view key);
  // The shard's tracking connection was lost: Redis forgot what it tracked there.
  void invalidate_shard(std::size_t shard);
  // Everything (Redis's flush notice, a reload).
  void invalidate_all();

  // Which keys may enter: those the hot-key detector counts as read often enough.
  void admit(std::vector<std::string> keys);
  bool admitted(std::string_view key) const { return admitted_.contains(key); }
  // Whether `key` is cached, being filled, or may be filled (admitted).
  bool may_hold(std::string_view key) const {
    return admitted_.contains(key) || index_.contains(key) || fills_.contains(key);
  }

  const Counters& counters() const { return counters_; }

 private:
  struct Entry {
    std::string key;
    std::string reply;
    std::size_t shard;
    Clock::time_point expires;
    std::size_t bytes() const { return key.size() + reply.size() + kEntryOverhead; }
  };
  struct Fill {
    std::uint32_t outstanding = 0;
    std::uint64_t spoiled_upto = 0;  // fills with a sequence number up to this are not stored
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
      return std::hash<std::string_view>{}(key);
    }
  };
  using Lru = std::list<Entry>;

  void erase(Lru::iterator at);
  void evict_to(std::size_t bound);
  bool spoiled(std::string_view key, std::size_t shard, std::uint64_t seq) const;

  std::size_t max_bytes_;
  Lru lru_;  // most recently used first
  std::unordered_map<std::string_view, Lru::iterator, KeyHash, std::equal_to<>> index_;
  std::unordered_map<std::string, Fill, KeyHash, std::equal_to<>> fills_;
  std::vector<std::uint64_t> shard_spoiled_upto_;
  std::uint64_t all_spoiled_upto_ = 0;
  std::uint64_t seq_ = 0;
  std::unordered_set<std::string, KeyHash, std::equal_to<>> admitted_;
  Counters counters_;
};

}  // namespace santral::router

#include "router/hotkeys/near_cache/near_cache.h"

namespace santral::router {

void NearCache::set_max_bytes(std::size_t max_bytes) {
  max_bytes_ = max_bytes;
  evict_to(max_bytes_);
}

const std::string* NearCache::find(std::string_view key, Clock::time_point now) {
  auto found = index_.find(key);
  if (found != index_.end() && found->second->expires <= now) {
    ++counters_.invalidations;  // expired in Redis too, which has not noticed yet
    erase(found->second);
    found = index_.end();
  }
  if (found == index_.end()) {
    ++counters_.misses;
    return nullptr;
  }
  ++counters_.hits;
  lru_.splice(lru_.begin(), lru_, found->second);
  return &found->second->reply;
}

std::uint64_t NearCache::begin_fill(std::string_view key) {
  auto found = fills_.find(key);
  if (found == fills_.end()) found = fills_.emplace(std::string(key), Fill{}).first;
  ++found->second.outstanding;
  return ++seq_;
}

bool NearCache::spoiled(std::string_view key, std::size_t shard, std::uint64_t seq) const {
  if (seq <= all_spoiled_upto_) return true;
  if (shard < shard_spoiled_upto_.size() && seq <= shard_spoiled_upto_[shard]) return true;
  auto found = fills_.find(key);
  return found != fills_.end() && seq <= found->second.spoiled_upto;
}

bool NearCache::storable(std::string_view reply) const {
  // A value, or the RESP3 nil of a missing key (Redis tracks a key read while missing too, so
  // its creation invalidates); not an error such as WRONGTYPE.
  bool value = (reply.starts_with('$') && !reply.starts_with("$-")) || reply == kNil;
  return value && reply.size() <= max_value_bytes();
}

bool NearCache::finish_fill(std::string_view key, std::size_t shard, std::uint64_t seq,
                            std::string_view reply, Clock::time_point expires) {
  bool fresh = !spoiled(key, shard, seq);
  if (auto found = fills_.find(key); found != fills_.end() && --found->second.outstanding == 0)
    fills_.erase(found);
  if (!fresh || !storable(reply)) return false;
  if (auto found = index_.find(key); found != index_.end()) erase(found->second);
  Entry entry{std::string(key), std::string(reply), shard, expires};
  std::size_t bytes = entry.bytes();
  if (bytes > max_bytes_) return false;
  evict_to(max_bytes_ - bytes);
  lru_.push_front(std::move(entry));
  index_.emplace(lru_.front().key, lru_.begin());
  counters_.bytes += bytes;
  ++counters_.keys;
  return true;
}

void NearCache::invalidate(std::string_view key) {
  if (auto found = fills_.find(key); found != fills_.end()) found->second.spoiled_upto = seq_;
  auto found = index_.find(key);
  if (found == index_.end()) return;
  ++counters_.invalidations;
  erase(found->second);
}

void NearCache::invalidate_shard(std::size_t shard) {
  if (shard_spoiled_upto_.size() <= shard) shard_spoiled_upto_.resize(shard + 1, 0);
  shard_spoiled_upto_[shard] = seq_;
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (it->shard == shard) {
      ++counters_.invalidations;
      erase(it);
    }
    it = next;
  }
}

void NearCache::invalidate_all() {
  all_spoiled_upto_ = seq_;
  counters_.invalidations += lru_.size();
  index_.clear();
  lru_.clear();
  counters_.bytes = counters_.keys = 0;
}

void NearCache::admit(std::vector<std::string> keys) {
  admitted_.clear();
  for (auto& key : keys) admitted_.insert(std::move(key));
}

void NearCache::erase(Lru::iterator at) {
  counters_.bytes -= at->bytes();
  --counters_.keys;
  index_.erase(at->key);
  lru_.erase(at);
}

void NearCache::evict_to(std::size_t bound) {
  while (counters_.bytes > bound && !lru_.empty()) {
    ++counters_.evictions;
    erase(std::prev(lru_.end()));
  }
}

}  // namespace santral::router

// The near cache's store: LRU under a byte bound, and fills spoiled by invalidations that
// arrive while they are in flight.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "router/hotkeys/near_cache/near_cache.h"

using santral::router::NearCache;

namespace {

std::string bulk(const std::string& value) {
  return "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
}

// Fills `key` with `value` through the fill path, as a GET reply would.
bool fill(NearCache& cache, const std::string& key, const std::string& value,
          std::size_t shard = 0) {
  auto seq = cache.begin_fill(key);
  return cache.finish_fill(key, shard, seq, bulk(value));
}

}  // namespace

TEST_CASE("a filled value is found, counted as a hit; an unknown key is a miss") {
  NearCache cache(64 * 1024);
  CHECK(cache.find("k") == nullptr);
  REQUIRE(fill(cache, "k", "v1"));
  const std::string* hit = cache.find("k");
  REQUIRE(hit != nullptr);
  CHECK(*hit == bulk("v1"));
  CHECK(cache.counters().hits == 1);
  CHECK(cache.counters().misses == 1);
  CHECK(cache.counters().keys == 1);
  CHECK(cache.counters().bytes == 1 + bulk("v1").size() + NearCache::kEntryOverhead);
}

TEST_CASE("values and RESP3 nil are stored; not errors, not values over 1/8 of the bound") {
  NearCache cache(64 * 1024);
  auto seq = cache.begin_fill("a");
  CHECK_FALSE(cache.finish_fill("a", 0, seq, "$-1\r\n"));  // the tracking connection is RESP3
  seq = cache.begin_fill("missing");
  CHECK(cache.finish_fill("missing", 0, seq, "_\r\n"));
  CHECK(*cache.find("missing") == "_\r\n");
  seq = cache.begin_fill("a");
  CHECK_FALSE(cache.finish_fill("a", 0, seq, "-WRONGTYPE Operation against a key\r\n"));
  CHECK_FALSE(fill(cache, "a", std::string(8 * 1024 + 1, 'x')));
  CHECK(fill(cache, "a", std::string(8 * 1024 - 16, 'x')));
  CHECK(cache.counters().keys == 2);
}

TEST_CASE("the byte bound evicts the least recently used entries and is never exceeded") {
  const std::size_t bound = 64 * 1024;
  NearCache cache(bound);
  const std::string value(1000, 'v');
  for (int i = 0; i < 200; ++i) {
    fill(cache, "key" + std::to_string(i), value);
    if (i == 10) REQUIRE(cache.find("key0") != nullptr);  // key0 is now recent
    CHECK(cache.counters().bytes <= bound);
  }
  CHECK(cache.counters().evictions > 0);
  CHECK(cache.counters().keys + cache.counters().evictions == 200);
  CHECK(cache.contains("key199"));
  CHECK_FALSE(cache.contains("key1"));  // the oldest unused went first

  // A smaller bound (a reload) evicts at once.
  cache.set_max_bytes(bound / 2);
  CHECK(cache.counters().bytes <= bound / 2);
  CHECK(cache.contains("key199"));
}

TEST_CASE("invalidations drop the key, the shard's keys, or everything") {
  NearCache cache(64 * 1024);
  fill(cache, "a", "1", 0);
  fill(cache, "b", "2", 1);
  fill(cache, "c", "3", 1);
  cache.invalidate("a");
  CHECK_FALSE(cache.contains("a"));
  cache.invalidate("never-cached");
  CHECK(cache.counters().invalidations == 1);
  cache.invalidate_shard(1);
  CHECK(cache.counters().keys == 0);
  CHECK(cache.counters().bytes == 0);
  CHECK(cache.counters().invalidations == 3);
  fill(cache, "d", "4");
  cache.invalidate_all();
  CHECK_FALSE(cache.contains("d"));
  CHECK(cache.counters().invalidations == 4);
}

TEST_CASE("a fill invalidated while in flight is not stored; one sent after is") {
  NearCache cache(64 * 1024);
  auto early = cache.begin_fill("k");
  cache.invalidate("k");  // the push arrived before the reply
  auto late = cache.begin_fill("k");
  CHECK_FALSE(cache.finish_fill("k", 0, early, bulk("old")));
  CHECK_FALSE(cache.contains("k"));
  CHECK(cache.finish_fill("k", 0, late, bulk("new")));
  CHECK(*cache.find("k") == bulk("new"));

  // A lost tracking connection spoils that shard's fills; a flush spoils every fill.
  auto on_shard_2 = cache.begin_fill("x");
  auto on_shard_3 = cache.begin_fill("y");
  cache.invalidate_shard(2);
  CHECK_FALSE(cache.finish_fill("x", 2, on_shard_2, bulk("1")));
  CHECK(cache.finish_fill("y", 3, on_shard_3, bulk("1")));
  auto before_flush = cache.begin_fill("z");
  cache.invalidate_all();
  CHECK_FALSE(cache.finish_fill("z", 0, before_flush, bulk("1")));
}

TEST_CASE("an entry is served until its key's deadline, then dropped as a miss") {
  NearCache cache(64 * 1024);
  auto now = NearCache::Clock::now();
  auto seq = cache.begin_fill("brief");
  REQUIRE(cache.finish_fill("brief", 0, seq, bulk("v"), now + std::chrono::milliseconds(300)));
  REQUIRE(fill(cache, "forever", "v"));
  CHECK(cache.find("brief", now + std::chrono::milliseconds(299)) != nullptr);
  CHECK(cache.find("brief", now + std::chrono::milliseconds(300)) == nullptr);
  CHECK_FALSE(cache.contains("brief"));
  CHECK(cache.counters().keys == 1);
  CHECK(cache.counters().hits == 1);
  CHECK(cache.counters().misses == 1);
  CHECK(cache.find("forever", now + std::chrono::hours(24 * 365)) != nullptr);
}

TEST_CASE("a write's reply evicts again: a fill that read before the write, stored or in flight") {
  // Santral invalidates a written key when it routes the write and again when the write's
  // reply reaches its client, for Redis's own invalidation may still be unread then.
  NearCache cache(64 * 1024);
  cache.admit({"k"});
  CHECK(cache.may_hold("k"));
  CHECK_FALSE(cache.may_hold("cold"));
  cache.invalidate("k");  // the write is routed
  auto stored = cache.begin_fill("k");
  REQUIRE(cache.finish_fill("k", 0, stored, bulk("old")));  // read before the write ran
  auto in_flight = cache.begin_fill("k");
  cache.invalidate("k");  // the write's reply reaches its client
  CHECK_FALSE(cache.contains("k"));
  CHECK_FALSE(cache.finish_fill("k", 0, in_flight, bulk("old")));
  CHECK_FALSE(cache.contains("k"));
  CHECK(fill(cache, "k", "new"));

  // FLUSHALL's reply: the same for everything.
  auto flushed = cache.begin_fill("other");
  cache.invalidate_all();
  CHECK_FALSE(cache.contains("k"));
  CHECK_FALSE(cache.finish_fill("other", 0, flushed, bulk("old")));
}

TEST_CASE("admission follows the last list of hot keys") {
  NearCache cache(64 * 1024);
  CHECK_FALSE(cache.admitted("hot"));
  cache.admit({"hot", "warm"});
  CHECK(cache.admitted("hot"));
  cache.admit({"warm"});
  CHECK_FALSE(cache.admitted("hot"));
  CHECK(cache.admitted("warm"));
}

// placement/namespace/key_slot.cpp: Redis Cluster's key slot (CRC16 of the shard key), and the
// slots strategy placing keys by it.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "placement/namespace/key_slot.h"
#include "tests/support/namespace_fixtures.h"

using namespace santral::config;
using namespace santral::placement;
using namespace santral::config::fixtures;

TEST_CASE("slots: CRC16 of the shard key picks the slot, the slot table the shard") {
  // Redis Cluster's CRC16 (XMODEM) check value and slots it documents.
  CHECK(key_slot("123456789") == 0x31C3);
  CHECK(key_slot("") == 0);
  CHECK(key_slot("foo") == 12182);
  CHECK(key_slot("bar") == 5061);
  ShardMap map = map_of(header() + kNamespaces);
  std::set<std::size_t> used;
  for (int i = 0; i < 3000; ++i) {
    std::string user = "u" + std::to_string(i);
    std::string key = "cart:" + user + ":item" + std::to_string(i % 7);
    auto slot = key_slot(user);
    std::size_t want = slot < 4096 ? A : slot < 8192 ? B : slot < 12288 ? C : D;
    auto p = map.place(key);
    REQUIRE(p.namespace_name == "carts");
    REQUIRE(p.shard_key == user);
    REQUIRE(p.detail == "slot " + std::to_string(slot));
    REQUIRE(p.shard == want);
    REQUIRE(map.shard_for_key(key) == want);
    REQUIRE(map.shard_for_key("cart:" + user + ":other") == want);  // same user, same shard
    used.insert(want);
  }
  CHECK(used.size() == 4);
}

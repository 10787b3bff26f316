// Keys written through Santral land on the shard its placement rule names, checked on the
// shards themselves.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "tests/support/cluster.h"

using namespace santral::test;

TEST_CASE("every key lands on the shard that owns it, and is read back through Santral") {
  Cluster cluster(4);
  auto client = cluster.client();
  constexpr int kKeys = 2000;
  for (int i = 0; i < kKeys; ++i)
    client.append({"SET", "user:" + std::to_string(i), "value-" + std::to_string(i)});
  for (int i = 0; i < kKeys; ++i) REQUIRE(client.get_reply().is_ok());

  std::map<std::size_t, int> per_shard;
  for (std::size_t s = 0; s < cluster.size(); ++s) {
    auto direct = cluster.shard(s).client();
    auto keys = direct.command({"KEYS", "*"});
    for (const auto& key : keys.elements) {
      INFO(key.str << " found on shard " << s);
      REQUIRE(cluster.owner(key.str) == s);
      ++per_shard[s];
    }
  }
  int total = 0;
  for (auto [shard, n] : per_shard) {
    CHECK(n > kKeys / 4 / 3);  // every shard takes a real share
    total += n;
  }
  CHECK(per_shard.size() == 4);
  CHECK(total == kKeys);

  for (int i = 0; i < kKeys; ++i) client.append({"GET", "user:" + std::to_string(i)});
  for (int i = 0; i < kKeys; ++i) REQUIRE(client.get_reply().str == "value-" + std::to_string(i));
}

TEST_CASE("keys with the same hash tag share a shard, and multi-key commands work on them") {
  Cluster cluster(4);
  auto client = cluster.client();
  std::set<std::size_t> shards_used;
  for (int user = 0; user < 40; ++user) {
    std::string tag = "{user" + std::to_string(user) + "}";
    REQUIRE(client.command({"SET", tag + ":name", "n"}).is_ok());
    REQUIRE(client.command({"SET", tag + ":mail", "m"}).is_ok());
    std::size_t owner = cluster.owner(tag + ":name");
    shards_used.insert(owner);
    CHECK(cluster.shard(owner).has_key(tag + ":name"));
    CHECK(cluster.shard(owner).has_key(tag + ":mail"));
    // RENAME needs both keys on one shard: the tag guarantees it.
    CHECK(client.command({"RENAME", tag + ":mail", tag + ":email"}).is_ok());
    CHECK(cluster.shard(owner).has_key(tag + ":email"));
  }
  CHECK(shards_used.size() == 4);
}

TEST_CASE("a multi-key command across shards is refused with CROSSSLOT naming the shards") {
  Cluster cluster(2);
  auto client = cluster.client();
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  auto reply = client.command({"RENAME", a, b});
  REQUIRE(reply.is_error());
  CHECK(reply.str.rfind("CROSSSLOT", 0) == 0);
  CHECK(reply.str.find("shard0") != std::string::npos);
  CHECK(reply.str.find("shard1") != std::string::npos);
  CHECK(reply.str.find("hash tag") != std::string::npos);
  CHECK(cluster.shard(0).dbsize() == 0);
  CHECK(cluster.shard(1).dbsize() == 0);
}

TEST_CASE("PUBLISH goes to the shard that owns the channel") {
  Cluster cluster(3);
  auto client = cluster.client();
  for (int i = 0; i < 30; ++i) {
    std::string channel = "news:" + std::to_string(i);
    REQUIRE(client.command({"PUBLISH", channel, "hello"}).type == Reply::Type::Integer);
  }
  long long calls = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) {
    long long here = cluster.shard(s).command_calls("publish");
    int expected = 0;
    for (int i = 0; i < 30; ++i) expected += cluster.owner("news:" + std::to_string(i)) == s;
    CHECK(here == expected);
    calls += here;
  }
  CHECK(calls == 30);
}

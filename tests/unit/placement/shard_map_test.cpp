#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "config/hashkit/hash_functions.h"
#include "config/hashkit/ketama.h"
#include "config/hashkit/modula.h"
#include "config/hashkit/ring_node.h"
#include "placement/shard_map.h"

using namespace santral::config;
using namespace santral::placement;

namespace {

Config four_shards(Distribution distribution, std::string hash_tag = "{}") {
  Config c;
  c.hash = santral::hashkit::hash_function_named("fnv1a_64").value();
  c.distribution = distribution;
  c.hash_tag = std::move(hash_tag);
  for (int i = 0; i < 4; ++i) {
    ShardConfig s;
    s.name = "shard" + std::to_string(i);
    s.ring_name = s.name;
    s.address = {"127.0.0.1", static_cast<std::uint16_t>(7000 + i)};
    c.shards.push_back(s);
  }
  return c;
}

}  // namespace

TEST_CASE("hash tags: only the text inside the first non-empty {...} is hashed") {
  ShardMap map(four_shards(Distribution::Ketama));
  CHECK(map.hashed_part("user:{42}:name") == "42");
  CHECK(map.hashed_part("{42}") == "42");
  CHECK(map.hashed_part("plain") == "plain");
  CHECK(map.hashed_part("a{}b{c}") == "a{}b{c}");  // an empty tag means the whole key
  CHECK(map.hashed_part("a{b") == "a{b");
  CHECK(map.hashed_part("a}b{c}") == "c");
  CHECK(map.hashed_part("{a}{b}") == "a");
  CHECK(map.shard_for_key("user:{42}:name") == map.shard_for_key("user:{42}:email"));
  CHECK(map.shard_for_key("user:{42}:name") == map.shard_for_key("42"));
}

TEST_CASE("without a hash tag the whole key is hashed") {
  ShardMap map(four_shards(Distribution::Ketama, ""));
  CHECK(map.hashed_part("user:{42}:name") == "user:{42}:name");
}

TEST_CASE("keys land where twemproxy puts them, and spread over every shard") {
  // Placed by nutcracker 0.5.0 (hash fnv1a_64, hash_tag "{}", servers shard0..shard3 of weight
  // 1): each key SET through nutcracker, then found with KEYS * on the four redis-servers.
  struct Golden {
    std::string key;
    std::size_t ketama, modula;
  };
  const Golden golden[] = {
      {"key:0", 2, 2},     {"key:10", 3, 3},         {"key:100", 0, 1}, {"key:1000", 3, 3},
      {"key:19999", 2, 1}, {"apple", 3, 3},          {"banana", 3, 0},  {"cherry", 1, 0},
      {"damson", 0, 3},    {"elder", 3, 3},          {"fig", 1, 1},     {"grape", 0, 0},
      {"42", 0, 3},        {"user:{42}:name", 0, 3}, {"a{}b{c}", 2, 3}, {"{}", 3, 1},
  };
  ShardMap ketama(four_shards(Distribution::Ketama));
  ShardMap modula(four_shards(Distribution::Modula));
  for (const auto& g : golden) {
    INFO(g.key);
    CHECK(ketama.shard_for_key(g.key) == g.ketama);
    CHECK(modula.shard_for_key(g.key) == g.modula);
  }

  // Every other key where twemproxy's hash and distribution, computed apart from ShardMap,
  // put it (tests/integration/twemproxy_placement_test.cpp holds those to nutcracker).
  const santral::hashkit::RingNode nodes[] = {
      {"shard0", 1}, {"shard1", 1}, {"shard2", 1}, {"shard3", 1}};
  const santral::hashkit::KetamaRing ring(nodes);
  const santral::hashkit::ModulaTable table(nodes);
  auto fnv1a_64 = santral::hashkit::hash_function_named("fnv1a_64").value();
  for (auto distribution : {Distribution::Ketama, Distribution::Modula}) {
    ShardMap map(four_shards(distribution));
    std::map<std::size_t, int> counts;
    for (int i = 0; i < 20000; ++i) {
      std::string key = "key:" + std::to_string(i);
      auto hash = fnv1a_64(key);
      auto want = distribution == Distribution::Ketama ? ring.locate(hash) : table.locate(hash);
      INFO(key);
      REQUIRE(map.shard_for_key(key) == want);
      ++counts[want];
    }
    REQUIRE(counts.size() == 4);
    for (auto [shard, n] : counts) {
      INFO("shard " << shard);
      CHECK(n > 20000 / 4 / 2);  // no shard gets less than half its fair share
      CHECK(n < 20000 / 4 * 2);
    }
  }
}

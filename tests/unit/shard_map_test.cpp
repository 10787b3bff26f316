#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "config/shard_map.h"

using namespace santral::config;

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

TEST_CASE("keys spread over every shard and always land on the same one") {
  for (auto distribution : {Distribution::Ketama, Distribution::Modula}) {
    ShardMap map(four_shards(distribution));
    std::map<std::size_t, int> counts;
    for (int i = 0; i < 20000; ++i) {
      std::string key = "key:" + std::to_string(i);
      auto shard = map.shard_for_key(key);
      REQUIRE(shard < 4);
      REQUIRE(map.shard_for_key(key) == shard);
      ++counts[shard];
    }
    REQUIRE(counts.size() == 4);
    for (auto [shard, n] : counts) {
      INFO("shard " << shard);
      CHECK(n > 20000 / 4 / 2);  // no shard gets less than half its fair share
      CHECK(n < 20000 / 4 * 2);
    }
  }
}

// Santral's slot of a key against Redis Cluster's own: a real redis-server started with
// cluster-enabled answers CLUSTER KEYSLOT (no slots need to be assigned for that).
//
// CLUSTER KEYSLOT applies the hash tag itself (the text inside the first '{' and the first '}'
// after it, when non-empty; else the whole key). placement::key_slot() takes the shard key after
// the tag has been applied, which Santral does with ShardMap::hashed_part() under hash_tag
// "{}". So the comparison is CLUSTER KEYSLOT key == key_slot(hashed_part(key)), and, end to
// end, a slots namespace over the whole key explains its placement with that same slot.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "placement/namespace/key_slot.h"
#include "placement/shard_map.h"
#include "tests/support/free_port.h"
#include "tests/support/redis_server.h"

using namespace santral;

namespace {

test::RedisServer cluster_node() {
  // The node writes its cluster config (nodes.conf) into the server's own temp --dir. The
  // cluster bus defaults to port + 10000, impossible above 55535, so it gets a free port of
  // its own.
  return test::RedisServer({"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                            "--cluster-port", std::to_string(test::free_loopback_port())});
}

config::Config one_shard(const std::string& hash_tag) {
  config::Config c;
  c.hash_name = "murmur";
  c.hash = hashkit::hash_function_named("murmur").value();
  c.hash_tag = hash_tag;
  config::ShardConfig s;
  s.name = "only";
  s.ring_name = "only";
  s.address = {"127.0.0.1", 7000};
  c.shards.push_back(s);
  return c;
}

// Keys that exercise the tag rule and CRC16 over every byte value.
std::vector<std::string> test_keys() {
  std::vector<std::string> keys = {
      "",
      "a",
      "foo",
      "123456789",
      "{user}x",
      "x{user}",
      "{user}",
      "{}x",
      "x{}",
      "{}",
      "{}{user}",  // an empty first tag: the whole key, not the second tag
      "{{a}}",     // the tag is "{a"
      "{a}}",
      "}{a}",
      "{a",
      "a}",
      "{",
      "}",
      "{{}}",
      "user:{42}:name",
      "user:{42}:mail",
      std::string("\0", 1),
      std::string("\0{\0}\0", 5),
      std::string("{\xff}", 3),
      "\xff\xfe\xfd",
  };
  for (int c = 0; c < 256; ++c) keys.push_back(std::string(1, static_cast<char>(c)));
  std::mt19937 rng(16384);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 40);
  const std::string braces = "{}{}x";
  for (int i = 0; i < 4000; ++i) {
    std::string key;
    for (int n = length(rng); n > 0; --n) {
      // One byte in four a brace (or an 'x' between them), so tags of every shape occur.
      int b = byte(rng);
      key += b < 64 ? braces[static_cast<std::size_t>(b) % braces.size()] : static_cast<char>(b);
    }
    keys.push_back(key);
  }
  return keys;
}

}  // namespace

TEST_CASE("key_slot of the hash-tagged part equals CLUSTER KEYSLOT for every key") {
  auto node = cluster_node();
  auto client = node.client();
  REQUIRE(client.command({"INFO", "cluster"}).str.find("cluster_enabled:1") != std::string::npos);
  placement::ShardMap map(one_shard("{}"));
  auto keys = test_keys();
  for (const auto& key : keys) client.append({"CLUSTER", "KEYSLOT", key});
  int tagged = 0;
  for (const auto& key : keys) {
    auto reply = client.get_reply();
    INFO("key of " << key.size() << " bytes: " << key);
    REQUIRE(reply.type == test::Reply::Type::Integer);
    REQUIRE(reply.integer >= 0);
    REQUIRE(reply.integer < 16384);
    std::string_view part = map.hashed_part(key);
    REQUIRE(placement::key_slot(part) == static_cast<std::uint32_t>(reply.integer));
    tagged += part.size() != key.size();
  }
  CHECK(tagged > 500);  // the tag rule was exercised, not just CRC16
}

TEST_CASE("hash tag cases agree with Redis Cluster's documented rule") {
  auto node = cluster_node();
  auto client = node.client();
  auto slot = [&](const std::string& key) {
    auto reply = client.command({"CLUSTER", "KEYSLOT", key});
    REQUIRE(reply.type == test::Reply::Type::Integer);
    return static_cast<std::uint32_t>(reply.integer);
  };
  placement::ShardMap map(one_shard("{}"));
  CHECK(slot("{user}x") == placement::key_slot("user"));
  CHECK(slot("{user}x") == slot("{user}y"));
  CHECK(slot("{}x") == placement::key_slot("{}x"));
  CHECK(slot("{{a}}") == placement::key_slot("{a"));
  CHECK(map.hashed_part("{{a}}") == "{a");
  CHECK(slot("{}{user}") == placement::key_slot("{}{user}"));
  CHECK(map.hashed_part("{}{user}") == "{}{user}");
  CHECK(slot("") == 0);
  CHECK(placement::key_slot("") == 0);
  CHECK(slot("123456789") == 0x31C3);
  // Without a tag setting Santral hashes the whole key; Redis still applies its tag.
  placement::ShardMap untagged(one_shard(""));
  CHECK(untagged.hashed_part("{user}x") == "{user}x");
  CHECK(placement::key_slot(untagged.hashed_part("{user}x")) != slot("{user}x"));
}

TEST_CASE("a slots namespace places every key in CLUSTER KEYSLOT's slot") {
  auto node = cluster_node();
  auto client = node.client();
  auto c = one_shard("{}");
  for (int i = 1; i < 4; ++i) {
    config::ShardConfig s = c.shards[0];
    s.name = s.ring_name = "s" + std::to_string(i);
    s.address.port = static_cast<std::uint16_t>(7000 + i);
    c.shards.push_back(s);
  }
  // Built directly, without shard_key: the shard key is the whole key (from YAML, "{key}"
  // would default to its first field, which is the whole key too).
  config::NamespaceConfig ns;
  ns.name = "all";
  ns.match = "{key}";
  ns.strategy = config::Strategy::Slots;
  // 16384 slots split evenly over 4 shards: shard = slot / 4096.
  ns.slots = {{0, 4095, 0}, {4096, 8191, 1}, {8192, 12287, 2}, {12288, 16383, 3}};
  c.namespaces.push_back(ns);
  placement::ShardMap map(c);

  auto keys = test_keys();
  std::vector<std::string> nonempty;
  for (const auto& key : keys)
    if (!key.empty()) nonempty.push_back(key);
  for (const auto& key : nonempty) client.append({"CLUSTER", "KEYSLOT", key});
  std::vector<int> per_shard(4);
  for (const auto& key : nonempty) {
    auto reply = client.get_reply();
    REQUIRE(reply.type == test::Reply::Type::Integer);
    auto p = map.place(key);
    INFO("key " << key);
    REQUIRE(p.namespace_name == "all");
    REQUIRE(p.detail == "slot " + std::to_string(reply.integer));
    REQUIRE(p.shard == static_cast<std::size_t>(reply.integer / 4096));
    ++per_shard[p.shard];
  }
  for (int n : per_shard) CHECK(n > 500);
}

// SANTRAL EXPLAIN prints the plan dispatch carries out, so what it says is what happens: a
// salted counter's GET names every sub-key and reads from exactly those shards; a near-cached
// GET says so; EXPLAIN itself runs nothing on any shard.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/cluster.h"

using namespace santral::test;

namespace {

// A map reply (RESP2: a flat array of pairs) by field name.
std::map<std::string, Reply> as_map(const Reply& reply) {
  std::map<std::string, Reply> fields;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
    fields[reply.elements[i].str] = reply.elements[i + 1];
  return fields;
}

std::map<std::string, Reply> explain(RedisClient& client, std::vector<std::string> command) {
  command.insert(command.begin(), {"SANTRAL", "EXPLAIN"});
  auto reply = client.command(command);
  INFO(reply.str);
  REQUIRE(reply.type == Reply::Type::Array);
  return as_map(reply);
}

std::set<std::string> names(const Reply& array) {
  std::set<std::string> out;
  for (const auto& element : array.elements) out.insert(element.str);
  return out;
}

}  // namespace

TEST_CASE("EXPLAIN of a salted counter's GET names its sub-keys, and GET reads those shards") {
  Cluster cluster(4, "workers: 1\n");
  auto client = cluster.client();
  REQUIRE(client.command({"SANTRAL", "SALT", "likes:1", "4"}).is_ok());
  for (int i = 0; i < 40; ++i)
    REQUIRE(client.command({"INCR", "likes:1"}).type == Reply::Type::Integer);

  auto e = explain(client, {"GET", "likes:1"});
  CHECK(e["kind"].str == "SALTED");
  CHECK(e["route"].str == "SALTED");
  REQUIRE(e["keys"].elements.size() == 1);
  auto key = as_map(e["keys"].elements[0]);
  CHECK(key["salts"].integer == 4);
  REQUIRE(key["sub_keys"].elements.size() == 4);
  std::set<std::string> sub_key_shards;
  for (const auto& sub : key["sub_keys"].elements)
    sub_key_shards.insert(sub.str.substr(sub.str.find(" -> ") + 4));
  CHECK(names(e["shards"]) == sub_key_shards);

  // The GET really reads every shard EXPLAIN named, and no other.
  std::vector<long long> before;
  for (std::size_t s = 0; s < 4; ++s) before.push_back(cluster.shard(s).command_calls("get"));
  CHECK(client.command({"GET", "likes:1"}).str == "40");
  std::set<std::string> read;
  for (std::size_t s = 0; s < 4; ++s)
    if (cluster.shard(s).command_calls("get") > before[s]) read.insert("shard" + std::to_string(s));
  CHECK(read == sub_key_shards);

  // A command salting does not support is refused, and EXPLAIN says so.
  auto refused = explain(client, {"APPEND", "likes:1", "x"});
  CHECK(refused["kind"].str == "REFUSED");
  CHECK(refused["note"].str.find("salted") != std::string::npos);
  CHECK(client.command({"APPEND", "likes:1", "x"}).is_error());
}

TEST_CASE("EXPLAIN of a GET says whether the near cache may answer it") {
  Cluster cluster(2,
                  "workers: 1\n"
                  "near_cache: {enabled: true}\n"
                  "namespaces:\n"
                  "  - name: sessions\n"
                  "    match: \"session:{id}\"\n"
                  "    strategy: hashed\n"
                  "    near_cache: false\n");
  auto client = cluster.client();
  auto cached = explain(client, {"GET", "post:1"});
  CHECK(cached["route"].str == "NEAR_CACHE");
  CHECK(cached["note"].str.find("near-cached") != std::string::npos);
  REQUIRE(cached["keys"].elements.size() == 1);
  CHECK(as_map(cached["keys"].elements[0])["near_cache"].str == "yes");
  CHECK(names(cached["shards"]) ==
        std::set<std::string>{"shard" + std::to_string(cluster.owner("post:1"))});

  auto not_cached = explain(client, {"GET", "session:1"});
  CHECK(not_cached["route"].str == "SINGLE_SHARD");
  CHECK(not_cached["connection"].str == "read_from: primary");  // the config's
  CHECK(explain(client, {"SET", "session:1", "v"})["connection"].str == "primary");
  CHECK(as_map(not_cached["keys"].elements[0]).count("near_cache") == 0);
  // Another database is never cached.
  REQUIRE(client.command({"SELECT", "1"}).is_ok());
  CHECK(explain(client, {"GET", "post:1"})["route"].str == "SINGLE_SHARD");
  for (std::size_t s = 0; s < 2; ++s) CHECK(cluster.shard(s).command_calls("get") == 0);
}

TEST_CASE("EXPLAIN of SUBSCRIBE names the shards the subscription really goes to") {
  Cluster cluster(4, "workers: 1\n");
  auto client = cluster.client();
  std::string key = cluster.key_on(2, "watched");
  std::string keyspace = "__keyspace@0__:" + key;

  // A key's notifications come from the key's shard, not from the shard owning the channel name.
  auto e = explain(client, {"SUBSCRIBE", keyspace});
  CHECK(names(e["shards"]) == std::set<std::string>{"shard2"});
  auto events = explain(client, {"SUBSCRIBE", "__keyevent@0__:expired"});
  CHECK(names(events["shards"]) == std::set<std::string>{"shard0", "shard1", "shard2", "shard3"});

  // And the subscription lands where EXPLAIN said: only shard2 lists the channel.
  RawConnection subscriber(cluster.santral().port());
  subscriber.send("*2\r\n$9\r\nSUBSCRIBE\r\n$" + std::to_string(keyspace.size()) + "\r\n" +
                  keyspace + "\r\n");
  REQUIRE(subscriber.read_until(":1\r\n").ends_with(":1\r\n"));
  std::set<std::string> listening;
  for (std::size_t s = 0; s < 4; ++s)
    if (cluster.shard(s).client().command({"PUBSUB", "NUMSUB", keyspace}).elements.at(1).integer ==
        1)
      listening.insert("shard" + std::to_string(s));
  CHECK(listening == names(e["shards"]));
}

// Namespaces against real redis-server shards: every strategy puts keys where its table says,
// KEYS and SCAN MATCH visit only the shards that can hold a match, moving one directory group
// moves only that group, and SANTRAL EXPLAIN says how each kind of command is routed.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

// hash_tag is off so that a MATCH prefix settles the shard key (with tags on, the part of a
// key the glob leaves open could hold a tag, and every shard can hold a match).
const std::string kNamespaces = R"(hash_tag: ""
namespaces:
  - name: sessions
    match: "session:{id}"
    strategy: hashed
    vnodes: 100
    shards: [shard0, shard1, shard2]
  - name: carts
    match: "cart:{user}:{item}"
    shard_key: user
    strategy: slots
    slots:
      - {shard: shard0, from: 0, to: 4095}
      - {shard: shard1, from: 4096, to: 8191}
      - {shard: shard2, from: 8192, to: 12287}
      - {shard: shard3, from: 12288, to: 16383}
  - name: customers
    match: "customer:{name}"
    shard_key: name
    strategy: range
    ranges:
      - {shard: shard0, to: "h"}
      - {shard: shard1, from: "h", to: "p"}
      - {shard: shard2, from: "p", to: "t"}
      - {shard: shard3, from: "t"}
  - name: invoices
    match: "invoice:{number}:{line}"
    shard_key: number
    strategy: range
    order: numeric
    ranges:
      - {shard: shard0, to: 1000}
      - {shard: shard3, from: 1000}
  - name: orders
    match: "order:{seller}:{id}"
    shard_key: seller
    strategy: directory
    groups:
      seller42: shard1
      seller7: shard0
    fallback: {strategy: hashed, shards: [shard2, shard3]}
  - name: tenants
    match: "tenant:{tenant}:{key}"
    shard_key: tenant
    strategy: zone
    zones:
      eu: [shard0, shard1]
      us: [shard2, shard3]
    groups:
      tenantA: eu
      tenantB: us
    default_zone: eu
)";

// The shards that hold `key`, read from the shards themselves.
std::set<std::size_t> holders(Cluster& cluster, const std::string& key) {
  std::set<std::size_t> out;
  for (std::size_t s = 0; s < cluster.size(); ++s)
    if (cluster.shard(s).has_key(key)) out.insert(s);
  return out;
}

void write_through(RedisClient& client, const std::string& key) {
  REQUIRE(client.command({"SET", key, "v"}).is_ok());
}

std::map<std::string, Reply> as_map(const Reply& reply) {
  std::map<std::string, Reply> out;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
    out[reply.elements[i].str] = reply.elements[i + 1];
  return out;
}

std::vector<std::string> names(const Reply& array) {
  std::vector<std::string> out;
  for (const auto& e : array.elements) out.push_back(e.str);
  return out;
}

void reset_stats(Cluster& cluster) {
  for (std::size_t s = 0; s < cluster.size(); ++s)
    REQUIRE(cluster.shard(s).client().command({"CONFIG", "RESETSTAT"}).is_ok());
}

}  // namespace

TEST_CASE("each strategy places keys on the shards its table names") {
  Cluster cluster(4, kNamespaces);
  auto client = cluster.client();

  SECTION("range, byte order: lower bound inclusive, upper exclusive, open ends") {
    const std::map<std::string, std::size_t> expected = {
        {"customer:alice", 0}, {"customer:gz", 0},    {"customer:h", 1}, {"customer:mike", 1},
        {"customer:p", 2},     {"customer:quinn", 2}, {"customer:t", 3}, {"customer:zoe", 3},
        {"customer:~", 3},     {"customer:A", 0}};
    for (const auto& [key, shard] : expected) {
      write_through(client, key);
      CHECK(holders(cluster, key) == std::set<std::size_t>{shard});
    }
  }
  SECTION("range, numeric order; a shard key outside the table falls to the default") {
    write_through(client, "invoice:999:1");
    write_through(client, "invoice:1000:1");
    write_through(client, "invoice:-5:1");
    write_through(client, "invoice:20000:7");
    CHECK(holders(cluster, "invoice:999:1") == std::set<std::size_t>{0});
    CHECK(holders(cluster, "invoice:-5:1") == std::set<std::size_t>{0});
    CHECK(holders(cluster, "invoice:1000:1") == std::set<std::size_t>{3});
    CHECK(holders(cluster, "invoice:20000:7") == std::set<std::size_t>{3});
    // Not a number: not in the namespace, placed by the default ring like any other key.
    write_through(client, "invoice:draft:1");
    CHECK(holders(cluster, "invoice:draft:1") ==
          std::set<std::size_t>{cluster.owner("invoice:draft:1")});
  }
  SECTION(
      "slots: CRC16 slot of the shard key, as CLUSTER KEYSLOT (foo 12182, bar 5061, hello 866)") {
    for (std::string item : {"1", "2", "xyz"}) {
      write_through(client, "cart:foo:" + item);
      write_through(client, "cart:bar:" + item);
      write_through(client, "cart:hello:" + item);
      CHECK(holders(cluster, "cart:foo:" + item) == std::set<std::size_t>{2});
      CHECK(holders(cluster, "cart:bar:" + item) == std::set<std::size_t>{1});
      CHECK(holders(cluster, "cart:hello:" + item) == std::set<std::size_t>{0});
    }
  }
  SECTION("hashed: only over the listed shards, and over all of them") {
    std::set<std::size_t> used;
    for (int i = 0; i < 300; ++i) {
      std::string key = "session:" + std::to_string(i);
      write_through(client, key);
      auto on = holders(cluster, key);
      REQUIRE(on.size() == 1);
      used.insert(*on.begin());
    }
    CHECK(used == std::set<std::size_t>{0, 1, 2});
  }
  SECTION("directory: listed groups on their shard, the others on the fallback's shards") {
    std::set<std::size_t> fallback;
    for (int i = 0; i < 50; ++i) {
      std::string id = std::to_string(i);
      write_through(client, "order:seller42:" + id);
      write_through(client, "order:seller7:" + id);
      write_through(client, "order:seller" + std::to_string(1000 + i) + ":" + id);
      CHECK(holders(cluster, "order:seller42:" + id) == std::set<std::size_t>{1});
      CHECK(holders(cluster, "order:seller7:" + id) == std::set<std::size_t>{0});
      auto other = holders(cluster, "order:seller" + std::to_string(1000 + i) + ":" + id);
      REQUIRE(other.size() == 1);
      fallback.insert(*other.begin());
    }
    CHECK(fallback == std::set<std::size_t>{2, 3});
  }
  SECTION("zone: a group's keys stay in its zone; unlisted groups in default_zone") {
    std::set<std::size_t> a, b, other;
    for (int i = 0; i < 100; ++i) {
      std::string id = std::to_string(i);
      for (auto [tenant, seen] : {std::pair{"tenantA", &a}, {"tenantB", &b}, {"tenantZ", &other}}) {
        std::string key = std::string("tenant:") + tenant + ":" + id;
        write_through(client, key);
        auto on = holders(cluster, key);
        REQUIRE(on.size() == 1);
        seen->insert(*on.begin());
      }
    }
    // Hashed within the zone: a tenant's keys spread over its zone's shards, never beyond.
    CHECK(a == std::set<std::size_t>{0, 1});
    CHECK(b == std::set<std::size_t>{2, 3});
    CHECK(other == std::set<std::size_t>{0, 1});
  }
  SECTION("a hash tag wins over the shard key field") {
    // With tags on, customer:{zed}a is placed by "zed": the last range, not the first.
    Cluster tagged(4, "hash_tag: \"{}\"\n" + kNamespaces.substr(kNamespaces.find("namespaces:")));
    auto c = tagged.client();
    write_through(c, "customer:a{zed}");
    CHECK(holders(tagged, "customer:a{zed}") == std::set<std::size_t>{3});
    write_through(c, "customer:zoe");
    CHECK(holders(tagged, "customer:zoe") == std::set<std::size_t>{3});
  }
  SECTION("multi-key commands split per key, each by its own namespace") {
    REQUIRE(client
                .command({"MSET", "customer:alice", "1", "customer:zoe", "2", "order:seller42:1",
                          "3", "cart:hello:1", "4"})
                .is_ok());
    CHECK(holders(cluster, "customer:alice") == std::set<std::size_t>{0});
    CHECK(holders(cluster, "customer:zoe") == std::set<std::size_t>{3});
    CHECK(holders(cluster, "order:seller42:1") == std::set<std::size_t>{1});
    CHECK(holders(cluster, "cart:hello:1") == std::set<std::size_t>{0});
    auto values = client.command(
        {"MGET", "cart:hello:1", "customer:zoe", "order:seller42:1", "customer:alice"});
    CHECK(names(values) == std::vector<std::string>{"4", "2", "3", "1"});
  }
}

TEST_CASE("KEYS and SCAN MATCH on a range or directory prefix visit only the owning shards") {
  Cluster cluster(4, kNamespaces);
  auto client = cluster.client();
  std::set<std::string> a_keys;
  for (int i = 0; i < 200; ++i) {
    std::string n = std::to_string(i);
    for (std::string first : {"a", "b", "i", "q", "u"}) {
      std::string key = "customer:" + first + n;
      write_through(client, key);
      if (first == "a") a_keys.insert(key);
    }
    write_through(client, "order:seller42:" + n);
    write_through(client, "order:seller9" + n + ":1");
  }

  SECTION("SCAN MATCH customer:a* runs on shard0 only, and finds every match") {
    reset_stats(cluster);
    std::set<std::string> found;
    std::string cursor = "0";
    int calls = 0;
    do {
      auto reply = client.command({"SCAN", cursor, "MATCH", "customer:a*", "COUNT", "50"});
      REQUIRE(reply.elements.size() == 2);
      cursor = reply.elements[0].str;
      for (const auto& k : reply.elements[1].elements) found.insert(k.str);
      REQUIRE(++calls < 1000);
    } while (cursor != "0");
    CHECK(found == a_keys);
    CHECK(cluster.shard(0).command_calls("scan") > 0);
    CHECK(cluster.shard(1).command_calls("scan") == 0);
    CHECK(cluster.shard(2).command_calls("scan") == 0);
    CHECK(cluster.shard(3).command_calls("scan") == 0);
  }
  SECTION("a prefix across two ranges visits both") {
    reset_stats(cluster);
    auto keys = client.command({"KEYS", "customer:*"});
    CHECK(keys.elements.size() == 1000);
    for (std::size_t s = 0; s < 4; ++s) CHECK(cluster.shard(s).command_calls("keys") == 1);
    reset_stats(cluster);
    // Ranges are [,h) [h,p) [p,t) [t,): "customer:" + "q..." only the third.
    CHECK(client.command({"KEYS", "customer:q*"}).elements.size() == 200);
    CHECK(cluster.shard(0).command_calls("keys") == 0);
    CHECK(cluster.shard(1).command_calls("keys") == 0);
    CHECK(cluster.shard(2).command_calls("keys") == 1);
    CHECK(cluster.shard(3).command_calls("keys") == 0);
  }
  SECTION("a pattern that pins a directory group goes to that group's shard") {
    reset_stats(cluster);
    CHECK(client.command({"KEYS", "order:seller42:*"}).elements.size() == 200);
    CHECK(cluster.shard(1).command_calls("keys") == 1);
    CHECK(cluster.shard(0).command_calls("keys") + cluster.shard(2).command_calls("keys") +
              cluster.shard(3).command_calls("keys") ==
          0);
  }
  SECTION("a pattern the namespaces cannot narrow goes everywhere") {
    reset_stats(cluster);
    CHECK(client.command({"KEYS", "*seller42*"}).elements.size() == 200);
    for (std::size_t s = 0; s < 4; ++s) CHECK(cluster.shard(s).command_calls("keys") == 1);
  }
}

TEST_CASE("moving one directory group on reload moves that group's placement only") {
  Cluster cluster(4, kNamespaces);
  auto client = cluster.client();
  auto explain_shard = [&](const std::string& key) {
    auto reply = as_map(client.command({"SANTRAL", "EXPLAIN", "GET", key}));
    REQUIRE(reply.count("shards") == 1);
    REQUIRE(reply["shards"].elements.size() == 1);
    return reply["shards"].elements[0].str;
  };
  std::vector<std::string> others;
  for (int i = 0; i < 100; ++i) others.push_back("order:seller" + std::to_string(500 + i) + ":1");
  others.push_back("customer:mike");
  others.push_back("session:77");
  std::map<std::string, std::string> before;
  for (const auto& key : others) before[key] = explain_shard(key);
  CHECK(explain_shard("order:seller42:1") == "shard1");

  // One line changes: seller42 -> shard3.
  std::string moved = kNamespaces;
  moved.replace(moved.find("seller42: shard1"), 16, "seller42: shard3");
  std::ofstream(cluster.santral().config_path())
      << "listen: 127.0.0.1:" << cluster.santral().port() << "\n"
      << SantralProcess::config_for(
             {&cluster.shard(0), &cluster.shard(1), &cluster.shard(2), &cluster.shard(3)}, moved);
  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  REQUIRE(reload.type == Reply::Type::Status);
  // A planned move of that one group, carried out once approved.
  CHECK(reload.str.find("planned a move of 1 unit") != std::string::npos);
  CHECK(explain_shard("order:seller42:1") == "shard1");
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_until(
      [&] {
        return client.command({"SANTRAL", "RESHARD", "STATUS"}).elements.at(1).str == "idle";
      },
      30000));

  CHECK(explain_shard("order:seller42:1") == "shard3");
  for (const auto& key : others) CHECK(explain_shard(key) == before[key]);
  write_through(client, "order:seller42:after");
  CHECK(holders(cluster, "order:seller42:after") == std::set<std::size_t>{3});
}

TEST_CASE("SANTRAL EXPLAIN says how each kind of command is routed, without running it") {
  Cluster cluster(4, kNamespaces);
  auto client = cluster.client();
  reset_stats(cluster);
  auto explain = [&](std::initializer_list<std::string_view> command) {
    std::vector<std::string> args = {"SANTRAL", "EXPLAIN"};
    args.insert(args.end(), command.begin(), command.end());
    auto reply = client.command(args);
    INFO(reply.str);
    REQUIRE(reply.type == Reply::Type::Array);
    return as_map(reply);
  };

  SECTION("single shard, with namespace, strategy, shard key and why") {
    auto e = explain({"SET", "order:seller42:9", "v"});
    CHECK(e["kind"].str == "SINGLE_SHARD");
    CHECK(names(e["shards"]) == std::vector<std::string>{"shard1"});
    REQUIRE(e["keys"].elements.size() == 1);
    auto key = as_map(e["keys"].elements[0]);
    CHECK(key["namespace"].str == "orders");
    CHECK(key["strategy"].str == "directory");
    CHECK(key["shard_key"].str == "seller42");
    CHECK(key["detail"].str.find("seller42") != std::string::npos);
    auto range = as_map(explain({"GET", "customer:mike"})["keys"].elements.at(0));
    CHECK(range["strategy"].str == "range");
    CHECK(range["detail"].str == "range [h, p)");
    auto slot = as_map(explain({"GET", "cart:foo:1"})["keys"].elements.at(0));
    CHECK(slot["detail"].str == "slot 12182");
    auto plain = as_map(explain({"GET", "plain-key"})["keys"].elements.at(0));
    CHECK(plain["namespace"].str == "(default)");
    CHECK(plain["shard"].str == "shard" + std::to_string(cluster.owner("plain-key")));
  }
  SECTION("split, crossslot, broadcast, any, local, transaction") {
    auto split = explain({"MGET", "customer:alice", "customer:zoe"});
    CHECK(split["kind"].str == "SHARD_SPLIT");
    CHECK(names(split["shards"]) == std::vector<std::string>{"shard0", "shard3"});
    auto cross = explain({"RENAME", "customer:alice", "customer:zoe"});
    CHECK(cross["kind"].str == "CROSSSLOT");
    auto keys = explain({"KEYS", "customer:q*"});
    CHECK(keys["kind"].str == "SHARD_MERGE");
    CHECK(names(keys["shards"]) == std::vector<std::string>{"shard2"});
    CHECK(explain({"DBSIZE"})["shards"].elements.size() == 4);
    CHECK(explain({"PING"})["kind"].str == "LOCAL");
    CHECK(explain({"SCRIPT", "FLUSH"})["kind"].str == "SHARD_MERGE");
    CHECK(explain({"SCRIPT", "EXISTS", "abc"})["kind"].str == "LOCAL");
    CHECK(explain({"MULTI"})["kind"].str == "TRANSACTION");
    CHECK(explain({"NOSUCH", "x"})["kind"].str == "UNKNOWN_COMMAND");
    CHECK(explain({"GET"})["kind"].str == "WRONG_ARITY");
  }
  // Nothing ran on any shard.
  for (std::size_t s = 0; s < 4; ++s) {
    CHECK(cluster.shard(s).command_calls("set") == 0);
    CHECK(cluster.shard(s).command_calls("mget") == 0);
    CHECK(cluster.shard(s).command_calls("keys") == 0);
  }
}

TEST_CASE("SANTRAL SHARDMAP prints every namespace and its table") {
  Cluster cluster(4, kNamespaces);
  auto text = cluster.client().command({"SANTRAL", "SHARDMAP"}).str;
  for (std::string expected : {"namespace sessions", "namespace carts", "slots 4096-8191 -> shard1",
                               "range [h, p) -> shard1", "group seller42 -> shard1",
                               "zone eu: shard0, shard1", "(default_zone)"})
    CHECK(text.find(expected) != std::string::npos);
}

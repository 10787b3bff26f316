// Commands that span shards: split into one sub-command per shard and merged, or broadcast
// to every shard and merged. Checked against what each shard itself holds and received.
#include <catch2/catch.hpp>

#include <set>

#include "tests/support/cluster.h"

using namespace santral::test;

namespace {

std::vector<std::string> keys_on_every_shard(Cluster& cluster, int per_shard) {
  std::vector<std::string> keys;
  for (std::size_t s = 0; s < cluster.size(); ++s)
    for (int i = 0; i < per_shard; ++i)
      keys.push_back(cluster.key_on(s, "k" + std::to_string(i) + "-"));
  return keys;
}

long long total_calls(Cluster& cluster, const std::string& command) {
  long long calls = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) calls += cluster.shard(s).command_calls(command);
  return calls;
}

}  // namespace

TEST_CASE("MGET, MSET, DEL, EXISTS, TOUCH, UNLINK: one sub-command per shard, merged") {
  Cluster cluster(4);
  auto client = cluster.client();
  auto keys = keys_on_every_shard(cluster, 3);  // 12 keys, 3 on each shard, shard order

  std::vector<std::string> mset = {"MSET"};
  for (const auto& key : keys) {
    mset.push_back(key);
    mset.push_back("v:" + key);
  }
  REQUIRE(client.command(mset).is_ok());
  for (const auto& key : keys) CHECK(cluster.shard(cluster.owner(key)).has_key(key));
  CHECK(total_calls(cluster, "mset") == 4);  // one per shard, not one per key

  // In an order that interleaves shards, with a missing key in the middle.
  std::vector<std::string> mget = {"MGET",   keys[5], keys[0], "missing-key",
                                   keys[11], keys[3], keys[7]};
  auto values = client.command(mget);
  REQUIRE(values.elements.size() == 6);
  CHECK(values.elements[0].str == "v:" + keys[5]);
  CHECK(values.elements[1].str == "v:" + keys[0]);
  CHECK(values.elements[2].is_nil());
  CHECK(values.elements[3].str == "v:" + keys[11]);
  CHECK(values.elements[4].str == "v:" + keys[3]);
  CHECK(values.elements[5].str == "v:" + keys[7]);
  long long mget_calls = total_calls(cluster, "mget");
  CHECK(mget_calls <= 4);  // at most one per shard

  CHECK(client.command({"EXISTS", keys[0], keys[4], keys[8], "nope", keys[0]}).integer == 4);
  CHECK(client.command({"TOUCH", keys[1], keys[5], "nope"}).integer == 2);
  CHECK(client.command({"DEL", keys[0], keys[4], "nope"}).integer == 2);
  CHECK(client.command({"UNLINK", keys[8], keys[9], keys[10]}).integer == 3);
  long long left = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) left += cluster.shard(s).dbsize();
  CHECK(left == 12 - 5);
}

TEST_CASE("MGET where a shard answers late still comes back in key order") {
  Cluster cluster(2);
  auto client = cluster.client();
  std::string slow = cluster.key_on(0, "slow");
  std::string fast = cluster.key_on(1, "fast");
  REQUIRE(client.command({"MSET", slow, "S", fast, "F"}).is_ok());
  // Keep shard 0 busy in a script run by a direct client, so shard 1 answers first.
  RawConnection busy(cluster.shard(0).port());
  const std::string spin = "local i = 0 while i < 30000000 do i = i + 1 end return 1";
  busy.send("*3\r\n$4\r\nEVAL\r\n$" + std::to_string(spin.size()) + "\r\n" + spin +
            "\r\n$1\r\n0\r\n");
  for (int i = 0; i < 20; ++i) {
    auto reply = client.command({"MGET", slow, fast, slow, fast});
    REQUIRE(reply.elements.size() == 4);
    CHECK(reply.elements[0].str == "S");
    CHECK(reply.elements[1].str == "F");
    CHECK(reply.elements[2].str == "S");
    CHECK(reply.elements[3].str == "F");
  }
  CHECK(busy.read_some(4, 30000) == ":1\r\n");
}

TEST_CASE("MSET answers an error naming the shard that failed; the others keep their writes") {
  Cluster cluster(3,
                  "timeouts:\n  connect_ms: 300\n  request_ms: 500\n  reconnect_min_ms: 50\n"
                  "  reconnect_max_ms: 200\n");
  auto client = cluster.client();
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  std::string c = cluster.key_on(2, "c");
  cluster.shard(1).kill();
  auto reply = client.command({"MSET", a, "1", b, "2", c, "3"});
  REQUIRE(reply.is_error());
  CHECK(reply.str.find("MSET failed on shard(s) 'shard1'") != std::string::npos);
  CHECK(reply.str.find("shard0") == std::string::npos);
  CHECK(cluster.shard(0).has_key(a));
  CHECK(cluster.shard(2).has_key(c));
}

TEST_CASE("other multi-key commands run when their keys share a shard, else CROSSSLOT") {
  Cluster cluster(3);
  auto client = cluster.client();
  REQUIRE(client.command({"SADD", "{s}1", "a", "b"}).integer == 2);
  REQUIRE(client.command({"SADD", "{s}2", "b", "c"}).integer == 2);
  CHECK(client.command({"SINTERSTORE", "{s}3", "{s}1", "{s}2"}).integer == 1);
  CHECK(client.command({"SMOVE", "{s}1", "{s}2", "a"}).integer == 1);
  CHECK(client.command({"MSETNX", "{m}x", "1", "{m}y", "2"}).integer == 1);
  CHECK(client.command({"COPY", "{m}x", "{m}z"}).integer == 1);
  CHECK(client.command({"PFADD", "{h}1", "a"}).integer == 1);
  CHECK(client.command({"PFADD", "{h}2", "b"}).integer == 1);
  CHECK(client.command({"PFCOUNT", "{h}1", "{h}2"}).integer == 2);
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"SUNIONSTORE", a, a, b},
                                             {"RENAME", a, b},
                                             {"MSETNX", a, "1", b, "2"},
                                             {"PFMERGE", a, b},
                                             {"BITOP", "AND", a, b},
                                             {"LMOVE", a, b, "LEFT", "LEFT"},
                                             {"ZUNIONSTORE", a, "2", a, b}}) {
    INFO(command[0]);
    auto reply = client.command(command);
    REQUIRE(reply.is_error());
    CHECK(reply.str.rfind("CROSSSLOT", 0) == 0);
  }
}

TEST_CASE("DBSIZE, KEYS, RANDOMKEY, FLUSHDB and INFO cover every shard") {
  Cluster cluster(4);
  auto client = cluster.client();
  for (int i = 0; i < 200; ++i) client.append({"SET", "key:" + std::to_string(i), "v"});
  for (int i = 0; i < 200; ++i) REQUIRE(client.get_reply().is_ok());
  CHECK(client.command({"DBSIZE"}).integer == 200);
  auto keys = client.command({"KEYS", "key:1*"});
  std::set<std::string> found;
  for (const auto& k : keys.elements) found.insert(k.str);
  CHECK(found.size() == 111);  // key:1, key:10..19, key:100..199
  CHECK(found.count("key:1") == 1);
  CHECK(found.count("key:199") == 1);
  auto random = client.command({"RANDOMKEY"});
  CHECK(random.str.rfind("key:", 0) == 0);

  auto info = client.command({"INFO", "keyspace"}).str;
  CHECK(info.find("db0:keys=200,") != std::string::npos);
  auto everything = client.command({"INFO"}).str;
  CHECK(everything.find("# Santral") != std::string::npos);
  CHECK(everything.find("santral_version:") != std::string::npos);
  // Every worker's counters, republished within a tick.
  CHECK(wait_until(
      [&] {
        auto santral = client.command({"INFO", "santral"}).str;
        auto at = santral.find("total_commands_processed:");
        return at != std::string::npos && std::stoll(santral.substr(at + 25)) >= 200;
      },
      5000));
  auto shards = client.command({"INFO", "shards"}).str;
  CHECK(shards.find("# Shards") != std::string::npos);
  CHECK(shards.find("shard_3:name=shard3") != std::string::npos);

  CHECK(client.command({"FLUSHDB", "ASYNC"}).is_ok());
  CHECK(wait_until([&] { return client.command({"DBSIZE"}).integer == 0; }, 5000));
  for (std::size_t s = 0; s < cluster.size(); ++s)
    CHECK(cluster.shard(s).command_calls("flushdb") == 1);
  CHECK(client.command({"RANDOMKEY"}).is_nil());
  auto time = client.command({"TIME"});
  CHECK(time.elements.size() == 2);
}

TEST_CASE(
    "SCAN walks every shard: 10,000 keys, each exactly once, MATCH, COUNT and TYPE honoured") {
  Cluster cluster(4);
  auto client = cluster.client();
  constexpr int kKeys = 10000;
  for (int i = 0; i < kKeys; ++i) client.append({"SET", "scan:" + std::to_string(i), "v"});
  for (int i = 0; i < 50; ++i) client.append({"SADD", "set:" + std::to_string(i), "m"});
  for (int i = 0; i < kKeys + 50; ++i) REQUIRE(!client.get_reply().is_error());

  auto scan_all = [&](std::vector<std::string> options) {
    std::multiset<std::string> seen;
    std::string cursor = "0";
    int calls = 0;
    do {
      std::vector<std::string> command = {"SCAN", cursor};
      command.insert(command.end(), options.begin(), options.end());
      auto reply = client.command(command);
      REQUIRE(reply.elements.size() == 2);
      cursor = reply.elements[0].str;
      for (const auto& key : reply.elements[1].elements) seen.insert(key.str);
      ++calls;
      REQUIRE(calls < 100000);
    } while (cursor != "0");
    return seen;
  };

  auto all = scan_all({"COUNT", "500"});
  CHECK(all.size() == kKeys + 50);
  std::set<std::string> unique(all.begin(), all.end());
  CHECK(unique.size() == all.size());  // none twice

  auto matched = scan_all({"MATCH", "scan:12*", "COUNT", "1000"});
  CHECK(matched.size() == 111);  // scan:12, scan:120..129, scan:1200..1299
  auto sets = scan_all({"TYPE", "set", "COUNT", "1000"});
  CHECK(sets.size() == 50);

  auto bad = client.command({"SCAN", "12345678901234567890123"});
  CHECK(bad.is_error());
  CHECK(bad.str == "ERR invalid cursor");
}

TEST_CASE("SCRIPT LOAD, EXISTS and FLUSH on every shard; EVALSHA survives a shard without it") {
  Cluster cluster(3);
  auto client = cluster.client();
  auto sha = client.command({"SCRIPT", "LOAD", "return redis.call('GET', KEYS[1])"}).str;
  REQUIRE(sha.size() == 40);
  for (std::size_t s = 0; s < cluster.size(); ++s)
    CHECK(cluster.shard(s).client().command({"SCRIPT", "EXISTS", sha}).elements.at(0).integer == 1);
  auto exists =
      client.command({"SCRIPT", "EXISTS", sha, "0000000000000000000000000000000000000000"});
  REQUIRE(exists.elements.size() == 2);
  CHECK(exists.elements[0].integer == 1);
  CHECK(exists.elements[1].integer == 0);
  // INFO counts scripts, not scripts times shards.
  CHECK(client.command({"INFO", "memory"}).str.find("number_of_cached_scripts:1\r\n") !=
        std::string::npos);

  std::string key = cluster.key_on(1, "sk");
  REQUIRE(client.command({"SET", key, "hello"}).is_ok());
  // The shard loses its scripts (a restart would do the same): Santral retries with the body.
  REQUIRE(cluster.shard(1).client().command({"SCRIPT", "FLUSH"}).is_ok());
  // Santral has seen it and loads it wherever an EVALSHA needs it: it exists, as for Redis.
  CHECK(client.command({"SCRIPT", "EXISTS", sha}).elements.at(0).integer == 1);
  // Santral loads the script on a connection before its first EVALSHA there.
  CHECK(client.command({"EVALSHA", sha, "1", key}).str == "hello");
  CHECK(cluster.shard(1).client().command({"SCRIPT", "EXISTS", sha}).elements.at(0).integer == 1);
  CHECK(cluster.shard(1).command_calls("eval") == 0);
  // Lost after that load: NOSCRIPT, and Santral retries once as EVAL with the body.
  REQUIRE(cluster.shard(1).client().command({"SCRIPT", "FLUSH"}).is_ok());
  CHECK(client.command({"EVALSHA", sha, "1", key}).str == "hello");
  CHECK(cluster.shard(1).command_calls("eval") == 1);

  // Keys on two shards are refused before anything runs.
  auto cross =
      client.command({"EVAL", "return 1", "2", cluster.key_on(0, "x"), cluster.key_on(1, "y")});
  CHECK(cross.str.rfind("CROSSSLOT", 0) == 0);
  // No keys: the first shard, every time.
  CHECK(client.command({"EVAL", "return 7", "0"}).integer == 7);
  CHECK(cluster.shard(0).command_calls("eval") == 1);

  CHECK(client.command({"SCRIPT", "FLUSH"}).is_ok());
  for (std::size_t s = 0; s < cluster.size(); ++s)
    CHECK(cluster.shard(s).client().command({"SCRIPT", "EXISTS", sha}).elements.at(0).integer == 0);
  // Santral forgot it too, on every worker: NOSCRIPT, as from Redis.
  CHECK(client.command({"SCRIPT", "EXISTS", sha}).elements.at(0).integer == 0);
  auto other = cluster.client();  // clients go to the workers in turn: the next one
  CHECK(other.command({"SCRIPT", "EXISTS", sha}).elements.at(0).integer == 0);
  CHECK(client.command({"EVALSHA", sha, "1", key}).str.rfind("NOSCRIPT", 0) == 0);
}

TEST_CASE("a broadcast every shard refuses alike answers that error as one Redis would") {
  Cluster cluster(3);
  auto client = cluster.client();
  // What one redis-server answers (an error: nothing is loaded anywhere).
  auto direct = cluster.shard(0).client().command({"FUNCTION", "LOAD", "return 1"});
  REQUIRE(direct.is_error());
  auto through = client.command({"FUNCTION", "LOAD", "return 1"});
  CHECK(through.str == direct.str);
  auto config = client.command({"CONFIG", "SET", "no-such-option", "1"});
  CHECK(config.str ==
        cluster.shard(1).client().command({"CONFIG", "SET", "no-such-option", "1"}).str);
  CHECK(config.str.find("santral") == std::string::npos);
}

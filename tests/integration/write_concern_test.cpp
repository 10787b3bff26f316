// write_concern: {replicas, timeout_ms}: a write is acknowledged only once that many replicas
// of its shard confirm it (one WAIT behind each batch of writes on a shard connection), and
// answered NOREPLICAS when too few do. Real primaries and replicas on loopback.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

struct ReplicatedShard {
  // No 5 s wait before the first sync to a new replica.
  RedisServer primary{{"--repl-diskless-sync-delay", "0"}};
  RedisServer replica{{"--replicaof", "127.0.0.1", std::to_string(primary.port())}};

  // Until the replication stream flows: after a (diskless) sync the primary says the replica
  // is online at once, but streams commands to it (and so counts it for WAIT) only after the
  // replica's first REPLCONF ACK, which it sends once a second. A write made before the sync
  // reaches the replica in the snapshot, so only the offsets tell.
  ReplicatedShard() {
    auto on_primary = primary.client();
    auto on_replica = replica.client();
    REQUIRE(wait_until(
        [&] {
          on_primary.command({"SET", "stream:probe", "1"});
          long long sent = offset(on_primary, "master_repl_offset");
          return sent > 0 && offset(on_replica, "slave_repl_offset") >= sent;
        },
        20000));
  }

  static long long offset(RedisClient& client, const std::string& name) {
    std::string info = client.command({"INFO", "replication"}).str;
    auto at = info.find(name + ":");
    return at == std::string::npos ? 0 : std::atoll(info.c_str() + at + name.size() + 1);
  }

  std::string yaml(const std::string& concern) const {
    return concern + "shards:\n  - name: s0\n    address: " + primary.address() +
           "\n    replicas: [" + replica.address() + "]\n";
  }
};

}  // namespace

TEST_CASE("write_concern: a write is acknowledged once a replica holds it") {
  ReplicatedShard shard;
  SantralProcess santral(shard.yaml("write_concern: {replicas: 1, timeout_ms: 2000}\n"));
  auto client = santral.client();
  auto replica = shard.replica.client();
  for (int i = 0; i < 50; ++i) {
    std::string key = "order:" + std::to_string(i);
    REQUIRE(client.command({"SET", key, "placed"}).is_ok());
    // Acknowledged means replicated: the replica has it the moment the client hears OK.
    REQUIRE(replica.command({"GET", key}).str == "placed");
  }
  // Reads are not confirmed: a GET adds no WAIT.
  long long waits = shard.primary.command_calls("wait");
  CHECK(client.command({"GET", "order:1"}).str == "placed");
  CHECK(shard.primary.command_calls("wait") == waits);
}

TEST_CASE("write_concern: one WAIT behind a pipelined batch of writes, replies in order") {
  ReplicatedShard shard;
  SantralProcess santral(
      shard.yaml("workers: 1\nwrite_concern: {replicas: 1, timeout_ms: 2000}\n"));
  auto client = santral.client();
  constexpr int kBatch = 200;
  for (int i = 0; i < kBatch; ++i) {
    client.append({"INCR", "likes"});
    client.append({"GET", "likes"});
  }
  for (int i = 1; i <= kBatch; ++i) {
    REQUIRE(client.get_reply().integer == i);
    REQUIRE(client.get_reply().str == std::to_string(i));
  }
  long long waits = shard.primary.command_calls("wait");
  INFO(waits << " WAITs for " << kBatch << " INCRs");
  CHECK(waits >= 1);
  CHECK(waits < kBatch / 4);
  CHECK(shard.replica.client().command({"GET", "likes"}).str == std::to_string(kBatch));
}

TEST_CASE("write_concern: too few replicas confirm: NOREPLICAS, and the write is on the primary") {
  ReplicatedShard shard;
  SantralProcess santral(shard.yaml("write_concern: {replicas: 1, timeout_ms: 200}\n"));
  auto client = santral.client();
  REQUIRE(client.command({"SET", "before", "1"}).is_ok());
  shard.replica.pause();  // connected, but confirms nothing
  auto refused = client.command({"SET", "during", "1"});
  shard.replica.resume();
  INFO(refused.str);
  REQUIRE(refused.is_error());
  CHECK(refused.str.starts_with("NOREPLICAS Not enough good replicas to write"));
  CHECK(refused.str.find("only 0 of the 1 replicas") != std::string::npos);
  CHECK(shard.primary.client().command({"GET", "during"}).str == "1");
  // A script that writes is confirmed too; its error replies are passed on as they are.
  shard.replica.pause();
  auto script = client.command({"EVAL", "return redis.call('INCR', KEYS[1])", "1", "n"});
  auto wrong = client.command({"LPUSH", "before", "x"});
  shard.replica.resume();
  CHECK(script.str.starts_with("NOREPLICAS"));
  CHECK(wrong.str.starts_with("WRONGTYPE"));
  // Once the replica is back, writes are acknowledged again.
  REQUIRE(wait_until([&] { return client.command({"SET", "after", "1"}).is_ok(); }, 10000));
}

TEST_CASE("write_concern: a transaction is confirmed at EXEC, not inside it") {
  ReplicatedShard shard;
  SantralProcess santral(shard.yaml("write_concern: {replicas: 1, timeout_ms: 200}\n"));
  auto client = santral.client();
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"SET", "tx", "1"}).str == "QUEUED");
  CHECK(client.command({"INCR", "tx"}).str == "QUEUED");
  auto exec = client.command({"EXEC"});
  INFO(exec.str);
  REQUIRE(exec.elements.size() == 2);
  CHECK(exec.elements[1].integer == 2);
  shard.replica.pause();
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"INCR", "tx"}).str == "QUEUED");
  auto refused = client.command({"EXEC"});
  shard.replica.resume();
  CHECK(refused.str.starts_with("NOREPLICAS"));
  CHECK(shard.primary.client().command({"GET", "tx"}).str == "3");
}

TEST_CASE("write_concern: a bad setting names its key and the old config keeps serving") {
  ReplicatedShard shard;
  SantralProcess santral(shard.yaml(""));
  auto client = santral.client();
  REQUIRE(client.command({"SET", "k", "v"}).is_ok());
  std::string config;
  {
    std::ifstream in(santral.config_path());
    config.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ofstream(santral.config_path()) << config << "write_concern: {replicas: 1, timeout_ms: 0}\n";
  auto bad = client.command({"SANTRAL", "RELOAD"});
  INFO(bad.str);
  REQUIRE(bad.is_error());
  CHECK(bad.str.find("write_concern.timeout_ms") != std::string::npos);
  CHECK(bad.str.find(santral.config_path().filename().string()) != std::string::npos);
  CHECK(client.command({"GET", "k"}).str == "v");
}

TEST_CASE("write_concern per namespace: its single-key writes are confirmed, others are not") {
  ReplicatedShard shard;
  SantralProcess santral(
      shard.yaml("namespaces:\n"
                 "  - name: orders\n"
                 "    match: \"order:{id}\"\n"
                 "    strategy: hashed\n"
                 "    write_concern: {replicas: 1, timeout_ms: 200}\n"
                 "  - name: cache\n"
                 "    match: \"cache:{id}\"\n"
                 "    strategy: hashed\n"));
  auto client = santral.client();
  // Healthy: an order's write is confirmed by one WAIT; a cache write adds none.
  long long waits = shard.primary.command_calls("wait");
  REQUIRE(client.command({"SET", "order:1", "placed"}).is_ok());
  CHECK(shard.primary.command_calls("wait") == waits + 1);
  REQUIRE(client.command({"SET", "cache:1", "x"}).is_ok());
  REQUIRE(client.command({"SET", "plain", "x"}).is_ok());
  CHECK(shard.primary.command_calls("wait") == waits + 1);

  shard.replica.pause();  // connected, but confirms nothing
  auto order = client.command({"SET", "order:2", "placed"});
  auto cache = client.command({"SET", "cache:2", "x"});
  auto plain = client.command({"INCR", "counter"});
  shard.replica.resume();
  INFO(order.str);
  CHECK(order.str.starts_with("NOREPLICAS"));
  CHECK(order.str.find("only 0 of the 1 replicas") != std::string::npos);
  CHECK(cache.is_ok());
  CHECK(plain.integer == 1);
  CHECK(client.command({"SANTRAL", "SHARDMAP"}).str.find("write_concern: replicas 1") !=
        std::string::npos);
}

TEST_CASE("write_concern per namespace: a namespace may ask for none under a global one") {
  ReplicatedShard shard;
  SantralProcess santral(
      shard.yaml("write_concern: {replicas: 1, timeout_ms: 200}\n"
                 "namespaces:\n"
                 "  - name: cache\n"
                 "    match: \"cache:{id}\"\n"
                 "    strategy: hashed\n"
                 "    write_concern: {replicas: 0}\n"));
  auto client = santral.client();
  shard.replica.pause();
  auto cache = client.command({"SET", "cache:1", "x"});
  auto other = client.command({"SET", "order:1", "placed"});
  shard.replica.resume();
  CHECK(cache.is_ok());
  INFO(other.str);
  CHECK(other.str.starts_with("NOREPLICAS"));
}

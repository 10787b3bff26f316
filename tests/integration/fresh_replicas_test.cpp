// Replicas serve reads only while they are in sync (issue 28, "fresh replicas only"): a
// replica still syncing gets none, nor one further behind its primary than
// read_from.max_lag_ms. Real redis-server primaries and replicas, the replication link of one
// through the fault proxy, Santral in front.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/fault_proxy.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

std::string shard_yaml(const RedisServer& primary, int replica_port) {
  return "shards:\n  - name: s0\n    address: " + primary.address() +
         "\n    replicas: [127.0.0.1:" + std::to_string(replica_port) + "]\n";
}

// The replica's line of SANTRAL SHARDMAP ("... reads:yes lag_ms:3").
std::string replica_line(const SantralProcess& santral) {
  std::string map = santral.client().command({"SANTRAL", "SHARDMAP"}).str;
  auto at = map.find("role:replica");
  if (at == std::string::npos) return {};
  auto start = map.rfind('\n', at) + 1;
  return map.substr(start, map.find('\n', at) - start);
}

bool replica_in_sync(const RedisServer& replica) {
  std::string info = replica.client().command({"INFO", "replication"}).str;
  return info.find("master_link_status:up") != std::string::npos;
}

}  // namespace

TEST_CASE("a replica still syncing gets no reads until it is in sync") {
  // The primary waits 5 s before it sends a new replica its data: until then the replica
  // answers, empty.
  RedisServer primary({"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "5"});
  auto writer = primary.client();
  for (int i = 0; i < 100; ++i)
    REQUIRE(writer.command({"SET", "post:" + std::to_string(i), "text"}).is_ok());
  RedisServer replica({"--replicaof", "127.0.0.1", std::to_string(primary.port())});
  SantralProcess strict("read_from: replica\n" + shard_yaml(primary, replica.port()));
  SantralProcess prefer("read_from: prefer-replica\n" + shard_yaml(primary, replica.port()));
  REQUIRE_FALSE(replica_in_sync(replica));
  // Once Santral has looked at it (a readiness check, not a wait for the sync)...
  REQUIRE(
      wait_until([&] { return replica_line(strict).find("reads:no") != std::string::npos; }, 5000));
  REQUIRE(
      wait_until([&] { return replica_line(prefer).find("reads:no") != std::string::npos; }, 5000));
  REQUIRE_FALSE(replica_in_sync(replica));
  // ... a read never meets its empty data set: the primary answers, or an error says why.
  CHECK(prefer.client().command({"GET", "post:7"}).str == "text");
  auto refused = strict.client().command({"GET", "post:7"});
  INFO(refused.str);
  CHECK(refused.is_error());
  CHECK(refused.str.find("no replica is in sync") != std::string::npos);
  CHECK(refused.str.find(replica.address() + ": it ") != std::string::npos);  // and why
  CHECK(replica.command_calls("get") == 0);
  // In sync, it serves them.
  REQUIRE(wait_until([&] { return replica_in_sync(replica); }, 20000));
  CHECK(wait_until([&] { return strict.client().command({"GET", "post:7"}).str == "text"; }, 5000));
  CHECK(replica_line(strict).find("reads:yes") != std::string::npos);
  CHECK(replica.command_calls("get") > 0);
}

TEST_CASE("a replica further behind than read_from.max_lag_ms gets no reads") {
  RedisServer primary({"--repl-diskless-sync-delay", "0"});
  FaultProxy link({{"replication", primary.port()}});
  RedisServer replica({"--replicaof", "127.0.0.1", std::to_string(link.port("replication"))});
  REQUIRE(wait_until([&] { return replica_in_sync(replica); }, 20000));
  SantralProcess santral("read_from: {mode: prefer-replica, max_lag_ms: 300}\n" +
                         shard_yaml(primary, replica.port()));
  auto client = santral.client();
  REQUIRE(client.command({"SET", "likes", "1"}).is_ok());
  REQUIRE(wait_until([&] { return replica.client().command({"GET", "likes"}).str == "1"; }, 5000));
  REQUIRE(wait_until([&] { return replica_line(santral).find("reads:yes") != std::string::npos; },
                     5000));
  long long replica_gets = replica.command_calls("get");
  CHECK(client.command({"GET", "likes"}).str == "1");
  CHECK(replica.command_calls("get") == replica_gets + 1);  // from the replica, in sync

  // The replication stream stops (the link holds its bytes): the replica's link stays up, and
  // it would answer the old value for as long as the stall lasts.
  link.fault("replication", "stall");
  REQUIRE(client.command({"SET", "likes", "2"}).is_ok());
  CHECK(wait_until([&] { return client.command({"GET", "likes"}).str == "2"; }, 5000));
  std::string behind = replica_line(santral);
  INFO(behind);
  CHECK(behind.find("reads:no") != std::string::npos);
  CHECK(replica.client().command({"GET", "likes"}).str == "1");  // still behind

  // Caught up, it serves reads again.
  link.fault("replication", "pass");
  REQUIRE(wait_until([&] { return replica.client().command({"GET", "likes"}).str == "2"; }, 10000));
  REQUIRE(wait_until([&] { return replica_line(santral).find("reads:yes") != std::string::npos; },
                     5000));
  replica_gets = replica.command_calls("get");
  CHECK(client.command({"GET", "likes"}).str == "2");
  CHECK(replica.command_calls("get") == replica_gets + 1);
}

TEST_CASE("with its primary gone, a replica serves reads while read_from.max_lag_ms allows") {
  RedisServer primary({"--repl-diskless-sync-delay", "0"});
  RedisServer replica({"--replicaof", "127.0.0.1", std::to_string(primary.port())});
  REQUIRE(wait_until([&] { return replica_in_sync(replica); }, 20000));
  REQUIRE(primary.client().command({"SET", "likes", "5"}).is_ok());
  REQUIRE(wait_until([&] { return replica.client().command({"GET", "likes"}).str == "5"; }, 5000));
  SantralProcess unbounded("read_from: prefer-replica\n" + shard_yaml(primary, replica.port()));
  SantralProcess bounded("read_from: {mode: prefer-replica, max_lag_ms: 1000}\n" +
                         shard_yaml(primary, replica.port()));
  REQUIRE(wait_until([&] { return replica_line(bounded).find("reads:yes") != std::string::npos; },
                     5000));
  primary.kill();
  // Without a bound, reads go on as long as the replica answers (as before this setting).
  REQUIRE(wait_until(
      [&] {
        return replica_line(unbounded).find("state:up") != std::string::npos &&
               replica.client()
                       .command({"INFO", "replication"})
                       .str.find("master_link_status:down") != std::string::npos;
      },
      10000));
  CHECK(unbounded.client().command({"GET", "likes"}).str == "5");
  // With one, they stop once the link is down for longer than it (INFO counts whole seconds).
  CHECK(wait_until([&] { return replica_line(bounded).find("reads:no") != std::string::npos; },
                   10000));
  auto refused = bounded.client().command({"GET", "likes"});
  INFO(refused.str);
  CHECK(refused.is_error());
  CHECK(unbounded.client().command({"GET", "likes"}).str == "5");
}

// Failovers that tell the truth (issue 43): when Santral follows Sentinel to a new primary, it
// checks that the new primary descends from the old one (INFO replication: its replid2 and
// second_repl_offset against the old primary's replid and offset as Santral last read them).
// Real processes: a primary with one replica, three sentinels (quorum 2), Santral in front;
// the primary is killed and Sentinel promotes the replica, synced or not.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/sentinel_process.h"

using namespace santral::test;

namespace {

// Keys the config places on shard `index` (placement is by name, whatever the addresses).
std::vector<std::string> keys_on(const std::string& config_yaml, std::size_t index, int count,
                                 const std::string& prefix) {
  santral::placement::ShardMap map(santral::config::parse_config(config_yaml, "keys.yaml"));
  std::vector<std::string> out;
  for (int n = 0; out.size() < static_cast<std::size_t>(count); ++n) {
    std::string key = prefix + std::to_string(n);
    if (map.shard_for_key(key) == index) out.push_back(key);
  }
  return out;
}

std::string shardmap(const SantralProcess& santral) {
  return santral.client().command({"SANTRAL", "SHARDMAP"}).str;
}

std::string info_santral(const SantralProcess& santral) {
  return santral.client().command({"INFO", "santral"}).str;
}

// A number after `field` in `text` (INFO's "name=value" or "name:value"); -2 when absent.
long long number_after(const std::string& text, const std::string& field) {
  auto at = text.find(field);
  if (at == std::string::npos) return -2;
  return std::stoll(text.substr(at + field.size()));
}

long long repl_offset(const RedisServer& server) {
  return number_after(server.client().command({"INFO", "replication"}).str, "master_repl_offset:");
}

bool linked(const RedisServer& replica) {
  auto info = replica.client().command({"INFO", "replication"}).str;
  return info.find("master_link_status:up") != std::string::npos;
}

// One field of the first SENTINEL REPLICAS entry; "" when there is none.
std::string replica_field(const SentinelProcess& sentinel, const std::string& name) {
  auto replicas = sentinel.client().command({"SENTINEL", "REPLICAS", "s0"});
  if (replicas.elements.size() != 1) return "";
  const auto& fields = replicas.elements[0].elements;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2)
    if (fields[i].str == name) return fields[i + 1].str;
  return "";
}

// Shard s0: a primary and one replica, which three sentinels (quorum 2) know from the start;
// shard s1 at a fixed address. With `synced` false the replica never gets the primary's data:
// the primary holds its first full sync back for a minute (diskless, waiting for more
// replicas), longer than the test, so the replica is empty and linked to nothing when
// Sentinel promotes it, as one that restarted without its data or joined just before the
// primary died.
struct FailoverShard {
  explicit FailoverShard(bool synced)
      : primary(synced ? std::vector<std::string>{}
                       : std::vector<std::string>{"--repl-diskless-sync-delay", "60"}),
        replica({"--replicaof", "127.0.0.1", std::to_string(primary.port())}) {
    if (synced) REQUIRE(wait_until([&] { return linked(replica); }, 10000));
    std::string knows =
        "sentinel known-replica s0 127.0.0.1 " + std::to_string(replica.port()) + "\n";
    for (int i = 0; i < 3; ++i)
      sentinels.push_back(std::make_unique<SentinelProcess>("s0", primary.port(), 2, knows));
    // The sentinels know each other (their quorum) and have looked at the replica: linked, or
    // as a replica that never was (master-link-down-time -1000, which Sentinel still promotes).
    REQUIRE(wait_until(
        [&] {
          auto peers = sentinels[0]->client().command({"SENTINEL", "SENTINELS", "s0"});
          return peers.elements.size() == 2 &&
                 replica_field(*sentinels[0], "role-reported") == "slave" &&
                 replica_field(*sentinels[0], "master-link-status") == (synced ? "ok" : "err");
        },
        20000));
  }

  std::string config(const std::string& extra = "") const {
    std::string addresses;
    for (const auto& s : sentinels) addresses += (addresses.empty() ? "" : ", ") + s->address();
    return "sentinel: {addresses: [" + addresses +
           "]}\nshards:\n  - {name: s0, sentinel_master: s0}\n  - {name: s1, address: " +
           other.address() + "}\n" + extra;
  }

  // Writes `keys` through Santral, then waits until Santral has read the primary's replication
  // after them (what the new primary will be judged against).
  void write_and_wait_for_reading(const SantralProcess& santral,
                                  const std::vector<std::string>& keys) {
    auto client = santral.client();
    long long before = repl_offset(primary);
    for (const auto& key : keys) REQUIRE(client.command({"SET", key, "1"}).is_ok());
    REQUIRE(primary.has_key(keys.back()));
    REQUIRE(repl_offset(primary) > before);
    bool read = wait_until(
        [&] { return number_after(info_santral(santral), ",read_offset=") > before; }, 10000);
    INFO(info_santral(santral));
    REQUIRE(read);
  }

  // Kills the primary and waits until Santral has followed Sentinel to the replica.
  void fail_over(const SantralProcess& santral) {
    primary.kill();
    bool followed = wait_until(
        [&] {
          return shardmap(santral).find("shard:s0 role:primary address:" + replica.address()) !=
                 std::string::npos;
        },
        30000);
    INFO(santral.log());
    REQUIRE(followed);
  }

  RedisServer primary;
  RedisServer replica;
  RedisServer other;
  std::vector<std::unique_ptr<SentinelProcess>> sentinels;
};

}  // namespace

TEST_CASE(
    "failover lineage: a replica that never synced is promoted; writes to its shard are refused "
    "until SANTRAL FAILOVER ACCEPT, reads are served") {
  FailoverShard shard(/*synced=*/false);
  int admin_port = free_loopback_port();
  const std::string config =
      shard.config("failover: {on_lost_writes: refuse}\nadmin: {listen: 127.0.0.1:" +
                   std::to_string(admin_port) + "}\n");
  SantralProcess santral(config);
  auto before = keys_on(config, 0, 10, "acknowledged:");
  shard.write_and_wait_for_reading(santral, before);
  CHECK_FALSE(shard.replica.has_key(before.front()));  // it never synced
  shard.fail_over(santral);

  auto client = santral.client();
  const std::string from = shard.primary.address(), to = shard.replica.address();
  // A write to the shard: refused, naming the shard, what happened and what to do.
  auto after = keys_on(config, 0, 1, "after:");
  auto refused = client.command({"SET", after[0], "x"});
  INFO(refused.str << "\n" << santral.log());
  REQUIRE(refused.is_error());
  CHECK(refused.str.find("shard 's0' refuses writes: Sentinel promoted " + to + " in place of " +
                         from + ", and it never synced with " + from) != std::string::npos);
  CHECK(refused.str.find("reads are still served") != std::string::npos);
  CHECK(refused.str.find("SANTRAL FAILOVER ACCEPT s0 lets writes go") != std::string::npos);
  CHECK_FALSE(shard.replica.has_key(after[0]));  // it was not sent
  // A transaction that writes there fails to queue, and EXEC says so.
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"INCR", after[0]}).str.find("refuses writes") != std::string::npos);
  CHECK(client.command({"EXEC"}).str.find("EXECABORT") != std::string::npos);

  // Reads are served: the acknowledged write is gone, and Santral says so instead of failing.
  auto read = client.command({"GET", before.front()});
  CHECK_FALSE(read.is_error());
  CHECK(read.type == Reply::Type::Nil);
  // The other shard takes writes.
  CHECK(client.command({"SET", keys_on(config, 1, 1, "other:")[0], "y"}).is_ok());

  // Reported at once: log, INFO, SANTRAL SHARDMAP, GET /shards (the dashboard's source).
  CHECK(santral.log().find("shard 's0': Sentinel promoted " + to + " in place of " + from) !=
        std::string::npos);
  auto info = info_santral(santral);
  INFO(info);
  CHECK(info.find("shard0_lost_writes:writes=refused,lineage=never_synced,unix_time=") !=
        std::string::npos);
  CHECK(info.find(",from=" + from + ",to=" + to + ",read_offset=") != std::string::npos);
  CHECK(info.find("shard1_lost_writes") == std::string::npos);
  auto map = shardmap(santral);
  INFO(map);
  CHECK(map.find("shard:s0 from:" + from + " to:" + to +
                 " lineage:never_synced writes:refused why:it never synced with " + from) !=
        std::string::npos);
  auto shards = nlohmann::json::parse(http_request(admin_port, "GET", "/shards").body);
  CHECK(shards["shards"][0]["lost_writes"]["writes"] == "refused");
  CHECK(shards["shards"][0]["lost_writes"]["lineage"] == "never_synced");
  CHECK_FALSE(shards["shards"][1].contains("lost_writes"));

  // What SANTRAL FAILOVER accepts, and how it says no.
  CHECK(client.command({"SANTRAL", "FAILOVER", "s0"}).str.find("use SANTRAL FAILOVER ACCEPT") !=
        std::string::npos);
  auto nothing = client.command({"SANTRAL", "FAILOVER", "ACCEPT", "s1"});
  CHECK(nothing.is_error());
  CHECK(nothing.str.find("nothing to accept for shard 's1'") != std::string::npos);

  // The operator accepts: writes go, to the new primary.
  auto accepted = client.command({"SANTRAL", "FAILOVER", "ACCEPT", "s0"});
  INFO(accepted.str);
  REQUIRE(accepted.type == Reply::Type::Status);
  CHECK(accepted.str.find("OK shard 's0' takes writes again") == 0);
  auto set = client.command({"SET", after[0], "x"});
  INFO(set.str);
  CHECK(set.is_ok());
  CHECK(shard.replica.has_key(after[0]));
  CHECK(info_santral(santral).find("shard0_lost_writes:writes=accepted,lineage=never_synced") !=
        std::string::npos);
  CHECK(client.command({"SANTRAL", "FAILOVER", "ACCEPT", "s0"}).type == Reply::Type::Status);
}

TEST_CASE(
    "failover lineage: with on_lost_writes: accept a promotion that lost writes is reported and "
    "writes go on") {
  FailoverShard shard(/*synced=*/false);
  // No write_concern: accept is the default.
  const std::string config = shard.config();
  SantralProcess santral(config);
  auto before = keys_on(config, 0, 5, "acknowledged:");
  shard.write_and_wait_for_reading(santral, before);
  shard.fail_over(santral);

  auto after = keys_on(config, 0, 1, "after:");
  auto set = santral.client().command({"SET", after[0], "x"});
  INFO(set.str << "\n" << santral.log());
  CHECK(set.is_ok());
  CHECK(shard.replica.has_key(after[0]));
  auto info = info_santral(santral);
  INFO(info);
  CHECK(info.find("shard0_lost_writes:writes=served,lineage=never_synced") != std::string::npos);
  CHECK(shardmap(santral).find("lineage:never_synced writes:served") != std::string::npos);
  CHECK(santral.log().find("Writes to 's0' go on (failover.on_lost_writes: accept)") !=
        std::string::npos);
}

TEST_CASE(
    "failover lineage: a promotion of a replica in sync is followed without a report, and "
    "writes go on") {
  FailoverShard shard(/*synced=*/true);
  // Refuse: a report would stop the writes below.
  const std::string config = shard.config("failover: {on_lost_writes: refuse}\n");
  SantralProcess santral(config);
  auto before = keys_on(config, 0, 10, "acknowledged:");
  shard.write_and_wait_for_reading(santral, before);
  REQUIRE(wait_until([&] { return shard.replica.has_key(before.back()); }, 5000));
  shard.fail_over(santral);

  auto client = santral.client();
  auto after = keys_on(config, 0, 5, "after:");
  for (const auto& key : after) {
    auto set = client.command({"SET", key, "2"});
    INFO(key << ": " << set.str << "\n" << santral.log());
    REQUIRE(set.is_ok());
  }
  CHECK(shard.replica.has_key(after.back()));
  for (const auto& key : before) CHECK(client.command({"GET", key}).str == "1");
  CHECK(info_santral(santral).find("_lost_writes") == std::string::npos);
  CHECK(shardmap(santral).find("lost_writes") == std::string::npos);
  CHECK(santral.log().find("shard 's0': the new primary " + shard.replica.address() +
                           " descends from " + shard.primary.address()) != std::string::npos);
}

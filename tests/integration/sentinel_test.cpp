// Shards that outlive their primary (issue 28): a shard naming a `sentinel_master` serves from
// the primary Redis Sentinel elects. Real processes: a primary with a replica, three sentinels
// (quorum 2), Santral in front; the primary is killed and Sentinel promotes the replica.
#include <catch2/catch.hpp>

#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/certificates.h"
#include "tests/support/etcd_cluster.h"
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

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string shardmap(const SantralProcess& santral) {
  return santral.client().command({"SANTRAL", "SHARDMAP"}).str;
}

bool in_sync(const RedisServer& replica) {
  auto info = replica.client().command({"INFO", "replication"}).str;
  return info.find("master_link_status:up") != std::string::npos;
}

// A primary with a replica in sync, three sentinels (quorum 2) that know both, and a second
// shard at a fixed address.
struct ElectedShard {
  RedisServer primary;
  RedisServer replica{{"--replicaof", "127.0.0.1", std::to_string(primary.port())}};
  RedisServer other;
  // The sentinels start once the replica is in sync: a sentinel looks at a replica's link
  // every 10 s, and Santral reads only replicas it calls linked.
  bool replica_synced = wait_until([this] { return in_sync(replica); }, 10000);
  SentinelProcess s1{"s0", primary.port(), 2}, s2{"s0", primary.port(), 2},
      s3{"s0", primary.port(), 2};

  ElectedShard() {
    REQUIRE(replica_synced);
    // The sentinels know each other (quorum) and the replica, linked (what they promote).
    REQUIRE(wait_until(
        [&] {
          auto peers = s1.client().command({"SENTINEL", "SENTINELS", "s0"});
          auto replicas = s1.client().command({"SENTINEL", "REPLICAS", "s0"});
          if (peers.elements.size() != 2 || replicas.elements.size() != 1) return false;
          const auto& fields = replicas.elements[0].elements;
          for (std::size_t i = 0; i + 1 < fields.size(); i += 2)
            if (fields[i].str == "master-link-status") return fields[i + 1].str == "ok";
          return false;
        },
        20000));
  }
  std::string config() const {
    return "sentinel: {addresses: [" + s1.address() + ", " + s2.address() + ", " + s3.address() +
           "]}\nshards:\n  - {name: s0, sentinel_master: s0}\n  - {name: s1, address: " +
           other.address() + "}\n";
  }
  // Until SANTRAL SHARDMAP names `address` as s0's primary.
  static bool primary_is(const SantralProcess& santral, const std::string& address) {
    return shardmap(santral).find("shard:s0 role:primary address:" + address) != std::string::npos;
  }
};

}  // namespace

TEST_CASE(
    "sentinel: a shard serves from the primary Sentinel elects, before and after a failover") {
  ElectedShard cluster;
  auto &primary = cluster.primary, &replica = cluster.replica;
  const std::string config = cluster.config();
  int admin_port = free_loopback_port();
  SantralProcess santral(config + "admin: {listen: 127.0.0.1:" + std::to_string(admin_port) +
                         ", token: t0k3n}\n");
  auto map = shardmap(santral);
  INFO(map);
  CHECK(map.find("shard:s0 role:primary address:" + primary.address()) != std::string::npos);
  CHECK(map.find("sentinel_master:s0") != std::string::npos);
  CHECK(map.find("shard:s0 role:replica address:" + replica.address()) != std::string::npos);

  auto client = santral.client();
  auto before = keys_on(config, 0, 20, "before:");
  for (const auto& key : before) REQUIRE(client.command({"SET", key, "1"}).is_ok());
  CHECK(primary.has_key(before.front()));
  REQUIRE(wait_until([&] { return replica.has_key(before.back()); }, 5000));

  primary.kill();
  // Sentinel judges it down after 1 s, agrees, elects, promotes the replica; Santral hears
  // +switch-master (or asks within 250 ms) and confirms the new primary with ROLE.
  bool followed =
      wait_until([&] { return ElectedShard::primary_is(santral, replica.address()); }, 30000);
  INFO(santral.log());
  REQUIRE(followed);
  // Subscribed on every sentinel; the events of this failover were heard.
  CHECK(occurrences(santral.log(), "subscribed to +switch-master") == 3);
  CHECK(santral.log().find("announced +sdown master s0 127.0.0.1 " +
                           std::to_string(primary.port())) != std::string::npos);
  REQUIRE(wait_until(
      [&] {
        return santral.log().find("announced +switch-master s0 127.0.0.1 " +
                                  std::to_string(primary.port()) + " 127.0.0.1 " +
                                  std::to_string(replica.port())) != std::string::npos;
      },
      5000));
  map = shardmap(santral);
  CHECK(map.find("last_failover:") != std::string::npos);
  CHECK(map.find("shard:s0 from:" + primary.address() + " to:" + replica.address()) !=
        std::string::npos);
  auto shards = nlohmann::json::parse(http_request(admin_port, "GET", "/shards", "t0k3n").body);
  CHECK(shards["shards"][0]["address"] == replica.address());
  CHECK(shards["shards"][0]["sentinel_master"] == "s0");
  // The dashboard's line: the last failover Santral followed for this shard.
  CHECK(shards["shards"][0]["last_failover"]["from"] == primary.address());
  CHECK(shards["shards"][0]["last_failover"]["to"] == replica.address());
  CHECK(shards["shards"][0]["last_failover"]["unix_time"].get<std::int64_t>() > 1'700'000'000);
  CHECK_FALSE(shards["shards"][1].contains("last_failover"));
  // INFO santral: the same, a line per server and one for the failover.
  auto info = client.command({"INFO", "santral"}).str;
  INFO(info);
  CHECK(info.find("shard0:name=s0,address=" + replica.address() +
                  ",role=primary,weight=1,state=up,sentinel_master=s0") != std::string::npos);
  CHECK(info.find("shard0_last_failover:unix_time=") != std::string::npos);
  CHECK(info.find(",from=" + primary.address() + ",to=" + replica.address()) != std::string::npos);
  CHECK(info.find("shard1_last_failover") == std::string::npos);

  // Writes go to the new primary, and what was acknowledged before is there.
  auto after = keys_on(config, 0, 20, "after:");
  for (const auto& key : after) {
    auto set = client.command({"SET", key, "2"});
    INFO(key << ": " << set.str);
    REQUIRE(set.is_ok());
    CHECK(replica.has_key(key));
  }
  for (const auto& key : before) CHECK(client.command({"GET", key}).str == "1");
}

TEST_CASE(
    "sentinel: with failover.wait_ms a request for a shard whose primary is down waits for "
    "Sentinel's new one") {
  ElectedShard cluster;
  auto &primary = cluster.primary, &replica = cluster.replica;
  const std::string config = cluster.config() + "failover: {wait_ms: 20000}\n";
  SantralProcess santral(config);
  REQUIRE(ElectedShard::primary_is(santral, primary.address()));
  auto keys = keys_on(config, 0, 3, "wait:");
  auto client = santral.client();
  REQUIRE(client.command({"SET", keys[0], "before"}).is_ok());
  REQUIRE(wait_until([&] { return replica.has_key(keys[0]); }, 5000));

  primary.kill();
  // Santral has seen it go: the primary's line says down.
  REQUIRE(wait_until(
      [&] {
        return shardmap(santral).find("shard:s0 role:primary address:" + primary.address() +
                                      " weight:1 state:down") != std::string::npos;
      },
      10000));
  // Without failover.wait_ms this fails at once ("is unavailable"); with it, it waits until
  // Sentinel has promoted the replica and runs there.
  auto set = client.command({"SET", keys[1], "during"});
  INFO(set.str << "\n" << santral.log());
  REQUIRE(set.is_ok());
  CHECK(replica.has_key(keys[1]));
  CHECK(ElectedShard::primary_is(santral, replica.address()));
  CHECK(client.command({"GET", keys[0]}).str == "before");

  // No primary left to elect: a request waits failover.wait_ms (400 after a reload), then
  // fails with an error that says the command was not sent.
  std::stringstream text;
  text << std::ifstream(santral.config_path()).rdbuf();
  std::string edited = text.str();
  edited.replace(edited.find("wait_ms: 20000"), 14, "wait_ms: 400");
  std::ofstream(santral.config_path()) << edited;
  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  REQUIRE(reload.type == Reply::Type::Status);
  replica.kill();
  REQUIRE(wait_until(
      [&] {
        return shardmap(santral).find("address:" + replica.address() + " weight:1 state:down") !=
               std::string::npos;
      },
      10000));
  auto refused = client.command({"SET", keys[2], "nowhere"});
  INFO(refused.str);
  CHECK(refused.is_error());
  CHECK(refused.str.find("failover.wait_ms") != std::string::npos);
  CHECK(refused.str.find("was not sent") != std::string::npos);
  // The other shard never waited.
  auto elsewhere = keys_on(config, 1, 1, "other:");
  CHECK(client.command({"SET", elsewhere[0], "x"}).is_ok());
}

TEST_CASE("sentinel: a request in flight to a primary Sentinel demoted never gets its reply") {
  // A stopped primary holds its connections; Sentinel elects the replica meanwhile. When the
  // old primary wakes up it would answer the SET it was sent and then, made a replica, wipe
  // it: the client must hear that the outcome is unknown, never OK.
  ElectedShard cluster;
  auto &primary = cluster.primary, &replica = cluster.replica;
  const std::string config = cluster.config() + "timeouts: {request_ms: 30000}\n";
  SantralProcess santral(config);
  REQUIRE(ElectedShard::primary_is(santral, primary.address()));
  auto keys = keys_on(config, 0, 1, "inflight:");
  auto client = santral.client();
  REQUIRE(client.command({"PING"}).str == "PONG");
  // A transaction under way on the primary that is demoted.
  auto transaction = santral.client();
  REQUIRE(transaction.command({"MULTI"}).is_ok());
  REQUIRE(transaction.command({"SET", keys[0], "in-multi"}).str == "QUEUED");

  primary.pause();
  auto in_flight = std::async(std::launch::async, [&] {
    return client.command({"SET", keys[0], "v"});
  });
  bool followed =
      wait_until([&] { return ElectedShard::primary_is(santral, replica.address()); }, 30000);
  INFO(santral.log());
  primary.resume();
  REQUIRE(followed);
  auto reply = in_flight.get();
  INFO(reply.str);
  CHECK(reply.is_error());
  CHECK(reply.str.find("Sentinel elected " + replica.address()) != std::string::npos);
  CHECK(reply.str.find("may or may not have run") != std::string::npos);
  // The transaction's shard is the same shard (not CROSSSLOT); its connection is gone, so it
  // ends in an error and nothing of it runs on the new primary.
  auto queued = transaction.command({"SET", keys[0], "after"});
  INFO(queued.str);
  CHECK(queued.str.find("CROSSSLOT") == std::string::npos);
  auto exec = transaction.command({"EXEC"});
  INFO(exec.str);
  CHECK(exec.is_error());
  CHECK(transaction.command({"PING"}).str == "PONG");
  CHECK(replica.client().command({"GET", keys[0]}).str != "after");
  CHECK(replica.client().command({"GET", keys[0]}).str != "in-multi");
  // The connection serves on, on the new primary.
  CHECK(client.command({"SET", keys[0], "w"}).is_ok());
  CHECK(replica.client().command({"GET", keys[0]}).str == "w");
}

TEST_CASE("sentinel in a fleet: every router follows the failover, and the map stays the same") {
  ElectedShard cluster;
  auto &primary = cluster.primary, &replica = cluster.replica;
  EtcdCluster etcd(1);
  const std::string config =
      cluster.config() + etcd.cluster_yaml("sentinel-fleet", "  lease_ttl_s: 3\n");
  SantralProcess first(config), second(config);
  auto version = shardmap(first).substr(0, shardmap(first).find('\n'));
  REQUIRE(version.starts_with("version:"));
  REQUIRE(shardmap(second).starts_with(version + "\n"));
  REQUIRE(ElectedShard::primary_is(first, primary.address()));
  REQUIRE(ElectedShard::primary_is(second, primary.address()));
  auto keys = keys_on(config, 0, 2, "fleet:");
  REQUIRE(first.client().command({"SET", keys[0], "1"}).is_ok());
  CHECK(second.client().command({"GET", keys[0]}).str == "1");
  REQUIRE(wait_until([&] { return replica.has_key(keys[0]); }, 5000));

  primary.kill();
  bool followed = wait_until(
      [&] {
        return ElectedShard::primary_is(first, replica.address()) &&
               ElectedShard::primary_is(second, replica.address());
      },
      30000);
  INFO(first.log() << "\n" << second.log());
  REQUIRE(followed);
  // A failover is not a map change: both serve the version they served.
  CHECK(shardmap(first).starts_with(version + "\n"));
  CHECK(shardmap(second).starts_with(version + "\n"));
  auto set = second.client().command({"SET", keys[1], "2"});
  INFO(set.str);
  REQUIRE(set.is_ok());
  CHECK(replica.has_key(keys[1]));
  CHECK(first.client().command({"GET", keys[1]}).str == "2");
  CHECK(first.client().command({"GET", keys[0]}).str == "1");
}

TEST_CASE("sentinel: a master no sentinel knows is a config error naming the shard's key") {
  RedisServer primary;
  SentinelProcess sentinel("known", primary.port(), 1);
  TempDir dir;
  auto file = dir.write("santral.yaml", "sentinel: {addresses: [" + sentinel.address() +
                                            "]}\nshards:\n  - {name: s0, sentinel_master: "
                                            "unknown}\n");
  auto result = run_santral({"--check-config", file.string()});
  INFO(result.output);
  CHECK(result.exit_code != 0);
  CHECK(result.output.find("santral.yaml") != std::string::npos);
  CHECK(result.output.find("shards[0].sentinel_master") != std::string::npos);
  CHECK(result.output.find("no master named 'unknown'") != std::string::npos);

  // The known one serves.
  auto good = dir.write("good.yaml", "sentinel: {addresses: [" + sentinel.address() +
                                         "]}\nshards:\n  - {name: s0, sentinel_master: known}\n");
  auto ok = run_santral({"--check-config", good.string()});
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("sentinel: a `tls: true` shard's primary is confirmed with ROLE over TLS") {
  TestCertificates certs;
  RedisTls tls;
  tls.cert_file = certs.server.cert_file;
  tls.key_file = certs.server.key_file;
  tls.ca_file = certs.ca.cert_file;
  RedisServer primary(tls);
  // The sentinel reaches its TLS-only primary over TLS too; clients reach it in plain.
  SentinelProcess sentinel("s0", primary.port(), 1,
                           "tls-replication yes\ntls-cert-file " + certs.server.cert_file.string() +
                               "\ntls-key-file " + certs.server.key_file.string() +
                               "\ntls-ca-cert-file " + certs.ca.cert_file.string() + "\n");
  SantralProcess santral("sentinel: {addresses: [" + sentinel.address() +
                         "]}\nshards:\n  - {name: s0, sentinel_master: s0, tls: true}\n"
                         "backend:\n  tls: {ca_file: " +
                         certs.ca.cert_file.string() + ", server_name: localhost}\n");
  CHECK(ElectedShard::primary_is(santral, primary.address()));
  auto set = santral.client().command({"SET", "over-tls", "1"});
  INFO(set.str);
  REQUIRE(set.is_ok());
  CHECK(primary.tls_client().command({"GET", "over-tls"}).str == "1");
}

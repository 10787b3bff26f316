// Online resharding beyond adding a shard, against real redis-server shards and under writes:
// a directory group given another shard, a shard dropped from the ring, and a source shard
// killed mid-move and restarted from its append-only file. Each move ends with every key on
// the shard the new map names and nowhere else, and nothing acknowledged lost; the keys the
// new map leaves in place never leave their shard.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

santral::placement::ShardMap map_of(const SantralProcess& santral) {
  return santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
}

// Sellers g1 and g4 on s0, g2 on s1, g3 on s2; `g1` says where g1 is.
std::string sellers_yaml(const std::string& g1) {
  return "resharding: {max_keys_per_sec: 1000, batch_keys: 50}\n"
         "namespaces:\n"
         "  - name: sellers\n"
         "    match: \"seller:{seller}:{id}\"\n"
         "    shard_key: seller\n"
         "    strategy: directory\n"
         "    groups: {g1: " +
         g1 +
         ", g2: s1, g3: s2, g4: s0}\n"
         "    fallback: {strategy: hashed, shards: [s1, s2]}\n";
}

// Approves the planned move and returns once the writers have been acknowledged while it runs.
void approve_under_writes(RedisClient& client, Writers& writers) {
  REQUIRE(wait_until([&] { return writers.written_count_ > 200; }, 10000));
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  std::size_t at_approve = writers.written_count_;
  REQUIRE(wait_until([&] { return writers.written_count_ > at_approve + 100; }, 10000));
  CHECK(reshard_status(client)["state"] == "moving");
}

}  // namespace

TEST_CASE("moving a directory group under load") {
  RedisServer a, b, c;
  std::vector<RedisServer*> shards = {&a, &b, &c};
  SantralProcess santral(shards_yaml(shards) + sellers_yaml("s0"));
  auto client = santral.client();
  constexpr int kKeys = 1000;
  for (const char* group : {"g1", "g2", "g3", "g4"})
    load_keys(client, kKeys, std::string("seller:") + group + ":");
  auto before = where(shards);
  REQUIRE(before.size() == 4 * kKeys);
  REQUIRE(a.dbsize() == 2 * kKeys);
  REQUIRE(b.dbsize() == kKeys);
  REQUIRE(c.dbsize() == kKeys);

  rewrite(santral, shards_yaml(shards) + sellers_yaml("s2"));
  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  REQUIRE(reload.str.find("planned a move of 1 unit") != std::string::npos);
  auto plan = client.command({"SANTRAL", "RESHARD", "PLAN"}).str;
  INFO(plan);
  CHECK(plan.find("sellers: groups g1 from s0 to s2") != std::string::npos);
  for (const char* staying : {"g2", "g3", "g4"}) CHECK(plan.find(staying) == std::string::npos);

  // The writers' keys (counters and unique keys) are g1's: every write meets a moving key.
  Writers writers(santral.port(), 3, "seller:g1:");
  approve_under_writes(client, writers);
  REQUIRE(wait_for_state(client, "idle"));
  writers.stop();
  CHECK(std::stoll(reshard_status(client)["keys_moved"]) >= kKeys);

  auto map = map_of(santral);
  check_settled(client, shards, map, kKeys, writers, "seller:g1:");
  Writers none(santral.port(), 0);
  for (const char* staying : {"g2", "g3", "g4"})
    check_settled(client, shards, map, kKeys, none, std::string("seller:") + staying + ":");
  // g1 is on s2 alone; every other key is where it was, and its shard never ran a MIGRATE.
  for (const auto& [key, on] : where(shards)) {
    INFO(key);
    if (key.rfind("seller:g1:", 0) == 0) {
      REQUIRE(on == std::vector<std::size_t>{2});
    } else {
      REQUIRE(before.count(key) == 1);
      REQUIRE(on == before.at(key));
    }
  }
  CHECK(a.dbsize() == kKeys);
  CHECK(a.command_calls("migrate") > 0);
  CHECK(b.command_calls("migrate") == 0);
  CHECK(c.command_calls("migrate") == 0);
  CHECK(writers.errors_ == 0);
}

TEST_CASE("removing a shard from the ring under load") {
  RedisServer a, b, c, d;
  std::vector<RedisServer*> old_shards = {&a, &b, &c, &d}, new_shards = {&a, &b, &c};
  const std::string settings = "resharding: {max_keys_per_sec: 1000, batch_keys: 50}\n";
  SantralProcess santral(shards_yaml(old_shards) + settings);
  auto client = santral.client();
  constexpr int kKeys = 3000;
  load_keys(client, kKeys);
  REQUIRE(d.dbsize() > kKeys / 8);

  rewrite(santral, shards_yaml(new_shards) + settings);
  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  REQUIRE(reload.str.find("planned") != std::string::npos);
  auto plan = client.command({"SANTRAL", "RESHARD", "PLAN"}).str;
  INFO(plan);
  CHECK(plan.find("ring arcs from s3") != std::string::npos);
  for (const char* kept : {"from s0", "from s1", "from s2"})
    CHECK(plan.find(kept) == std::string::npos);

  Writers writers(santral.port(), 3);
  approve_under_writes(client, writers);
  REQUIRE(wait_for_state(client, "idle"));
  writers.stop();

  // Nothing is left on the removed shard, and only its keys moved: the ring's other arcs keep
  // their owners, so the shards that stay never ran a MIGRATE.
  CHECK(d.dbsize() == 0);
  for (const auto& [key, on] : where(old_shards)) {
    INFO(key);
    REQUIRE(on.size() == 1);
    REQUIRE(on[0] != 3);
  }
  CHECK(d.command_calls("migrate") > 0);
  for (auto* kept : new_shards) CHECK(kept->command_calls("migrate") == 0);
  check_settled(client, new_shards, map_of(santral), kKeys, writers);
  CHECK(writers.errors_ == 0);
}

TEST_CASE("a source shard killed mid-move and restarted with its data") {
  RedisServer a({"--appendonly", "yes", "--appendfsync", "always"});
  RedisServer b;
  std::vector<RedisServer*> old_shards = {&a}, new_shards = {&a, &b};
  const std::string settings =
      "resharding: {max_keys_per_sec: 2000, batch_keys: 50, migrate_timeout_ms: 300}\n"
      "timeouts: {request_ms: 300, connect_ms: 300}\n";
  SantralProcess santral(shards_yaml(old_shards) + settings);
  auto client = santral.client();
  constexpr int kKeys = 4000;
  load_keys(client, kKeys);
  rewrite(santral, shards_yaml(new_shards) + settings);
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  auto map = map_of(santral);

  // Every write is fsynced on s0, so the writers are slow: the kill comes as soon as the walk
  // has moved some keys, not after a count of writes.
  Writers writers(santral.port(), 2);
  REQUIRE(wait_until([&] { return writers.written_count_ > 100; }, 10000));
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(
      wait_until([&] { return std::stoll(reshard_status(client)["keys_moved"]) > 100; }, 20000));
  a.kill();
  REQUIRE(wait_until([&] { return std::stoll(reshard_status(client)["errors"]) > 0; }, 20000));
  auto status = reshard_status(client);
  INFO(status["last_error"]);
  CHECK(status["state"] == "moving");
  CHECK(status["last_error"].find("s0") != std::string::npos);
  // A write of a moving key cannot be pulled from the dead source: it is refused with
  // TRYAGAIN, and the client's connection stays open.
  std::string moving;
  for (int i = 0; moving.empty(); ++i)
    if (map.shard_for_key("probe:" + std::to_string(i)) == 1) moving = "probe:" + std::to_string(i);
  auto probe = santral.client();
  auto refused = probe.command({"SET", moving, "x"});
  INFO(refused.str);
  CHECK(refused.str.rfind("TRYAGAIN", 0) == 0);
  CHECK(probe.command({"PING"}).str == "PONG");

  // restart() waits for a PONG, which redis-server gives only once its AOF is loaded: every
  // key load_keys wrote that the new map keeps on s0 is back.
  a.restart();
  REQUIRE(a.dbsize() > 0);
  {
    auto direct = a.client();
    int kept = 0;
    for (int i = 0; i < kKeys; ++i)
      if (map.shard_for_key("key:" + std::to_string(i)) == 0) {
        direct.append({"EXISTS", "key:" + std::to_string(i)});
        ++kept;
      }
    REQUIRE(kept > 0);
    for (int i = 0; i < kept; ++i) REQUIRE(direct.get_reply().integer == 1);
  }
  // Writes are acknowledged again, and the move ends.
  std::size_t at_restart = writers.written_count_;
  REQUIRE(wait_until([&] { return writers.written_count_ > at_restart + 100; }, 10000));
  REQUIRE(wait_for_state(client, "idle"));
  writers.stop();
  INFO("writers' errors while s0 was down: " << writers.errors_);
  check_settled(client, new_shards, map, kKeys, writers);
  CHECK(b.dbsize() > kKeys / 4);
}

// A move whose target already holds a copy of a key it moves (findings 2026-12-06, fix 4): a
// copy put there behind Santral's back, or left by a write that ran late. MIGRATE goes without
// REPLACE; on BUSYKEY the two copies are compared (DUMP). Equal: the source's copy goes.
// Different: the copy on the target stays in force, the source's is kept as
// santral:conflict:<key>, a warning is logged and INFO's # Santral section counts it in
// move_conflicts. Nothing is overwritten silently.
#include <catch2/catch.hpp>

#include <sstream>
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

using santral::placement::ShardMap;

const std::string kSettings = "watch_file: false\n";

ShardMap map_of(const SantralProcess& santral) {
  return ShardMap(santral::config::load_config(santral.config_path()));
}

// A line `field:value` of INFO santral, through Santral; empty when there is none.
std::string santral_info(RedisClient& client, const std::string& field) {
  std::string info = client.command({"INFO", "santral"}).str;
  std::istringstream lines(info);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.starts_with(field + ":")) return line.substr(field.size() + 1);
  }
  return "";
}

// Every santral:conflict:* key on every shard: shard index -> key.
std::vector<std::pair<std::size_t, std::string>> conflict_copies(
    const std::vector<RedisServer*>& shards) {
  std::vector<std::pair<std::size_t, std::string>> found;
  for (std::size_t s = 0; s < shards.size(); ++s)
    for (const auto& key : shards[s]->client().command({"KEYS", "santral:conflict:*"}).elements)
      found.emplace_back(s, key.str);
  return found;
}

struct ConflictMove {
  RedisServer a, b, c;
  std::vector<RedisServer*> old_shards = {&a, &b}, all = {&a, &b, &c};
  SantralProcess santral{shards_yaml(old_shards) + kSettings};
  RedisClient admin = santral.client(30000);
  std::string key;
  std::size_t source = 0;

  ConflictMove() {
    auto from = map_of(santral);
    rewrite(santral, shards_yaml(all) + kSettings);
    auto to = map_of(santral);
    rewrite(santral, shards_yaml(old_shards) + kSettings);
    for (int i = 0; key.empty(); ++i) {
      std::string k = "reg:" + std::to_string(i);
      if (to.shard(to.shard_for_key(k)).name == "s2") key = k;
    }
    source = from.shard_for_key(key);
    // Keys for the walk to move meanwhile.
    for (int i = 0; i < 100; ++i) admin.append({"SET", "filler:" + std::to_string(i), "x"});
    for (int i = 0; i < 100; ++i) REQUIRE(admin.get_reply().is_ok());
  }

  void move() {
    rewrite(santral, shards_yaml(all) + kSettings);
    auto reload = admin.command({"SANTRAL", "RELOAD"});
    INFO(reload.str);
    REQUIRE(reload.str.find("planned") != std::string::npos);
    REQUIRE(admin.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
    REQUIRE(wait_for_state(admin, "idle", 30000));
  }
};

}  // namespace

TEST_CASE("a different copy on the target stays in force; the source's is kept as a conflict") {
  ConflictMove run;
  REQUIRE(run.admin.command({"SET", run.key, "on-source"}).is_ok());
  REQUIRE(run.all[run.source]->has_key(run.key));
  REQUIRE(run.c.client().command({"SET", run.key, "on-target"}).is_ok());
  run.move();

  auto value = run.admin.command({"GET", run.key}).str;
  INFO("GET " << run.key << " through Santral: " << value);
  CHECK(value == "on-target");
  CHECK(run.c.client().command({"GET", run.key}).str == "on-target");
  CHECK(where(run.all)[run.key] == std::vector<std::size_t>{2});

  // The source's copy, under its conflict name, on some shard.
  auto copies = conflict_copies(run.all);
  INFO("conflict copies: " << copies.size());
  REQUIRE(copies.size() == 1);
  const auto& [shard, name] = copies[0];
  CHECK((name == "santral:conflict:" + run.key ||
         name.starts_with("santral:conflict:" + run.key + ":")));
  CHECK(run.all[shard]->client().command({"GET", name}).str == "on-source");

  CHECK(santral_info(run.admin, "move_conflicts") == "1");
  bool warned = false;
  std::istringstream log(run.santral.log());
  for (std::string line; std::getline(log, line);)
    warned = warned || (line.find(run.key) != std::string::npos &&
                        line.find("conflict") != std::string::npos);
  CHECK(warned);
}

TEST_CASE("an equal copy on the target is no conflict: the source's copy just goes") {
  ConflictMove run;
  REQUIRE(run.admin.command({"SET", run.key, "same"}).is_ok());
  REQUIRE(run.all[run.source]->has_key(run.key));
  REQUIRE(run.c.client().command({"SET", run.key, "same"}).is_ok());
  run.move();

  CHECK(run.admin.command({"GET", run.key}).str == "same");
  CHECK(where(run.all)[run.key] == std::vector<std::size_t>{2});
  CHECK(conflict_copies(run.all).empty());
  CHECK(santral_info(run.admin, "move_conflicts") == "0");
}

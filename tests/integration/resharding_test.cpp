// Online resharding against real redis-server shards: a reload that moves keys is planned,
// approved and carried out while clients write; nothing acknowledged is lost or doubled, and
// every key ends on the shard the new map names, and nowhere else.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "placement/shard_map.h"
#include "router/hotkeys/salting/salted_layout.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

TEST_CASE("adding a shard to the ring: planned, approved, moved under load, nothing lost") {
  RedisServer a, b, c, d;
  std::vector<RedisServer*> old_shards = {&a, &b, &c}, new_shards = {&a, &b, &c, &d};
  SantralProcess santral(shards_yaml(old_shards) + "workers: 2\n");
  auto client = santral.client();
  constexpr int kKeys = 3000;
  load_keys(client, kKeys);

  rewrite(santral, shards_yaml(new_shards) + "workers: 2\n");
  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  REQUIRE(reload.str.find("planned a move") != std::string::npos);
  CHECK(reshard_status(client)["state"] == "planned");
  auto plan = client.command({"SANTRAL", "RESHARD", "PLAN"}).str;
  INFO(plan);
  CHECK(plan.find("to s3") != std::string::npos);
  CHECK(plan.find("ring arcs") != std::string::npos);
  // Planned, nothing moves: the old map still serves every key, and d is empty.
  CHECK(client.command({"GET", "key:7"}).str == "7");
  CHECK(d.dbsize() == 0);

  Writers writers(santral.port(), 3);
  wait_until([&] { return writers.written_count_ > 200; }, 10000);
  // From a shell: santral reshard approve, then status --watch until it ends.
  std::string router = "127.0.0.1:" + std::to_string(santral.port());
  auto approve = run_santral({"reshard", "approve", "--router", router});
  INFO(approve.output);
  REQUIRE(approve.exit_code == 0);
  // Reads during the move: every key that existed is found.
  for (int i = 0; i < kKeys; i += 7)
    REQUIRE(client.command({"GET", "key:" + std::to_string(i)}).str == std::to_string(i));
  auto watched = run_santral({"reshard", "status", "--watch", "--router", router});
  INFO(watched.output);
  CHECK(watched.exit_code == 0);
  CHECK(watched.output.find("100%") != std::string::npos);
  REQUIRE(wait_for_state(client, "idle"));
  writers.stop();
  auto status = reshard_status(client);
  CHECK(std::stoll(status["keys_moved"]) > 0);
  CHECK(d.dbsize() > kKeys / 8);

  auto map = santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
  check_settled(client, new_shards, map, kKeys, writers);
  CHECK(writers.errors_ == 0);
}

TEST_CASE("moving slots, then a restart of Santral mid-move: the move resumes and ends") {
  RedisServer a, b;
  std::vector<RedisServer*> shards = {&a, &b};
  auto yaml = [&](const std::string& split) {
    return shards_yaml(shards) +
           "resharding: {max_keys_per_sec: 400, batch_keys: 20}\n"
           "namespaces:\n"
           "  - name: keys\n"
           "    match: \"key:{id}\"\n"
           "    shard_key: id\n"
           "    strategy: slots\n"
           "    slots:\n      - {shard: s0, from: 0, to: " +
           split + "}\n      - {shard: s1, from: " + std::to_string(std::stoi(split) + 1) +
           ", to: 16383}\n";
  };
  auto santral = std::make_unique<SantralProcess>(yaml("8191"));
  auto client = santral->client();
  constexpr int kKeys = 4000;
  load_keys(client, kKeys);

  rewrite(*santral, yaml("4095"));  // slots 4096-8191 move from s0 to s1
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(
      wait_until([&] { return std::stoll(reshard_status(client)["keys_moved"]) > 100; }, 20000));
  // SIGKILL mid-move, start again on the same config and port.
  auto path = santral->config_path();
  int port = santral->port();
  santral->process().signal(SIGKILL);  // waits for the exit; its files stay
  SantralProcess again(path, port);
  auto after = again.client();
  CHECK(reshard_status(after)["state"] == "moving");
  for (int i = 0; i < kKeys; i += 13)
    REQUIRE(after.command({"GET", "key:" + std::to_string(i)}).str == std::to_string(i));
  REQUIRE(wait_for_state(after, "idle"));
  Writers none(port, 0);
  auto map = santral::placement::ShardMap(santral::config::load_config(path));
  check_settled(after, shards, map, kKeys, none);
}

TEST_CASE("ABORT mid-move puts every key back on its old owner") {
  RedisServer a, b, c;
  std::vector<RedisServer*> old_shards = {&a, &b}, new_shards = {&a, &b, &c};
  SantralProcess santral(shards_yaml(old_shards) +
                         "resharding: {max_keys_per_sec: 1000, batch_keys: 20}\n");
  auto client = santral.client();
  constexpr int kKeys = 3000;
  load_keys(client, kKeys);
  auto old_map = santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
  rewrite(santral,
          shards_yaml(new_shards) + "resharding: {max_keys_per_sec: 1000, batch_keys: 20}\n");
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  Writers writers(santral.port(), 2);
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_until([&] { return c.dbsize() > 50; }, 20000));
  REQUIRE(client.command({"SANTRAL", "RESHARD", "ABORT"}).is_ok());
  REQUIRE(wait_for_state(client, "idle"));
  writers.stop();
  CHECK(c.dbsize() == 0);
  check_settled(client, new_shards, old_map, kKeys, writers);
}

TEST_CASE("a source shard that stops answering pauses the move, which ends once it is back") {
  RedisServer a, b;
  std::vector<RedisServer*> old_shards = {&a}, new_shards = {&a, &b};
  int admin = free_loopback_port();
  std::string settings =
      "resharding: {max_keys_per_sec: 2000, batch_keys: 50, migrate_timeout_ms: 300}\n"
      "timeouts: {request_ms: 300, connect_ms: 300}\n"
      "admin: {listen: 127.0.0.1:" +
      std::to_string(admin) + "}\n";
  SantralProcess santral(shards_yaml(old_shards) + settings);
  auto client = santral.client();
  constexpr int kKeys = 3000;
  load_keys(client, kKeys);
  rewrite(santral, shards_yaml(new_shards) + settings);
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_until([&] { return b.dbsize() > 100; }, 20000));
  a.pause();
  REQUIRE(wait_until([&] { return std::stoll(reshard_status(client)["errors"]) > 0; }, 20000));
  auto status = reshard_status(client);
  CHECK(status["state"] == "moving");
  CHECK(status["last_error"].find("s0") != std::string::npos);
  // EXPLAIN says where a moving key is pulled from.
  auto new_map = santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
  std::string moving;
  for (int i = 0; moving.empty(); ++i)
    if (new_map.shard_for_key("key:" + std::to_string(i)) == 1) moving = "key:" + std::to_string(i);
  std::vector<std::string> words;
  std::function<void(const Reply&)> flatten = [&](const Reply& r) {
    if (r.type == Reply::Type::Array)
      for (const auto& e : r.elements) flatten(e);
    else
      words.push_back(r.str);
  };
  flatten(client.command({"SANTRAL", "EXPLAIN", "GET", moving}));
  auto at = std::find(words.begin(), words.end(), "moving_from");
  REQUIRE(at != words.end());
  CHECK(*(at + 1) == "s0");
  // The admin API says the same.
  auto page = http_request(admin, "GET", "/reshard");
  REQUIRE(page.status == 200);
  auto json = nlohmann::json::parse(page.body);
  CHECK(json["state"] == "moving");
  CHECK(json["errors"].get<int>() > 0);
  CHECK(json["moves"].size() == 1);
  a.resume();
  REQUIRE(wait_for_state(client, "idle"));
  Writers none(santral.port(), 0);
  auto map = santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
  check_settled(client, new_shards, map, kKeys, none);
}

TEST_CASE("a salted counter keeps its count through a move that would lay its sub-keys out anew") {
  RedisServer a, b, c, d;
  std::vector<RedisServer*> old_shards = {&a, &b, &c}, new_shards = {&a, &b, &c, &d};
  SantralProcess santral(shards_yaml(old_shards));
  auto client = santral.client();
  auto old_map = santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
  rewrite(santral, shards_yaml(new_shards));
  auto new_map = santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
  rewrite(santral, shards_yaml(old_shards));
  // A counter whose sub-keys the new map alone would name differently: without keeping the
  // names, the count would lose what the old names hold.
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    std::string candidate = "likes:" + std::to_string(i);
    auto was = santral::router::lay_out_counter(candidate, 3, {}, old_map).sub_keys;
    auto is = santral::router::lay_out_counter(candidate, 3, {}, new_map).sub_keys;
    if (was != is) key = candidate;
  }
  REQUIRE(client.command({"SANTRAL", "SALT", key, "3"}).is_ok());
  for (int i = 0; i < 600; ++i) client.append({"INCR", key});
  for (int i = 0; i < 600; ++i) REQUIRE(client.get_reply().type == Reply::Type::Integer);

  rewrite(santral, shards_yaml(new_shards));
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  for (int i = 0; i < 400; ++i) REQUIRE(client.command({"INCR", key}).type == Reply::Type::Integer);
  REQUIRE(wait_for_state(client, "idle"));
  for (int i = 0; i < 100; ++i) REQUIRE(client.command({"INCR", key}).type == Reply::Type::Integer);
  CHECK(client.command({"GET", key}).str == "1100");
  // Each sub-key is on its owner in the new map, and only there.
  auto placed = where(new_shards);
  for (const auto& [name, on] : placed) {
    INFO(name);
    REQUIRE(on.size() == 1);
    REQUIRE(new_map.shard(new_map.shard_for_key(name)).address.port == new_shards[on[0]]->port());
  }
}

namespace {

// `keys` keys of `value_bytes` each, on two shards, and a third shard added: the move runs with
// `settings` and nobody asks for the keys meanwhile, so every MIGRATE is the walk's. Afterwards
// every key holds its value, more than `keys` / 6 moved, and the MIGRATEs the two sources ran
// carried `per_migrate` keys each at most, on average.
void check_walk_alone(const std::string& settings, int keys, std::size_t value_bytes,
                      long long per_migrate) {
  RedisServer a, b, c;
  std::vector<RedisServer*> old_shards = {&a, &b}, new_shards = {&a, &b, &c};
  SantralProcess santral(shards_yaml(old_shards) + settings);
  auto client = santral.client();
  const std::string value(value_bytes, 'v');
  for (int i = 0; i < keys; ++i)
    REQUIRE(client.command({"SET", "key:" + std::to_string(i), value}).is_ok());
  rewrite(santral, shards_yaml(new_shards) + settings);
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_for_state(client, "idle"));
  for (int i = 0; i < keys; ++i)
    REQUIRE(client.command({"GET", "key:" + std::to_string(i)}).str == value);
  CHECK(a.dbsize() + b.dbsize() + c.dbsize() == keys);
  long long moved = c.dbsize();
  long long migrates = a.command_calls("migrate") + b.command_calls("migrate");
  INFO(moved << " keys moved in " << migrates << " MIGRATEs");
  REQUIRE(moved > keys / 6);
  CHECK(migrates * per_migrate >= moved);
}

}  // namespace

// A MIGRATE holds its source until the target has restored what it carries: the walk keeps
// each one small (issue 44), by bytes as well as keys, and a throttled walk to a millisecond of
// its budget. Sent as one MIGRATE per SCAN page and target, as before, these moves take a few
// MIGRATEs each.
TEST_CASE("the walk's MIGRATEs carry at most batch_bytes (by MEMORY USAGE)") {
  // About 4.1 KB each by MEMORY USAGE: two fit in 10,000 bytes, three do not.
  check_walk_alone("resharding: {batch_keys: 100, batch_bytes: 10000}\n", 300, 4000, 2);
}

TEST_CASE("a throttled walk's MIGRATEs carry a millisecond of its budget") {
  // max_keys_per_sec 2000: two keys per MIGRATE, whatever batch_keys says.
  check_walk_alone("resharding: {batch_keys: 100, max_keys_per_sec: 2000}\n", 600, 10, 2);
}

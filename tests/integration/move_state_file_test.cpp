// The move's state file fails closed. It names the map in force, so that a restart after an
// aborted move serves that map (the edited file becomes a planned move, never a silent switch);
// a state file that exists but cannot be read stops the start, naming it; and a state file that
// cannot be written stops the move before it starts, so that the old map keeps serving every
// key. (A Santral killed mid-move resumes its move after a restart: resharding_test.cpp, "moving
// slots, then a restart of Santral mid-move".)
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/free_port.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;

namespace {

santral::placement::ShardMap map_of(const SantralProcess& santral) {
  return santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
}

// load_keys' keys that do not answer their value.
int unreadable(RedisClient& client, int keys) {
  for (int i = 0; i < keys; ++i) client.append({"GET", "key:" + std::to_string(i)});
  int missing = 0;
  for (int i = 0; i < keys; ++i)
    if (client.get_reply().str != std::to_string(i)) ++missing;
  return missing;
}

// Every key on the shards is there once, on its owner in `map`.
void check_placed(const std::vector<RedisServer*>& shards,
                  const santral::placement::ShardMap& map) {
  for (const auto& [key, on] : where(shards)) {
    INFO(key);
    REQUIRE(on.size() == 1);
    REQUIRE(map.shard(map.shard_for_key(key)).address.port == shards[on[0]]->port());
  }
}

// Starts santral on `config` (which listens on `port`) and waits until it serves or exits.
// Returns whether it is serving.
bool starts(Process& santral, int port) {
  wait_until([&] { return !santral.running() || answers_ping(port); }, 10000);
  return santral.running();
}

}  // namespace

TEST_CASE("a restart after an aborted move serves the map in force and plans the file's map") {
  RedisServer a, b, c, d;
  std::vector<RedisServer*> old_shards = {&a, &b, &c}, new_shards = {&a, &b, &c, &d};
  const std::string settings =
      "watch_file: false\n"
      "resharding: {max_keys_per_sec: 1000, batch_keys: 50}\n";
  auto santral = std::make_unique<SantralProcess>(shards_yaml(old_shards) + settings);
  auto client = santral->client();
  constexpr int kKeys = 8000;
  load_keys(client, kKeys);
  auto old_map = map_of(*santral);

  // Step 1 of adding a shard, then the operator changes their mind: approve, abort.
  rewrite(*santral, shards_yaml(new_shards) + settings);
  auto new_map = map_of(*santral);
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_until([&] { return d.dbsize() > 100; }, 20000));
  REQUIRE(client.command({"SANTRAL", "RESHARD", "ABORT"}).is_ok());
  REQUIRE(wait_for_state(client, "idle"));
  REQUIRE(d.dbsize() == 0);
  REQUIRE(unreadable(client, kKeys) == 0);

  // Restarted on the same file, which still names the aborted map.
  auto path = santral->config_path();
  int port = santral->port();
  santral->process().signal(SIGTERM);  // waits for the exit; its files stay
  SantralProcess again(path, port);
  auto after = again.client();
  int missing = unreadable(after, kKeys);
  INFO(missing << " of " << kKeys << " keys unreadable after the restart");
  CHECK(missing == 0);
  auto status = reshard_status(after);
  CHECK(status["state"] == "planned");
  check_placed(new_shards, old_map);

  // The file's map is a move like any other: approved, it ends with every key on its owner.
  REQUIRE(status["state"] == "planned");
  REQUIRE(after.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_for_state(after, "idle"));
  Writers none(port, 0);
  check_settled(after, new_shards, new_map, kKeys, none);
}

TEST_CASE("a state file that exists but cannot be read stops the start and is named") {
  RedisServer a;
  std::vector<RedisServer*> shards = {&a};
  TempDir dir;
  int port = free_loopback_port();
  std::string config = "listen: 127.0.0.1:" + std::to_string(port) + "\n" + shards_yaml(shards);
  std::filesystem::path state;
  SECTION("garbage in the file resharding.state_file names") {
    state = dir.path() / "move-state.json";
    std::ofstream(state) << "{\"state\": \"moving\", \"from\": \n";  // cut short
    config += "resharding: {state_file: \"" + state.string() + "\"}\n";
  }
  SECTION("a directory where the default state file would be") {
    state = dir.path() / "santral.yaml.reshard.json";
    std::filesystem::create_directory(state);
  }
  auto file = dir.write("santral.yaml", config);
  Process santral({santral_binary(), "--config", file.string()},
                  (dir.path() / "santral.log").string());
  bool serving = starts(santral, port);
  INFO(santral.log());
  CHECK_FALSE(serving);
  if (!serving) {
    int status = santral.wait(1000);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) != 0);
    CHECK(santral.log().find(state.string()) != std::string::npos);
  }
}

TEST_CASE("a state file that cannot be written refuses the move; the old map keeps serving") {
  RedisServer a, b, c, d;
  std::vector<RedisServer*> old_shards = {&a, &b, &c}, new_shards = {&a, &b, &c, &d};
  TempDir dir;
  auto state_dir = dir.path() / "state";
  std::filesystem::create_directory(state_dir);
  auto state = state_dir / "move.json";
  const std::string settings =
      "watch_file: false\n"
      "resharding: {max_keys_per_sec: 1000, batch_keys: 50, state_file: \"" +
      state.string() + "\"}\n";
  SantralProcess santral(shards_yaml(old_shards) + settings);
  auto client = santral.client();
  constexpr int kKeys = 3000;
  load_keys(client, kKeys);
  auto old_map = map_of(santral);

  // The state file's directory becomes a plain file (the tests run as root: a mode would not
  // stop a write): nothing can be written there any more.
  std::filesystem::remove_all(state_dir);
  std::ofstream(state_dir) << "not a directory\n";

  rewrite(santral, shards_yaml(new_shards) + settings);
  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO("SANTRAL RELOAD: " << reload.str);
  CHECK(reload.is_error());
  CHECK(reload.str.find(state.string()) != std::string::npos);
  // Nothing to approve, so nothing moves that a restart would not know about.
  auto approve = client.command({"SANTRAL", "RESHARD", "APPROVE"});
  INFO("APPROVE: " << approve.str);
  CHECK(approve.is_error());
  CHECK(reshard_status(client)["state"] != "moving");
  CHECK(d.dbsize() == 0);
  int missing = unreadable(client, kKeys);
  INFO(missing << " of " << kKeys << " keys unreadable");
  CHECK(missing == 0);
  CHECK(d.dbsize() == 0);
  check_placed(new_shards, old_map);
}

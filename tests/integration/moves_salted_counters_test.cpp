// A salted counter loses no acknowledged increment when it is folded back during a move: by
// SANTRAL UNSALT, also after a single router exited on SIGTERM mid-move and started again to
// finish the move (run-time salting outlives it, in hotkeys.state_file). The counter (and some of
// its sub-keys) move to the added shard, and the fold comes before the walk has reached them: the
// case of a counter that has cooled down, so that no increment has pulled its sub-keys yet.
#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "router/hotkeys/salting/salted_layout.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

using santral::placement::ShardMap;

ShardMap map_of(const SantralProcess& santral) {
  return ShardMap(santral::config::load_config(santral.config_path()));
}

bool moves(const ShardMap& from, const ShardMap& to, const std::string& key) {
  return from.shard(from.shard_for_key(key)).address.text() !=
         to.shard(to.shard_for_key(key)).address.text();
}

// A counter salted over 4 sub-keys under `from` whose key and at least one other sub-key move
// under `to`.
std::string moving_counter(const ShardMap& from, const ShardMap& to) {
  for (int i = 0;; ++i) {
    std::string key = "hits:" + std::to_string(i);
    auto layout =
        santral::router::lay_out_counter(key, 4, santral::config::SaltReply::Estimate, from);
    int moving = 0;
    for (std::size_t s = 1; s < layout.sub_keys.size(); ++s)
      moving += moves(from, to, layout.sub_keys[s]) ? 1 : 0;
    if (moves(from, to, key) && moving > 0) return key;
  }
}

// INCRs of one key from a few connections until stopped: each counted when sent and when
// answered with an integer. A connection that fails or times out leaves its INCR unknown
// (attempted, not acknowledged) and is opened again.
class Incrementers {
 public:
  Incrementers(int port, std::string key, int threads) : key_(std::move(key)) {
    for (int t = 0; t < threads; ++t)
      threads_.emplace_back([this, port] {
        std::unique_ptr<RedisClient> client;
        while (!stop_) {
          try {
            if (!client) client = std::make_unique<RedisClient>(port, 5000);
            ++attempted;
            auto reply = client->command({"INCR", key_});
            if (reply.type == Reply::Type::Integer)
              ++acknowledged;
            else
              ++errors;
          } catch (const std::exception&) {
            client.reset();
            ++errors;
            if (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }
      });
  }
  ~Incrementers() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
  }
  // Runs until `count` more INCRs were acknowledged (or 20 s passed).
  bool until_acknowledged(long long count) {
    long long target = acknowledged + count;
    return wait_until([&] { return acknowledged >= target; }, 20000);
  }

  std::atomic<long long> attempted{0}, acknowledged{0}, errors{0};

 private:
  std::string key_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Keys that make the walk take a while: a quarter of them move to the added shard.
void load_filler(RedisClient& client, int keys) {
  for (int i = 0; i < keys; ++i) client.append({"SET", "filler:" + std::to_string(i), "x"});
  for (int i = 0; i < keys; ++i) REQUIRE(client.get_reply().is_ok());
}

const std::string kSettings =
    "watch_file: false\n"
    "resharding: {max_keys_per_sec: 300, batch_keys: 10}\n";

}  // namespace

TEST_CASE("SANTRAL UNSALT during a move loses no acknowledged increment") {
  RedisServer a, b, c, d;
  std::vector<RedisServer*> old_shards = {&a, &b, &c}, new_shards = {&a, &b, &c, &d};
  SantralProcess santral(shards_yaml(old_shards) + kSettings);
  auto client = santral.client(60000);
  auto old_map = map_of(santral);
  rewrite(santral, shards_yaml(new_shards) + kSettings);
  auto new_map = map_of(santral);
  rewrite(santral, shards_yaml(old_shards) + kSettings);
  std::string key = moving_counter(old_map, new_map);
  load_filler(client, 2000);

  REQUIRE(client.command({"SANTRAL", "SALT", key, "4"}).is_ok());
  long long attempted = 0, acknowledged = 0;
  {
    Incrementers before(santral.port(), key, 4);
    REQUIRE(before.until_acknowledged(5000));
    before.stop();
    attempted += before.attempted;
    acknowledged += before.acknowledged;
  }

  rewrite(santral, shards_yaml(new_shards) + kSettings);
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  auto unsalted = client.command({"SANTRAL", "UNSALT", key});
  INFO("SANTRAL UNSALT: " << unsalted.str);
  {
    // Increments go on while the move ends.
    Incrementers after(santral.port(), key, 4);
    REQUIRE(after.until_acknowledged(2000));
    REQUIRE(wait_for_state(client, "idle"));
    after.stop();
    attempted += after.attempted;
    acknowledged += after.acknowledged;
  }
  auto value = client.command({"GET", key});
  long long got = value.is_nil() ? 0 : std::stoll(value.str);
  INFO("GET " << key << " = " << got << "; acknowledged " << acknowledged << ", attempted "
              << attempted);
  CHECK(got >= acknowledged);
  CHECK(got <= attempted);
}

TEST_CASE("run-time salting outlives a SIGTERM during a move; its fold after loses nothing") {
  RedisServer a, b, c, d;
  std::vector<RedisServer*> old_shards = {&a, &b, &c}, new_shards = {&a, &b, &c, &d};
  auto santral = std::make_unique<SantralProcess>(shards_yaml(old_shards) + kSettings);
  auto client = santral->client(60000);
  auto old_map = map_of(*santral);
  rewrite(*santral, shards_yaml(new_shards) + kSettings);
  auto new_map = map_of(*santral);
  rewrite(*santral, shards_yaml(old_shards) + kSettings);
  std::string key = moving_counter(old_map, new_map);
  load_filler(client, 2000);

  // Salted at run time: the restarted router salts it again, and it is unsalted during the
  // resumed move.
  REQUIRE(client.command({"SANTRAL", "SALT", key, "4"}).is_ok());
  long long attempted = 0, acknowledged = 0;
  {
    Incrementers before(santral->port(), key, 4);
    REQUIRE(before.until_acknowledged(5000));
    before.stop();
    attempted += before.attempted;
    acknowledged += before.acknowledged;
  }

  rewrite(*santral, shards_yaml(new_shards) + kSettings);
  REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(reshard_status(client)["state"] == "moving");
  auto path = santral->config_path();
  int port = santral->port();
  santral->process().signal(SIGTERM);  // waits for the exit; its files stay

  SantralProcess again(path, port);
  auto after_client = again.client(60000);
  {
    Incrementers after(port, key, 4);
    REQUIRE(after.until_acknowledged(2000));
    INFO("the second run:\n" << again.log());
    REQUIRE(again.log().find("salted again") != std::string::npos);
    REQUIRE(after_client.command({"SANTRAL", "UNSALT", key}).is_ok());
    REQUIRE(wait_for_state(after_client, "idle"));
    after.stop();
    attempted += after.attempted;
    acknowledged += after.acknowledged;
  }
  auto value = after_client.command({"GET", key});
  long long got = value.is_nil() ? 0 : std::stoll(value.str);
  INFO("GET " << key << " = " << got << "; acknowledged " << acknowledged << ", attempted "
              << attempted);
  CHECK(got >= acknowledged);
  CHECK(got <= attempted);
}

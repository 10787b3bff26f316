// A shard that dies or hangs costs only its own keys, for no longer than the timeout, and is
// served again when it returns, without restarting Santral.
#include <catch2/catch.hpp>

#include <chrono>

#include "config/config.h"
#include "tests/support/cluster.h"

using namespace santral::test;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kTimeouts =
    "timeouts:\n"
    "  connect_ms: 300\n"
    "  request_ms: 400\n"
    "  reconnect_min_ms: 50\n"
    "  reconnect_max_ms: 200\n";

}  // namespace

TEST_CASE("a killed shard fails only its own keys, naming itself, and comes back") {
  Cluster cluster(3, kTimeouts);
  auto client = cluster.client();
  std::string lost = cluster.key_on(1, "lost");
  std::string kept = cluster.key_on(0, "kept");
  REQUIRE(client.command({"SET", lost, "1"}).is_ok());
  REQUIRE(client.command({"SET", kept, "2"}).is_ok());

  cluster.shard(1).kill();
  auto started = Clock::now();
  auto reply = client.command({"GET", lost});
  auto took = Clock::now() - started;
  REQUIRE(reply.is_error());
  CHECK(reply.str.find("shard1") != std::string::npos);
  CHECK(reply.str.find(cluster.shard(1).address()) != std::string::npos);
  CHECK(took < std::chrono::milliseconds(400 + 300));
  // Later requests fail fast while it is down, and the other shards are untouched.
  for (int i = 0; i < 20; ++i) {
    auto again = client.command({"GET", lost});
    CHECK(again.is_error());
    CHECK(client.command({"GET", kept}).str == "2");
  }

  cluster.shard(1).restart();  // empty, same port
  bool back = wait_until([&] { return client.command({"SET", lost, "3"}).is_ok(); }, 5000);
  REQUIRE(back);
  CHECK(client.command({"GET", lost}).str == "3");
  CHECK(cluster.shard(1).has_key(lost));
}

TEST_CASE("a hung shard times out its requests, and its late replies never reach later ones") {
  Cluster cluster(2, kTimeouts);
  auto client = cluster.client();
  auto bystander = cluster.client();
  std::string hung_a = cluster.key_on(1, "a");
  std::string hung_b = cluster.key_on(1, "b");
  std::string other = cluster.key_on(0, "o");
  REQUIRE(client.command({"SET", hung_a, "value-a"}).is_ok());
  REQUIRE(client.command({"SET", hung_b, "value-b"}).is_ok());
  REQUIRE(client.command({"SET", other, "value-o"}).is_ok());

  cluster.shard(1).pause();
  auto started = Clock::now();
  client.append({"GET", hung_a});
  // While that request waits, another client's requests to the healthy shard are served.
  for (int i = 0; i < 50; ++i) REQUIRE(bystander.command({"GET", other}).str == "value-o");
  auto reply = client.get_reply();
  auto took = Clock::now() - started;
  REQUIRE(reply.is_error());
  CHECK(reply.str.find("did not answer within 400 ms") != std::string::npos);
  CHECK(reply.str.find("shard1") != std::string::npos);
  CHECK(took >= std::chrono::milliseconds(350));
  CHECK(took < std::chrono::milliseconds(1500));

  cluster.shard(1).resume();  // it now answers the GET for hung_a, which nobody waits for
  bool back = wait_until([&] { return !client.command({"GET", hung_b}).is_error(); }, 5000);
  REQUIRE(back);
  for (int i = 0; i < 20; ++i) CHECK(client.command({"GET", hung_b}).str == "value-b");
}

TEST_CASE("Santral starts while a shard is down and serves it once it is up") {
  RedisServer up;
  RedisServer down;
  std::string yaml = SantralProcess::config_for({&up, &down}, kTimeouts);
  down.kill();
  SantralProcess santral(yaml);
  auto client = santral.client();
  auto map = santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
  std::string key;
  for (int i = 0; key.empty(); ++i)
    if (map.shard_for_key("x" + std::to_string(i)) == 1) key = "x" + std::to_string(i);
  auto reply = client.command({"SET", key, "v"});
  REQUIRE(reply.is_error());
  CHECK(reply.str.find("shard1") != std::string::npos);
  down.restart();
  CHECK(wait_until([&] { return client.command({"SET", key, "v"}).is_ok(); }, 5000));
  CHECK(down.has_key(key));
}

// The balancer on a live cluster: `santral balance` measures real shards, proposes splits and
// moves as a config, and the operator's reload and approval carry them out as any move.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;

namespace {

std::string handles_yaml(const std::vector<RedisServer*>& shards) {
  return shards_yaml(shards) +
         "namespaces:\n"
         "  - name: handles\n"
         "    match: \"handle:{name}\"\n"
         "    shard_key: name\n"
         "    strategy: range\n"
         "    ranges:\n"
         "      - {shard: s0, to: \"m\"}\n"
         "      - {shard: s1, from: \"m\"}\n";
}

}  // namespace

TEST_CASE("a range with too many keys is split at its median, and a half moves under load") {
  RedisServer a, b, c;
  std::vector<RedisServer*> shards = {&a, &b, &c};
  SantralProcess santral(handles_yaml(shards));
  auto client = santral.client();
  // Every key of range [-inf, m) on s0; s1 holds a few; s2 (only on the ring) none.
  constexpr int kKeys = 3000;
  load_keys(client, kKeys, "handle:a");
  for (int i = 0; i < 200; ++i)
    REQUIRE(client.command({"SET", "handle:z" + std::to_string(i), "z"}).is_ok());
  REQUIRE(a.dbsize() == kKeys);
  REQUIRE(c.dbsize() == 0);

  TempDir dir;
  auto proposal = dir.path() / "proposed.yaml";
  std::string router = "127.0.0.1:" + std::to_string(santral.port());
  auto balance = run_santral({"balance", "--router", router, "--by", "keys", "--window", "0",
                              "--write", proposal.string()});
  INFO(balance.output);
  REQUIRE(balance.exit_code == 0);
  CHECK(balance.output.find("balance by keys") != std::string::npos);
  CHECK(balance.output.find("split handles [-inf, m)") != std::string::npos);
  CHECK(balance.output.find("to s2") != std::string::npos);
  REQUIRE(std::filesystem::exists(proposal));
  // The proposal is a config Santral loads, with the range cut and a part of it on s2.
  auto proposed = santral::config::load_config(proposal);
  REQUIRE(proposed.namespaces.size() == 1);
  CHECK(proposed.namespaces[0].ranges.size() > 2);
  bool on_s2 =
      std::any_of(proposed.namespaces[0].ranges.begin(), proposed.namespaces[0].ranges.end(),
                  [](const auto& r) { return r.shard == 2; });
  CHECK(on_s2);
  // Nothing moved yet: the balancer only proposes.
  CHECK(c.dbsize() == 0);

  // The operator puts it in place and reloads: a planned move, approved under load.
  std::filesystem::copy_file(proposal, santral.config_path(),
                             std::filesystem::copy_options::overwrite_existing);
  auto reload = client.command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  REQUIRE(reload.str.find("planned a move") != std::string::npos);
  Writers writers(santral.port(), 2, "handle:a");
  REQUIRE(wait_until([&] { return writers.written_count_ > 100; }, 10000));
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_for_state(client, "idle"));
  writers.stop();
  auto map = santral::placement::ShardMap(santral::config::load_config(santral.config_path()));
  check_settled(client, shards, map, kKeys, writers, "handle:a");
  CHECK(writers.errors_ == 0);
  // The busiest shard went from 3000 of 3200 keys (2.8x the mean) to near the mean: counted
  // over the keys the plan was made from (the writers' keys, as many as the move's length
  // allowed, fall where the new ranges put them).
  std::vector<long long> sizes = {0, 0, 0};
  for (const auto& [key, on] : where(shards))
    if (key.starts_with("handle:akey:") || key.starts_with("handle:z"))
      for (auto shard : on) ++sizes[shard];
  double mean = double(sizes[0] + sizes[1] + sizes[2]) / 3;
  INFO(sizes[0] << " " << sizes[1] << " " << sizes[2]);
  CHECK(double(*std::max_element(sizes.begin(), sizes.end())) / mean < 1.5);
  CHECK(c.dbsize() > 0);

  // Balanced now: a second plan, over the same keys (the writers' are dropped), has nothing
  // to move.
  for (const auto& [key, on] : where(shards))
    if (!key.starts_with("handle:akey:") && !key.starts_with("handle:z"))
      for (auto shard : on) shards[shard]->client().command({"DEL", key});
  auto again = run_santral(
      {"balance", "--router", router, "--by", "keys", "--window", "0", "--ratio", "1.5"});
  INFO(again.output);
  CHECK(again.output.find("nothing to move") != std::string::npos);
}

TEST_CASE("by ops: a hot group too busy for any shard is a jumbo; a busy shard's groups move") {
  RedisServer a, b;
  std::vector<RedisServer*> shards = {&a, &b};
  SantralProcess santral(shards_yaml(shards) +
                         "namespaces:\n"
                         "  - name: orders\n"
                         "    match: \"order:{seller}:{id}\"\n"
                         "    shard_key: seller\n"
                         "    strategy: directory\n"
                         "    groups: {g1: s0, g2: s0, g3: s0, g4: s0, hot: s1}\n");
  auto client = santral.client();
  for (const char* group : {"g1", "g2", "g3", "g4", "hot"})
    for (int i = 0; i < 100; ++i) {
      std::string key = std::string("order:") + group + ":" + std::to_string(i);
      REQUIRE(client.command({"SET", key, "1"}).is_ok());
    }
  std::string router = "127.0.0.1:" + std::to_string(santral.port());

  SECTION("by keys: one of s0's groups moves to s1") {
    auto balance = run_santral({"balance", "--router", router, "--by", "keys", "--window", "0",
                                "--samples", "2000", "--ratio", "1.3"});
    INFO(balance.output);
    REQUIRE(balance.exit_code == 0);
    CHECK(balance.output.find("1 moves") != std::string::npos);
    CHECK(balance.output.find("from s0 to s1") != std::string::npos);
    CHECK(balance.output.find("proposed config") != std::string::npos);
  }

  SECTION("by ops: every request goes to the hot group, which no split can spread") {
    std::atomic<bool> stop{false};
    std::thread load([&] {
      RedisClient hot(santral.port());
      while (!stop)
        for (int i = 0; i < 100 && !stop; ++i)
          hot.command({"GET", "order:hot:" + std::to_string(i % 3)});
    });
    auto balance = run_santral({"balance", "--router", router, "--window", "1500"});
    stop = true;
    load.join();
    INFO(balance.output);
    REQUIRE(balance.exit_code == 0);
    CHECK(balance.output.find("balance by ops") != std::string::npos);
    CHECK(balance.output.find("jumbo: orders group hot on s1") != std::string::npos);
    // Moving s0's idle groups would not help: nothing to write.
    CHECK(balance.output.find("proposed config") == std::string::npos);
  }

  SECTION("a move in progress: the balancer waits for it") {
    rewrite(santral, shards_yaml(shards) +
                         "namespaces:\n"
                         "  - name: orders\n"
                         "    match: \"order:{seller}:{id}\"\n"
                         "    shard_key: seller\n"
                         "    strategy: directory\n"
                         "    groups: {g1: s1, g2: s0, g3: s0, g4: s0, hot: s1}\n");
    REQUIRE(client.command({"SANTRAL", "RELOAD"}).str.find("planned") != std::string::npos);
    auto refused = client.command({"SANTRAL", "BALANCE", "PLAN"});
    CHECK(refused.str.find("a move is planned") != std::string::npos);
    auto syntax = client.command({"SANTRAL", "BALANCE", "PLAN", "RATIO", "0.5"});
    CHECK(syntax.str.find("syntax error; use SANTRAL BALANCE PLAN") != std::string::npos);
  }
}

// Moves in a fleet keep what they were asked to keep across several moves on long-lived
// connections (finding F1): a request's pull belongs to that request, so a connection whose
// pull was in flight when one move ended cannot carry that outcome into the next move (whose
// first epoch once had the same number) and run its first request there unpulled.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "config/shard_map.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

// Registers: each writer owns its keys and, on one connection kept for the whole test, writes
// a new value then reads it back. A read that answers anything else is a write lost (or a
// stale copy brought back over it).
class Registers {
 public:
  Registers(int port, int writers, int keys_each) {
    for (int w = 0; w < writers; ++w)
      threads_.emplace_back([this, port, w, keys_each] {
        RedisClient client(port, 10000);
        for (long n = 0; !stop_; ++n) {
          std::string key = "reg:" + std::to_string(w) + ":" + std::to_string(n % keys_each);
          std::string value = std::to_string(n);
          try {
            auto set = client.command({"SET", key, value});
            if (set.is_error()) continue;  // TRYAGAIN: it did not run
            ++writes_;
            auto get = client.command({"GET", key});
            if (get.is_error()) continue;
            if (get.str != value) {
              std::lock_guard lock(mutex_);
              if (lost_.size() < 5) lost_.push_back(key + " wrote " + value + ", read " + get.str);
              ++stale_;
            }
          } catch (const std::exception&) {
            client = RedisClient(port, 10000);  // unknown outcome: a new connection
          }
        }
      });
  }
  ~Registers() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  std::atomic<long> writes_{0};
  std::atomic<long> stale_{0};
  std::vector<std::string> lost_;

 private:
  std::mutex mutex_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

std::string shard_line(const std::string& name, int port) {
  return "  - {name: " + name + ", address: 127.0.0.1:" + std::to_string(port) + "}\n";
}

std::string state_of(const SantralProcess& router) {
  auto client = router.client();
  return reshard_status(client)["state"];
}

// Pushes `map` as the fleet's next map (a move), approves it, and waits for its end.
void move_to(const SantralProcess& router, const std::string& map) {
  auto client = router.client();
  auto pushed = client.command({"SANTRAL", "MAP", "PUSH", map});
  INFO(pushed.str);
  REQUIRE(pushed.str.find("planned") != std::string::npos);
  REQUIRE(wait_until([&] { return state_of(router) == "planned"; }, 10000));
  REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_until([&] { return state_of(router) == "idle"; }, 90000));
}

}  // namespace

TEST_CASE("fleet: four moves in a row on long-lived connections; no write lost, none read stale") {
  EtcdCluster etcd(1);
  RedisServer a, b, c, d, e;
  // Slow links to the first shards: pulls from them take a while, so many connections have
  // one in flight when a move ends.
  FaultProxy proxy({{"a", a.port()}, {"b", b.port()}});
  const std::string base = shard_line("s0", proxy.port("a")) + shard_line("s1", proxy.port("b"));
  const std::string settings = "resharding: {max_keys_per_sec: 400}\n";
  SantralProcess router(
      "shards:\n" + base + settings + etcd.cluster_yaml("moves", "  lease_ttl_s: 3\n"),
      {"--workers", "2"});
  proxy.fault("*", "delay 40");
  Registers registers(router.port(), 32, 40);
  REQUIRE(wait_until([&] { return registers.writes_ > 500; }, 30000));

  // Shards added one by one, then the last one taken away again: every move starts while
  // connections still remember how the one before ended.
  const std::string two_more = base + shard_line("s2", c.port()) + shard_line("s3", d.port());
  for (const auto& shards : {base + shard_line("s2", c.port()), two_more,
                             two_more + shard_line("s4", e.port()), two_more}) {
    move_to(router, "shards:\n" + shards + settings);
    long after = registers.writes_;
    REQUIRE(wait_until([&] { return registers.writes_ > after + 200; }, 30000));
  }
  registers.stop();

  std::string examples;
  for (const auto& e : registers.lost_) examples += e + "; ";
  INFO(registers.stale_ << " reads older than the write just acknowledged, of " << registers.writes_
                        << " writes: " << examples);
  CHECK(registers.stale_ == 0);
  // Every key once, on its owner in the last map.
  auto last = santral::config::parse_config("shards:\n" + two_more, "last.yaml");
  santral::config::ShardMap map(last);
  std::vector<RedisServer*> shards = {&a, &b, &c, &d, &e};
  std::vector<int> ports = {proxy.port("a"), proxy.port("b"), c.port(), d.port(), e.port()};
  for (const auto& [key, on] : where(shards)) {
    INFO(key);
    REQUIRE(on.size() == 1);
    CHECK(map.shard(map.shard_for_key(key)).address.port == ports[on[0]]);
  }
}

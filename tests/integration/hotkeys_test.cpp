// Hot keys: detection (SANTRAL HOTKEYS) and salted counters spread over several shards, against
// real redis-server shards.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cluster.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"

using namespace santral::test;

namespace {

// Every key on every shard, for asserting where the sub-keys of a counter are.
long long keys_on_all(Cluster& cluster) {
  long long total = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) total += cluster.shard(s).dbsize();
  return total;
}

std::string field(const Reply& entry, const std::string& name) {
  for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2)
    if (entry.elements[i].str == name) {
      const Reply& value = entry.elements[i + 1];
      return value.type == Reply::Type::Integer ? std::to_string(value.integer) : value.str;
    }
  return "<no " + name + ">";
}

}  // namespace

TEST_CASE("50 clients, 100,000 INCRs on one salted key: exact total, writes on every shard") {
  Cluster cluster(4,
                  "workers: 2\n"
                  "salting:\n"
                  "  - key: likes:500\n"
                  "    salts: 4\n");
  constexpr int kClients = 50;
  constexpr int kPerClient = 2000;
  constexpr int kBatch = 100;
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      try {
        auto client = cluster.client();
        for (int sent = 0; sent < kPerClient; sent += kBatch) {
          for (int i = 0; i < kBatch; ++i) client.append({"INCR", "likes:500"});
          for (int i = 0; i < kBatch; ++i)
            if (client.get_reply().type != Reply::Type::Integer) ++failed;
        }
      } catch (const std::exception&) {
        ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(failed == 0);
  auto client = cluster.client();
  CHECK(client.command({"GET", "likes:500"}).str == std::to_string(kClients * kPerClient));

  // The writes were spread: every shard ran INCRs on a sub-key, and none took them all.
  std::size_t shards_written = 0;
  long long incrs = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) {
    long long calls = cluster.shard(s).command_calls("incr");
    incrs += calls;
    if (calls > 0) ++shards_written;
    CHECK(calls < kClients * kPerClient / 2);
  }
  CHECK(incrs == kClients * kPerClient);
  CHECK(shards_written >= 4);  // min(salts, shards)
  CHECK(keys_on_all(cluster) == 4);
}

TEST_CASE("a salted counter answers the counter commands and refuses the others") {
  Cluster cluster(3, "workers: 1\n");
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "views", "10"}).is_ok());
  REQUIRE(client.command({"SANTRAL", "SALT", "views", "3", "REPLY", "exact"}).is_ok());
  CHECK(client.command({"SANTRAL", "SALT", "views", "4"}).str.find("already salted") !=
        std::string::npos);
  // Exact replies: the running total, whichever sub-key took the write.
  for (int i = 1; i <= 30; ++i) REQUIRE(client.command({"INCR", "views"}).integer == 10 + i);
  CHECK(client.command({"INCRBY", "views", "5"}).integer == 45);
  CHECK(client.command({"DECRBY", "views", "3"}).integer == 42);
  CHECK(client.command({"DECR", "views"}).integer == 41);
  CHECK(client.command({"INCRBYFLOAT", "views", "0.5"}).str == "41.5");
  CHECK(client.command({"GET", "views"}).str == "41.5");
  CHECK(keys_on_all(cluster) == 3);  // one sub-key per shard

  REQUIRE(client.command({"SET", "plain", "7"}).is_ok());
  auto mget = client.command({"MGET", "plain", "views", "missing"});
  REQUIRE(mget.elements.size() == 3);
  CHECK(mget.elements[0].str == "7");
  CHECK(mget.elements[1].str == "41.5");
  CHECK(mget.elements[2].is_nil());
  CHECK(client.command({"EXISTS", "views", "plain", "missing"}).integer == 2);

  // SET replaces the whole counter.
  REQUIRE(client.command({"SET", "views", "100"}).is_ok());
  CHECK(client.command({"GET", "views"}).str == "100");
  CHECK(keys_on_all(cluster) == 2);  // views and plain

  CHECK(client.command({"TTL", "views"}).integer == -1);
  auto refused = client.command({"APPEND", "views", "x"});
  CHECK(refused.is_error());
  CHECK(refused.str.find("'views' is a salted counter") != std::string::npos);
  CHECK(refused.str.find("SANTRAL UNSALT views") != std::string::npos);
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"INCR", "views"}).str.find("inside MULTI") != std::string::npos);
  CHECK(client.command({"EXEC"}).str.find("EXECABORT") == 0);

  for (int i = 0; i < 20; ++i) client.command({"INCR", "views"});
  CHECK(client.command({"DEL", "views", "plain"}).integer == 2);
  CHECK(keys_on_all(cluster) == 0);
  CHECK(client.command({"GET", "views"}).is_nil());
  CHECK(client.command({"SANTRAL", "SALT", "x", "1"}).is_error());
  CHECK(client.command({"SANTRAL", "UNSALT", "plain"}).str.find("not salted") != std::string::npos);
}

TEST_CASE("unsalting while 10 clients increment loses no increment") {
  Cluster cluster(4, "workers: 2\n");
  auto admin = cluster.client();
  REQUIRE(admin.command({"SANTRAL", "SALT", "counter", "4"}).is_ok());
  constexpr int kClients = 10;
  constexpr int kPerClient = 3000;
  std::atomic<long long> acknowledged{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      try {
        auto client = cluster.client();
        for (int sent = 0; sent < kPerClient; sent += 10) {
          for (int i = 0; i < 10; ++i) client.append({"INCR", "counter"});
          for (int i = 0; i < 10; ++i) {
            if (client.get_reply().type == Reply::Type::Integer)
              ++acknowledged;
            else
              ++failed;
          }
        }
      } catch (const std::exception&) {
        ++failed;
      }
    });
  }
  // Unsalt once a good part of the increments went out, while the rest still do.
  while (acknowledged < kClients * kPerClient / 3) std::this_thread::yield();
  auto unsalted = admin.command({"SANTRAL", "UNSALT", "counter"});
  long long at_unsalt = acknowledged;
  for (auto& t : threads) t.join();
  CHECK(unsalted.is_ok());
  INFO(unsalted.str);
  CHECK(at_unsalt < kClients * kPerClient);  // the fold really raced with writes
  CHECK(failed == 0);
  CHECK(admin.command({"GET", "counter"}).str == std::to_string(kClients * kPerClient));
  CHECK(keys_on_all(cluster) == 1);  // every sub-key folded back
  CHECK(cluster.santral().log().find("SANTRAL UNSALT: 'counter'") != std::string::npos);
}

TEST_CASE("salting and unsalting a live counter while clients increment keeps every increment") {
  Cluster cluster(4, "workers: 2\n");
  auto admin = cluster.client();
  constexpr int kClients = 8;
  constexpr int kPerClient = 4000;
  std::atomic<long long> acknowledged{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      try {
        auto client = cluster.client();
        for (int sent = 0; sent < kPerClient; sent += 20) {
          for (int i = 0; i < 20; ++i) client.append({"INCRBY", "live", "2"});
          for (int i = 0; i < 20; ++i) {
            if (client.get_reply().type == Reply::Type::Integer)
              ++acknowledged;
            else
              ++failed;
          }
        }
      } catch (const std::exception&) {
        ++failed;
      }
    });
  }
  constexpr long long kTotal = static_cast<long long>(kClients) * kPerClient;
  while (acknowledged < kTotal / 4) std::this_thread::yield();
  CHECK(admin.command({"SANTRAL", "SALT", "live", "4"}).is_ok());
  while (acknowledged < kTotal / 2) std::this_thread::yield();
  CHECK(admin.command({"SANTRAL", "UNSALT", "live"}).is_ok());
  for (auto& t : threads) t.join();
  CHECK(failed == 0);
  CHECK(admin.command({"GET", "live"}).str == std::to_string(2 * kTotal));
  CHECK(keys_on_all(cluster) == 1);
  CHECK(cluster.santral().log().find("SANTRAL SALT: 'live' is a salted counter over 4") !=
        std::string::npos);
}

TEST_CASE("PEXPIRE on a salted counter removes every sub-key at the deadline") {
  Cluster cluster(4,
                  "salting:\n"
                  "  - match: \"hits:{page}\"\n"
                  "    salts: 4\n");
  auto client = cluster.client();
  for (int i = 0; i < 400; ++i) REQUIRE(!client.command({"INCR", "hits:home"}).is_error());
  REQUIRE(keys_on_all(cluster) == 4);
  CHECK(client.command({"GET", "hits:home"}).str == "400");
  CHECK(client.command({"PEXPIRE", "hits:home", "300"}).integer == 1);
  CHECK(client.command({"PTTL", "hits:home"}).integer > 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (keys_on_all(cluster) > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  CHECK(keys_on_all(cluster) == 0);
  CHECK(client.command({"GET", "hits:home"}).is_nil());
}

TEST_CASE("a sub-key first written after EXPIRE expires with the counter") {
  Cluster cluster(4, "");
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "likes:1", "5"}).is_ok());
  REQUIRE(client.command({"SANTRAL", "SALT", "likes:1", "4"}).is_ok());
  REQUIRE(keys_on_all(cluster) == 1);  // only the key itself has been written so far
  CHECK(client.command({"PEXPIRE", "likes:1", "1500"}).integer == 1);
  CHECK(client.command({"EXPIRE", "nothing", "10"}).integer == 0);
  for (int i = 0; i < 100; ++i) REQUIRE(!client.command({"INCR", "likes:1"}).is_error());
  CHECK(client.command({"GET", "likes:1"}).str == "105");
  CHECK(keys_on_all(cluster) == 4);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (keys_on_all(cluster) > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  CHECK(keys_on_all(cluster) == 0);
  CHECK(client.command({"GET", "likes:1"}).is_nil());
}

TEST_CASE("SANTRAL HOTKEYS names a hammered key with its shard and salting") {
  int admin_port = free_loopback_port();
  Cluster cluster(3,
                  "workers: 2\n"
                  "admin:\n"
                  "  listen: 127.0.0.1:" +
                      std::to_string(admin_port) +
                      "\n"
                      "hotkeys:\n"
                      "  sample_every: 4\n"
                      "salting:\n"
                      "  - key: votes\n"
                      "    salts: 3\n");
  auto client = cluster.client();
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 100; ++i) client.append({"GET", "viral:post"});
    for (int i = 0; i < 20; ++i) client.append({"INCR", "votes"});
    for (int i = 0; i < 10; ++i) client.append({"GET", "cold:" + std::to_string(round * 10 + i)});
    for (int i = 0; i < 130; ++i) REQUIRE(!client.get_reply().is_error());
  }
  auto hot = client.command({"SANTRAL", "HOTKEYS", "COUNT", "2"});
  REQUIRE(hot.type == Reply::Type::Array);
  REQUIRE(hot.elements.size() == 2);
  const Reply& first = hot.elements[0];
  CHECK(field(first, "key") == "viral:post");
  CHECK(field(first, "shard") == "shard" + std::to_string(cluster.owner("viral:post")));
  CHECK(field(first, "salted") == "0");
  CHECK(std::stod(field(first, "ops_per_sec")) > 0);
  CHECK(std::stod(field(first, "writes_per_sec")) == 0);
  const Reply& second = hot.elements[1];
  CHECK(field(second, "key") == "votes");
  CHECK(field(second, "salted") == "3");
  CHECK(field(second, "shard") == "shard" + std::to_string(cluster.owner("votes")));
  CHECK(std::stod(field(second, "reads_per_sec")) == 0);
  CHECK(client.command({"SANTRAL", "HOTKEYS", "COUNT", "0"}).is_error());

  // The admin API lists the same keys as JSON.
  auto page = http_request(admin_port, "GET", "/hotkeys");
  REQUIRE(page.status == 200);
  auto keys = nlohmann::json::parse(page.body)["hotkeys"];
  REQUIRE(keys.size() >= 2);
  CHECK(keys[0]["key"] == "viral:post");
  CHECK(keys[0]["shard"] == "shard" + std::to_string(cluster.owner("viral:post")));
  CHECK(keys[1]["key"] == "votes");
  CHECK(keys[1]["salted"] == 3);
}

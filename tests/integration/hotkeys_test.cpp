// Hot keys: detection (SANTRAL HOTKEYS) and salted counters spread over several shards, against
// real redis-server shards.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
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
  threads.reserve(kClients);
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
  threads.reserve(kClients);
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
  threads.reserve(kClients);
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
  CHECK(field(second, "salted_by") == "config");
  CHECK(field(first, "salted_by").empty());
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
  CHECK(keys[1]["salted_by"] == "config");
}

namespace {

// Hot-key detection that sees every access, short windows and fast checks, so that automatic
// salting decides within a second or two.
const std::string kAutoSalt =
    "workers: 2\n"
    "hotkeys:\n"
    "  sample_every: 1\n"
    "  window_s: 1\n"
    "  auto_salt: {enabled: true, writes_per_sec: 200, for_s: 1, salts: 4, "
    "cold_writes_per_sec: 50, cold_for_s: 1, check_ms: 100}\n";

// Keeps sending pipelined batches of `batch` from another thread until stopped; counts the
// INCRs acknowledged.
class Hammer {
 public:
  Hammer(Cluster& cluster, std::vector<std::vector<std::string>> batch)
      : thread_([this, &cluster, batch = std::move(batch)] {
          try {
            auto client = cluster.client();
            while (!stop_) {
              for (const auto& command : batch) client.append(command);
              for (const auto& command : batch) {
                Reply reply = client.get_reply();
                if (reply.is_error()) ++failed_;
                if (command[0] == "INCR" && command[1] == batch[0][1] &&
                    reply.type == Reply::Type::Integer)
                  ++counted_;
              }
            }
          } catch (const std::exception&) {
            ++failed_;
          }
        }) {}
  ~Hammer() { stop(); }

  // Stops and returns the INCRs of the batch's first key acknowledged.
  long long stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return counted_;
  }
  int failed() const { return failed_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<long long> counted_{0};
  std::atomic<int> failed_{0};
  std::thread thread_;
};

// The HOTKEYS entry of `key`, or an empty reply.
Reply hot_entry(RedisClient& client, const std::string& key) {
  auto hot = client.command({"SANTRAL", "HOTKEYS", "COUNT", "100"});
  for (const auto& entry : hot.elements)
    if (field(entry, "key") == key) return entry;
  return {};
}

long long keys_named(Cluster& cluster, std::size_t shard, const std::string& pattern) {
  return static_cast<long long>(
      cluster.shard(shard).client().command({"KEYS", pattern}).elements.size());
}

}  // namespace

TEST_CASE("a hot counter is salted automatically, then unsalted once cold, every INCR kept") {
  Cluster cluster(4, kAutoSalt);
  auto client = cluster.client();
  REQUIRE(client.command({"SANTRAL", "SALT", "manual", "2"}).is_ok());
  std::vector<std::vector<std::string>> batch(20, {"INCR", "likes:auto"});
  // As hot, but also SET: not only a counter, so never salted automatically.
  batch.insert(batch.end(), 19, {"INCR", "mixed"});
  batch.push_back({"SET", "mixed", "0"});
  // As hot, but a hash (which may mix counters with text), or in another database (folded back
  // in the default one only): never salted automatically either.
  batch.insert(batch.end(), 20, {"HINCRBY", "likes:hash", "f", "1"});
  batch.push_back({"SELECT", "1"});
  batch.insert(batch.end(), 20, {"INCR", "likes:db1"});
  batch.push_back({"SELECT", "0"});
  Hammer hammer(cluster, batch);

  REQUIRE(
      wait_until([&] { return field(hot_entry(client, "likes:auto"), "salted") == "4"; }, 8000));
  CHECK(field(hot_entry(client, "likes:auto"), "salted_by") == "auto");
  CHECK(field(hot_entry(client, "mixed"), "salted") == "0");
  CHECK(field(hot_entry(client, "likes:hash"), "salted") == "0");
  CHECK(field(hot_entry(client, "likes:db1"), "salted") == "0");
  // The writes now land on sub-keys on every shard.
  REQUIRE(wait_until(
      [&] {
        for (std::size_t s = 0; s < cluster.size(); ++s)
          if (keys_named(cluster, s, "likes:auto*") != 1) return false;
        return true;
      },
      5000));
  long long total = hammer.stop();
  CHECK(hammer.failed() == 0);
  CHECK(total > 0);
  CHECK(client.command({"GET", "likes:auto"}).str == std::to_string(total));
  std::string log = cluster.santral().log();
  CHECK(log.find("auto-salting: 'likes:auto' is a salted counter over 4 sub-keys") !=
        std::string::npos);
  CHECK(log.find("stayed above 200/s for 1 s") != std::string::npos);

  // Cold: folded back into the key, total kept.
  REQUIRE(wait_until(
      [&] {
        return cluster.santral().log().find("auto-unsalting: 'likes:auto' folded") !=
               std::string::npos;
      },
      8000));
  CHECK(client.command({"GET", "likes:auto"}).str == std::to_string(total));
  long long left = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) left += keys_named(cluster, s, "likes:auto*");
  CHECK(left == 1);
  log = cluster.santral().log();
  CHECK(log.find("stayed below 50/s for 1 s") != std::string::npos);
  CHECK(log.find("'mixed' is a salted counter") == std::string::npos);
  CHECK(log.find("'likes:hash' is a salted counter") == std::string::npos);
  CHECK(log.find("'likes:db1' is a salted counter") == std::string::npos);
  // What an operator salted stays salted.
  CHECK(client.command({"SANTRAL", "SALT", "manual", "2"}).str.find("already salted") !=
        std::string::npos);
}

// The chaos harness found it (seed 984905): a router alone, SIGTERMed while a stalled shard held
// its clients' requests, exited once drain_ms passed without folding, and its next start read
// the counter without its sub-keys. hotkeys.state_file keeps such a counter salted across any
// restart; nothing is folded at exit.
TEST_CASE("a counter salted at run time stays salted across a restart, read whole") {
  // drain_ms runs out long before a request to the stalled shard would time out.
  Cluster cluster(4, "drain_ms: 300\ntimeouts: {request_ms: 60000}\n");
  auto client = cluster.client();
  const std::string key = "likes:kept";
  REQUIRE(client.command({"SANTRAL", "SALT", key, "4"}).is_ok());
  auto state_file = cluster.santral().config_path();
  state_file += ".salting.json";
  auto file_text = [&state_file] {
    std::ifstream in(state_file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  CHECK(file_text().find("\"likes:kept\"") != std::string::npos);
  constexpr long long kAcknowledged = 400;
  for (int i = 0; i < kAcknowledged; ++i) client.append({"INCR", key});
  for (int i = 0; i < kAcknowledged; ++i) REQUIRE(client.get_reply().type == Reply::Type::Integer);
  long long attempted = kAcknowledged;
  std::size_t home = cluster.owner(key);

  SECTION("SIGTERM") {
    ::kill(cluster.santral().process().pid(), SIGTERM);
    int status = cluster.santral().process().wait(10000);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    long long sub_keys = 0;
    for (std::size_t s = 0; s < cluster.size(); ++s) sub_keys += keys_named(cluster, s, "likes:*");
    CHECK(sub_keys > 1);  // not folded at exit
  }
  SECTION("SIGKILL") {
    cluster.santral().process().signal(SIGKILL);
  }
  SECTION("SIGTERM while a stalled shard holds requests past drain_ms") {
    std::size_t stalled = cluster.size();
    for (std::size_t s = 0; s < cluster.size() && stalled == cluster.size(); ++s)
      if (s != home && keys_named(cluster, s, "likes:*") > 0) stalled = s;
    REQUIRE(stalled < cluster.size());
    cluster.shard(stalled).pause();
    RawConnection raw(cluster.santral().port());
    constexpr int kStalled = 200;
    std::string incrs;
    for (int i = 0; i < kStalled; ++i) incrs += "*2\r\n$4\r\nINCR\r\n$10\r\nlikes:kept\r\n";
    // Some reach the shards that answer, so the router has read them (a quarter of them would
    // be 50; one is enough to show the router took the batch in hand).
    auto on_live_shards = [&] {
      long long sum = 0;
      for (std::size_t s = 0; s < cluster.size(); ++s) {
        if (s == stalled) continue;
        auto shard = cluster.shard(s).client();
        for (const auto& name : shard.command({"KEYS", "likes:*"}).elements)
          sum += std::stoll(shard.command({"GET", name.str}).str);
      }
      return sum;
    };
    long long before = on_live_shards();
    raw.send(incrs);
    attempted += kStalled;
    REQUIRE(wait_until([&] { return on_live_shards() > before; }, 10000));
    ::kill(cluster.santral().process().pid(), SIGTERM);
    int status = cluster.santral().process().wait(10000);
    INFO("log:\n" << cluster.santral().log());
    REQUIRE(WIFEXITED(status));
    CHECK(cluster.santral().log().find("drain_ms passed") != std::string::npos);
    cluster.shard(stalled).resume();
  }

  // The next start finds the key in the file: salted again, it reads every sub-key.
  SantralProcess again(cluster.santral().config_path(), cluster.santral().port());
  auto after = again.client();
  long long total = std::stoll(after.command({"GET", key}).str);
  INFO(total << " read after the restart, " << kAcknowledged << " acknowledged, " << attempted
             << " attempted; log:\n"
             << again.log());
  CHECK(total >= kAcknowledged);
  CHECK(total <= attempted);
  CHECK(again.log().find("salted again") != std::string::npos);
  // UNSALT folds it, and then it leaves the file.
  REQUIRE(after.command({"SANTRAL", "UNSALT", key}).is_ok());
  CHECK(file_text().find("likes:kept") == std::string::npos);
  long long sub_keys = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) sub_keys += keys_named(cluster, s, "likes:*");
  CHECK(sub_keys == 1);
  long long folded = std::stoll(cluster.shard(home).client().command({"GET", key}).str);
  CHECK(folded >= total);
  CHECK(folded <= attempted);
}

TEST_CASE("a fold that fails says what was taken and how to fold the rest") {
  Cluster cluster(4);
  auto client = cluster.client();
  REQUIRE(client.command({"SANTRAL", "SALT", "likes:broken", "4"}).is_ok());
  for (int i = 0; i < 200; ++i) client.append({"INCR", "likes:broken"});
  for (int i = 0; i < 200; ++i) REQUIRE(client.get_reply().type == Reply::Type::Integer);
  // Every sub-key but the key itself now holds text, written on the shards directly.
  int spoiled = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) {
    auto shard = cluster.shard(s).client();
    for (const auto& name : shard.command({"KEYS", "likes:broken:s*"}).elements) {
      REQUIRE(shard.command({"SET", name.str, "abc"}).is_ok());
      ++spoiled;
    }
  }
  REQUIRE(spoiled == 3);
  auto unsalt = client.command({"SANTRAL", "UNSALT", "likes:broken"});
  REQUIRE(unsalt.is_error());
  INFO(unsalt.str);
  // Nothing is taken before it is added: the sub-key keeps its text.
  CHECK(unsalt.str.find("its part of the count, abc, was not added to the key; the sub-key still "
                        "holds it") != std::string::npos);
  // The failed one and the two after it are named, with the way to fold them.
  CHECK(unsalt.str.find("to fold 'likes:broken:s") != std::string::npos);
  int kept = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) {
    auto shard = cluster.shard(s).client();
    for (const auto& name : shard.command({"KEYS", "likes:broken:s*"}).elements)
      kept += shard.command({"GET", name.str}).str == "abc" ? 1 : 0;
  }
  CHECK(kept == 3);
  CHECK(unsalt.str.find("SANTRAL SALT likes:broken 4, then SANTRAL UNSALT likes:broken") !=
        std::string::npos);
}

// A fold step whose shard stalls (SIGSTOP: the request sits unread, the router gives up on it)
// may still run when the shard wakes: it is sent again (or looked for, an add by its mark)
// only once the shard has proven it done or dead, so no part is lost (a sub-key read but not
// added) and none is added twice.
TEST_CASE("a fold whose shard stalls mid-way waits for it, loses no part and adds none twice") {
  // A fold step gives up after request_ms plus twice migrate_timeout_ms (migrate.h): 500 ms.
  Cluster cluster(4, "timeouts: {request_ms: 300}\nresharding: {migrate_timeout_ms: 100}\n");
  auto client = cluster.client();
  const std::string key = "likes:stall";
  REQUIRE(client.command({"SANTRAL", "SALT", key, "4"}).is_ok());
  constexpr int kIncrements = 400;
  for (int i = 0; i < kIncrements; ++i) client.append({"INCR", key});
  for (int i = 0; i < kIncrements; ++i) REQUIRE(client.get_reply().type == Reply::Type::Integer);
  std::size_t home = cluster.owner(key);
  // The key's own shard (the adds), or the shard of a sub-key (its GET). Nothing is given up
  // on for good: every add is answered, and its mark removed.
  std::size_t stalled = home;
  SECTION("the key's shard") {}
  SECTION("a sub-key's shard") {
    for (std::size_t s = 0; s < cluster.size(); ++s)
      if (s != home && keys_named(cluster, s, key + ":s*") > 0) stalled = s;
    REQUIRE(stalled != home);
  }
  INFO("shard " << stalled << " stalls; the key lives on " << home);
  auto count = [](const std::string& log, std::string_view what) {
    std::size_t found = 0;
    for (std::size_t at = 0; (at = log.find(what, at)) != std::string::npos; ++at) ++found;
    return found;
  };
  cluster.shard(stalled).pause();
  auto unsalt = std::async(std::launch::async, [&] {
    return cluster.client(60000).command({"SANTRAL", "UNSALT", key});
  });
  // Something sent to the stalled shard was given up on (the salting fence's PING, or a
  // step of the fold) and waits for the shard's proof: nothing is sent again meanwhile (as it
  // was before: "sent again in"), whatever the timeouts.
  auto draining = [&] {
    auto info = client.command({"INFO", "santral"}).str;
    auto at = info.find("draining_connections:");
    return at == std::string::npos ? 0 : std::stoi(info.substr(at + 21));
  };
  REQUIRE(wait_until([&] { return draining() >= 1; }, 20000));
  CHECK(count(cluster.santral().log(), "sent again in") == 0);
  cluster.shard(stalled).resume();
  Reply unsalted = unsalt.get();
  INFO(unsalted.str);
  REQUIRE(unsalted.is_ok());
  CHECK(client.command({"GET", key}).str == std::to_string(kIncrements));
  long long sub_keys = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) sub_keys += keys_named(cluster, s, key + ":s*");
  CHECK(sub_keys == 0);
  long long marks = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s)
    marks += keys_named(cluster, s, "santral:fold:*");
  CHECK(marks == 0);
}

TEST_CASE("automatic salting is off by default") {
  // Thresholds set low, `enabled` left out.
  Cluster cluster(4,
                  "workers: 1\n"
                  "hotkeys:\n"
                  "  sample_every: 1\n"
                  "  window_s: 1\n"
                  "  auto_salt: {writes_per_sec: 200, for_s: 1, cold_writes_per_sec: 50, "
                  "check_ms: 100}\n");
  auto client = cluster.client();
  std::vector<std::vector<std::string>> batch(20, {"INCR", "likes:plain"});
  Hammer hammer(cluster, batch);
  // Hot for 3 s, three times what automatic salting would need were it on.
  auto start = std::chrono::steady_clock::now();
  bool hot = false;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(3)) {
    Reply entry = hot_entry(client, "likes:plain");
    hot = hot || field(entry, "key") == "likes:plain";
    REQUIRE(field(entry, "salted") != "4");
  }
  long long total = hammer.stop();
  CHECK(hot);
  CHECK(client.command({"GET", "likes:plain"}).str == std::to_string(total));
  CHECK(cluster.santral().log().find("auto-salting") == std::string::npos);
  long long keys = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) keys += keys_named(cluster, s, "likes:plain*");
  CHECK(keys == 1);
}

TEST_CASE("20 clients HINCRBY one field of a salted hash: exact sums, fields on every shard") {
  Cluster cluster(4,
                  "workers: 2\n"
                  "salting:\n"
                  "  - key: stats:post\n"
                  "    salts: 4\n");
  constexpr int kClients = 20;
  constexpr int kPerClient = 1000;
  constexpr int kBatch = 50;
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  threads.reserve(kClients);
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      try {
        auto client = cluster.client();
        for (int sent = 0; sent < kPerClient; sent += kBatch) {
          for (int i = 0; i < kBatch; ++i) client.append({"HINCRBY", "stats:post", "likes", "1"});
          client.append({"HINCRBY", "stats:post", "views", "3"});
          for (int i = 0; i <= kBatch; ++i)
            if (client.get_reply().type != Reply::Type::Integer) ++failed;
        }
      } catch (const std::exception&) {
        ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(failed == 0);
  constexpr int kLikes = kClients * kPerClient;
  constexpr int kViews = 3 * kClients * (kPerClient / kBatch);
  auto client = cluster.client();
  CHECK(client.command({"HGET", "stats:post", "likes"}).str == std::to_string(kLikes));
  CHECK(client.command({"HGET", "stats:post", "views"}).str == std::to_string(kViews));
  CHECK(client.command({"HGET", "stats:post", "shares"}).is_nil());
  CHECK(client.command({"HGET", "nothing", "likes"}).is_nil());

  // Every shard holds a sub-key and took HINCRBYs; none took them all.
  std::size_t shards_written = 0;
  for (std::size_t s = 0; s < cluster.size(); ++s) {
    long long calls = cluster.shard(s).command_calls("hincrby");
    if (calls > 0) ++shards_written;
    CHECK(calls < kLikes / 2);
  }
  CHECK(shards_written == 4);
  CHECK(keys_on_all(cluster) == 4);

  auto all = client.command({"HGETALL", "stats:post"});
  REQUIRE(all.elements.size() == 4);
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < all.elements.size(); i += 2)
    fields[all.elements[i].str] = all.elements[i + 1].str;
  CHECK(fields["likes"] == std::to_string(kLikes));
  CHECK(fields["views"] == std::to_string(kViews));
  CHECK(client.command({"HLEN", "stats:post"}).integer == 2);
  CHECK(client.command({"HKEYS", "stats:post"}).elements.size() == 2);
  CHECK(client.command({"HEXISTS", "stats:post", "views"}).integer == 1);
  CHECK(client.command({"HEXISTS", "stats:post", "shares"}).integer == 0);
  CHECK(client.command({"HGETALL", "nothing"}).elements.empty());
  // Estimate: the written sub-key's new value times 4.
  auto ratio = client.command({"HINCRBYFLOAT", "stats:post", "ratio", "0.5"});
  CHECK(ratio.str == "2");
  CHECK(client.command({"HGET", "stats:post", "ratio"}).str == "0.5");
  auto refused = client.command({"HSET", "stats:post", "likes", "0"});
  CHECK(refused.str.find("'stats:post' is a salted counter") != std::string::npos);
  CHECK(client.command({"DEL", "stats:post"}).integer == 1);
  CHECK(keys_on_all(cluster) == 0);
}

TEST_CASE("a salted hash with exact replies, and STRLEN of a salted counter") {
  Cluster cluster(3, "workers: 1\n");
  auto client = cluster.client();
  REQUIRE(client.command({"SANTRAL", "SALT", "h", "3", "REPLY", "exact"}).is_ok());
  for (int i = 1; i <= 30; ++i) REQUIRE(client.command({"HINCRBY", "h", "f", "1"}).integer == i);
  CHECK(client.command({"HINCRBYFLOAT", "h", "f", "0.25"}).str == "30.25");
  CHECK(client.command({"HINCRBY", "h", "f", "x"}).is_error());
  auto unsalted = client.command({"SANTRAL", "UNSALT", "h"});
  INFO(unsalted.str);
  REQUIRE(unsalted.is_ok());
  CHECK(client.command({"HGET", "h", "f"}).str == "30.25");
  CHECK(keys_on_all(cluster) == 1);

  REQUIRE(client.command({"SANTRAL", "SALT", "n", "3"}).is_ok());
  CHECK(client.command({"STRLEN", "n"}).integer == 0);
  for (int i = 0; i < 12; ++i) REQUIRE(!client.command({"INCRBY", "n", "100"}).is_error());
  CHECK(client.command({"STRLEN", "n"}).integer == 4);  // 1200
  REQUIRE(!client.command({"INCRBYFLOAT", "n", "0.25"}).is_error());
  CHECK(client.command({"STRLEN", "n"}).integer == 7);  // 1200.25
  CHECK(client.command({"STRLEN", "h"}).is_error());    // WRONGTYPE, as Redis
  // The fold adds an integer sub-key onto a key holding a fraction (INCRBY would refuse).
  REQUIRE(client.command({"SANTRAL", "UNSALT", "n"}).is_ok());
  CHECK(client.command({"GET", "n"}).str == "1200.25");
}

TEST_CASE("unsalting a salted hash while 10 clients HINCRBY loses no increment") {
  Cluster cluster(4, "workers: 2\n");
  auto admin = cluster.client();
  REQUIRE(admin.command({"SANTRAL", "SALT", "tally", "4"}).is_ok());
  constexpr int kClients = 10;
  constexpr int kPerClient = 2000;
  std::atomic<long long> acknowledged{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  threads.reserve(kClients);
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      try {
        auto client = cluster.client();
        for (int sent = 0; sent < kPerClient; sent += 10) {
          for (int i = 0; i < 10; ++i) {
            client.append({"HINCRBY", "tally", "up", "1"});
            client.append({"HINCRBY", "tally", "down", "-2"});
          }
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
  while (acknowledged < kTotal / 2) std::this_thread::yield();
  auto unsalted = admin.command({"SANTRAL", "UNSALT", "tally"});
  long long at_unsalt = acknowledged;
  for (auto& t : threads) t.join();
  INFO(unsalted.str);
  CHECK(unsalted.is_ok());
  CHECK(at_unsalt < 2 * kTotal);  // the fold really raced with writes
  CHECK(failed == 0);
  CHECK(admin.command({"HGET", "tally", "up"}).str == std::to_string(kTotal));
  CHECK(admin.command({"HGET", "tally", "down"}).str == std::to_string(-2 * kTotal));
  CHECK(keys_on_all(cluster) == 1);
}

TEST_CASE("every salted counter is listed, hot or not, after the hottest keys") {
  int admin_port = free_loopback_port();
  Cluster cluster(3,
                  "workers: 2\n"
                  "admin:\n"
                  "  listen: 127.0.0.1:" +
                      std::to_string(admin_port) +
                      "\n"
                      "hotkeys:\n"
                      "  sample_every: 1\n"
                      "salting:\n"
                      "  - key: quiet:config\n"
                      "    salts: 2\n");
  auto client = cluster.client();
  REQUIRE(client.command({"SANTRAL", "SALT", "quiet:command", "3"}).is_ok());
  // Traffic on other keys only, more of them than are asked for.
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 10; ++i) client.append({"GET", "busy:" + std::to_string(i)});
    for (int i = 0; i < 10; ++i) REQUIRE(!client.get_reply().is_error());
  }

  auto hot = client.command({"SANTRAL", "HOTKEYS", "COUNT", "2"});
  REQUIRE(hot.type == Reply::Type::Array);
  REQUIRE(hot.elements.size() == 4);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(field(hot.elements[i], "key").starts_with("busy:"));
    CHECK(std::stod(field(hot.elements[i], "ops_per_sec")) > 0);
  }
  std::map<std::string, const Reply*> salted;
  for (std::size_t i = 2; i < 4; ++i) salted[field(hot.elements[i], "key")] = &hot.elements[i];
  REQUIRE(salted.contains("quiet:config"));
  REQUIRE(salted.contains("quiet:command"));
  CHECK(field(*salted["quiet:config"], "salted") == "2");
  CHECK(field(*salted["quiet:config"], "salted_by") == "config");
  CHECK(field(*salted["quiet:config"], "ops_per_sec") == "0.0");
  CHECK(field(*salted["quiet:config"], "shard") ==
        "shard" + std::to_string(cluster.owner("quiet:config")));
  CHECK(field(*salted["quiet:command"], "salted") == "3");
  CHECK(field(*salted["quiet:command"], "salted_by") == "command");

  // The admin API (the dashboard's hot-key list) lists them the same way, with their sub-keys.
  auto page = http_request(admin_port, "GET", "/hotkeys?count=2");
  REQUIRE(page.status == 200);
  auto keys = nlohmann::json::parse(page.body)["hotkeys"];
  REQUIRE(keys.size() == 4);
  std::map<std::string, nlohmann::json> listed;
  for (const auto& key : keys) listed[key["key"].get<std::string>()] = key;
  REQUIRE(listed.contains("quiet:config"));
  REQUIRE(listed.contains("quiet:command"));
  CHECK(listed["quiet:config"]["sub_keys"].size() == 2);
  CHECK(listed["quiet:command"]["sub_keys"].size() == 3);
  CHECK(listed["quiet:config"]["ops_per_sec"] == 0);
}

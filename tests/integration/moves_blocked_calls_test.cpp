// Blocked calls tell the truth across every switch of a move (approve, abort, the end of the
// walk): a consumer blocked in BLPOP or BLMOVE gets the element when the shard served it, or a
// retryable error when the command did not run. So across six moves back and forth between 3
// and 4 shards, with consumers on lists that move and lists that stay, no queue item is lost or
// delivered twice, and no BLMOVE is applied without its client being told.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

constexpr int kItems = 3000;
constexpr int kConsumers = 8;
constexpr int kFiller = 3000;  // a quarter move: each walk lasts about 0.75 s

const std::string kSettings =
    "watch_file: false\n"
    "resharding: {max_keys_per_sec: 1000, batch_keys: 20}\n";

ShardMap map_of(const SantralProcess& santral) {
  return ShardMap(santral::config::load_config(santral.config_path()));
}

bool owner_changes(const ShardMap& from, const ShardMap& to, const std::string& key) {
  return from.shard(from.shard_for_key(key)).address.text() !=
         to.shard(to.shard_for_key(key)).address.text();
}

// `count` names "<prefix>N<suffix>" that move between the maps and `count` that do not.
std::vector<std::string> moving_and_staying(const ShardMap& three, const ShardMap& four,
                                            const std::string& prefix, const std::string& suffix,
                                            std::size_t count) {
  std::vector<std::string> moving, staying;
  for (int n = 0; moving.size() < count || staying.size() < count; ++n) {
    std::string name = prefix + std::to_string(n) + suffix;
    auto& list = owner_changes(three, four, name) ? moving : staying;
    if (list.size() < count) list.push_back(name);
  }
  moving.insert(moving.end(), staying.begin(), staying.end());
  return moving;
}

// 3 shards and a 4th that six moves add and take away, alternately ending and aborted, with
// Santral in front; `push` is called before each approve and each abort, right before the
// switch, so that consumers are busy at that moment.
class MovesBackAndForth {
 public:
  MovesBackAndForth() {
    old_yaml_ = shards_yaml({&a_, &b_, &c_}) + kSettings;
    new_yaml_ = shards_yaml({&a_, &b_, &c_, &d_}) + kSettings;
    santral_ = std::make_unique<SantralProcess>(old_yaml_);
    three_ = std::make_unique<ShardMap>(map_of(*santral_));
    rewrite(*santral_, new_yaml_);
    four_ = std::make_unique<ShardMap>(map_of(*santral_));
    rewrite(*santral_, old_yaml_);
    auto client = santral_->client();
    // Filler keys make each walk last a moment, so that an abort comes while keys move.
    for (int i = 0; i < kFiller; ++i) client.append({"SET", "filler:" + std::to_string(i), "x"});
    for (int i = 0; i < kFiller; ++i) REQUIRE(client.get_reply().is_ok());
  }

  const ShardMap& three() const { return *three_; }
  const ShardMap& four() const { return *four_; }
  SantralProcess& santral() { return *santral_; }
  std::vector<RedisServer*> shards() { return {&a_, &b_, &c_, &d_}; }
  std::string log() const { return santral_->log(); }

  // Runs the six moves, calling `push(n)` right before the n-th switch (of 9). Returns the
  // number of switches.
  int run(const std::function<void(int)>& push) {
    auto client = santral_->client(60000);
    bool four_in_force = false;
    int switches = 0;
    for (int move = 0; move < 6; ++move) {
      bool to_four = !four_in_force;
      bool abort = move % 2 == 1;
      rewrite(*santral_, to_four ? new_yaml_ : old_yaml_);
      auto reload = client.command({"SANTRAL", "RELOAD"});
      INFO("move " << move << ": " << reload.str);
      REQUIRE(reload.str.find("planned") != std::string::npos);
      push(switches++);
      REQUIRE(client.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
      if (abort) {
        push(switches++);
        auto aborted = client.command({"SANTRAL", "RESHARD", "ABORT"});
        INFO("ABORT: " << aborted.str);
        REQUIRE(aborted.is_ok());
      }
      REQUIRE(wait_for_state(client, "idle"));
      if (!abort) four_in_force = to_four;
    }
    four_in_force_ = four_in_force;
    return switches;
  }

  // The map in force after run().
  const ShardMap& in_force() const { return four_in_force_ ? *four_ : *three_; }

 private:
  RedisServer a_, b_, c_, d_;
  std::string old_yaml_, new_yaml_;
  std::unique_ptr<SantralProcess> santral_;
  std::unique_ptr<ShardMap> three_, four_;
  bool four_in_force_ = false;
};

constexpr int kSwitches = 9;  // 6 approves and 3 aborts

// What the consumers got: each item's deliveries, and the replies that were neither.
struct Deliveries {
  std::mutex mutex;
  std::map<std::string, int> received;
  std::atomic<long> retried{0};  // TRYAGAIN: the command did not run
  std::atomic<long> unknown{0};  // the connection failed or timed out: it may have run
  std::atomic<long> other_errors{0};
  std::string first_error;  // the first of the other errors, for the message
  void error(const std::string& text) {
    std::lock_guard lock(mutex);
    if (other_errors++ == 0) first_error = text;
  }
  void got(const std::string& item) {
    std::lock_guard lock(mutex);
    ++received[item];
  }
};

// Runs `call` on its own connection until stopped; it returns the item it got ("" for none).
// An error reply beginning with TRYAGAIN is retried; another error counts.
class Consumers {
 public:
  using Call = std::function<Reply(RedisClient&, int consumer)>;
  using Item = std::function<std::string(const Reply&)>;
  Consumers(int port, Deliveries& deliveries, Call call, Item item) {
    for (int t = 0; t < kConsumers; ++t)
      threads_.emplace_back([this, port, t, &deliveries, call, item] {
        std::unique_ptr<RedisClient> client;
        while (!stop_) {
          try {
            if (!client) client = std::make_unique<RedisClient>(port, 5000);
            auto reply = call(*client, t);
            if (reply.is_error()) {
              if (reply.str.rfind("TRYAGAIN", 0) == 0)
                ++deliveries.retried;
              else
                deliveries.error(reply.str);
              continue;
            }
            auto got = item(reply);
            if (!got.empty()) deliveries.got(got);
          } catch (const std::exception&) {
            ++deliveries.unknown;
            client.reset();
          }
        }
      });
  }
  ~Consumers() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// What `lists` hold, read through Santral: each item with how many times it is there.
std::map<std::string, int> held(RedisClient& client, const std::vector<std::string>& lists) {
  std::map<std::string, int> out;
  for (const auto& list : lists)
    for (const auto& e : client.command({"LRANGE", list, "0", "-1"}).elements) ++out[e.str];
  return out;
}

// Every key on the shards is there once, on its owner in `map`.
void check_placed(const std::vector<RedisServer*>& shards, const ShardMap& map) {
  for (const auto& [key, on] : where(shards)) {
    INFO(key);
    REQUIRE(on.size() == 1);
    REQUIRE(map.shard(map.shard_for_key(key)).address.port == shards[on[0]]->port());
  }
}

// Pushes items begin..end-1 (pipelined) into `lists`, item i into lists[i % size].
void push_items(RedisClient& producer, const std::vector<std::string>& lists, int begin, int end) {
  for (int i = begin; i < end; ++i)
    producer.append({"LPUSH", lists[i % lists.size()], "item:" + std::to_string(i)});
  for (int i = begin; i < end; ++i) REQUIRE(producer.get_reply().type == Reply::Type::Integer);
}

}  // namespace

TEST_CASE("BLPOP consumers across six moves: no item lost or delivered twice") {
  MovesBackAndForth cycle;
  // Three lists that move with the 4th shard, three that stay where they are.
  auto lists = moving_and_staying(cycle.three(), cycle.four(), "queue:", "", 3);
  Deliveries deliveries;
  Consumers consumers(
      cycle.santral().port(), deliveries,
      [&](RedisClient& client, int t) {
        return client.command({"BLPOP", lists[t % lists.size()], "1"});
      },
      [](const Reply& reply) {
        return reply.type == Reply::Type::Array ? reply.elements.at(1).str : std::string();
      });
  auto producer = cycle.santral().client();
  int pushed = 0;
  int switches = cycle.run([&](int n) {
    int next = n + 1 == kSwitches ? kItems : (n + 1) * (kItems / kSwitches);
    push_items(producer, lists, pushed, next);
    pushed = next;
  });
  REQUIRE(switches == kSwitches);
  REQUIRE(pushed == kItems);
  // Consumers take what is left, then stop.
  REQUIRE(wait_until(
      [&] {
        for (const auto& list : lists)
          if (producer.command({"LLEN", list}).integer != 0) return false;
        return true;
      },
      20000));
  consumers.stop();

  auto left = held(producer, lists);
  int lost = 0, twice = 0;
  std::string examples;
  for (int i = 0; i < kItems; ++i) {
    std::string item = "item:" + std::to_string(i);
    int seen = deliveries.received[item] + left[item];
    if (seen == 0) ++lost;
    if (seen > 1) ++twice;
    if (seen != 1 && examples.size() < 200)
      examples += " " + item + " (" + lists[i % lists.size()] + ") x" + std::to_string(seen);
  }
  INFO(lost << " of " << kItems << " items lost, " << twice << " delivered twice; "
            << deliveries.retried << " TRYAGAIN retried, " << deliveries.unknown
            << " calls with an unknown outcome, " << deliveries.other_errors << " other errors ("
            << deliveries.first_error << "); e.g." << examples);
  // A call whose connection failed may have taken an item no one saw; none should fail.
  CHECK(lost <= deliveries.unknown);
  CHECK(twice == 0);
  CHECK(deliveries.other_errors == 0);
  check_placed(cycle.shards(), cycle.in_force());
}

TEST_CASE("BLMOVE consumers across six moves: each item moved once, and its client told") {
  MovesBackAndForth cycle;
  // A source and a destination list per queue, sharing a tag (so a shard); three queues move.
  auto tags = moving_and_staying(cycle.three(), cycle.four(), "{jobs", "}", 3);
  std::vector<std::string> todo, done;
  for (const auto& tag : tags) {
    todo.push_back(tag + ":todo");
    done.push_back(tag + ":done");
  }
  Deliveries deliveries;
  Consumers consumers(
      cycle.santral().port(), deliveries,
      [&](RedisClient& client, int t) {
        auto q = t % tags.size();
        return client.command({"BLMOVE", todo[q], done[q], "RIGHT", "LEFT", "1"});
      },
      [](const Reply& reply) {
        return reply.type == Reply::Type::String ? reply.str : std::string();
      });
  auto producer = cycle.santral().client();
  int pushed = 0;
  int switches = cycle.run([&](int n) {
    int next = n + 1 == kSwitches ? kItems : (n + 1) * (kItems / kSwitches);
    push_items(producer, todo, pushed, next);
    pushed = next;
  });
  REQUIRE(switches == kSwitches);
  REQUIRE(wait_until(
      [&] {
        for (const auto& list : todo)
          if (producer.command({"LLEN", list}).integer != 0) return false;
        return true;
      },
      20000));
  consumers.stop();

  auto in_done = held(producer, done);
  auto in_todo = held(producer, todo);
  int lost = 0, twice = 0, untold = 0;
  std::string examples;
  for (int i = 0; i < kItems; ++i) {
    std::string item = "item:" + std::to_string(i);
    int seen = in_done[item] + in_todo[item];
    if (seen == 0) ++lost;
    if (seen > 1 || deliveries.received[item] > 1) ++twice;
    // Moved, but no client was told: its consumer was told to retry, and moved another.
    if (in_done[item] != deliveries.received[item]) ++untold;
    if ((seen != 1 || in_done[item] != deliveries.received[item]) && examples.size() < 200)
      examples += " " + item + " done x" + std::to_string(in_done[item]) + " told x" +
                  std::to_string(deliveries.received[item]);
  }
  INFO(lost << " of " << kItems << " items lost, " << twice << " twice, " << untold
            << " moved without their client being told; " << deliveries.retried
            << " TRYAGAIN retried, " << deliveries.unknown << " calls with an unknown outcome, "
            << deliveries.other_errors << " other errors (" << deliveries.first_error << "); e.g."
            << examples);
  CHECK(lost == 0);
  CHECK(twice == 0);
  CHECK(untold <= deliveries.unknown);
  CHECK(deliveries.other_errors == 0);
  check_placed(cycle.shards(), cycle.in_force());
}

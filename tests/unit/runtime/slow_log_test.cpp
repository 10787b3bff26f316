#include "router/runtime/slow_log.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "protocol/resp_writer.h"

using namespace santral::router;
using namespace std::chrono_literals;

namespace {

std::string shard_name(std::size_t shard) {
  return "shard" + std::to_string(shard);
}

std::string entry_resp(const SlowEntry& entry) {
  std::string out;
  santral::protocol::RespWriter writer(out);
  write_slow_entry(writer, entry);
  return out;
}

}  // namespace

TEST_CASE("slow_args keeps 32 arguments and 128 bytes of each, as Redis's SLOWLOG") {
  std::vector<std::string> owned = {"DEL", std::string(130, 'k')};
  for (int i = 0; i < 38; ++i) owned.push_back("key" + std::to_string(i));
  std::vector<std::string_view> args(owned.begin(), owned.end());
  SlowArgs kept;
  slow_args(args, kept);
  SlowEntry entry;
  entry.args.assign(kept.begin(), kept.end());
  entry.measure = "santral: answered by Santral";
  auto resp = entry_resp(entry);
  CHECK(resp.find("*33\r\n$3\r\nDEL\r\n") != std::string::npos);  // 32 and the measure
  CHECK(resp.find(std::string(128, 'k') + "... (2 more bytes)\r\n") != std::string::npos);
  CHECK(resp.find("$5\r\nkey28\r\n") != std::string::npos);  // the 31st argument
  CHECK(resp.find("$5\r\nkey29\r\n") == std::string::npos);
  CHECK(resp.find("... (9 more arguments)") != std::string::npos);
}

TEST_CASE("passwords are kept as \"(redacted)\", as Redis 7.0's SLOWLOG does") {
  auto logged = [](std::vector<std::string_view> args) {
    SlowArgs kept;
    slow_args(args, kept);
    SlowEntry entry;
    entry.args.assign(kept.begin(), kept.end());
    return entry_resp(entry);
  };
  auto auth = logged({"AUTH", "alice", "secret-1"});
  CHECK(auth.find("secret-1") == std::string::npos);
  CHECK(auth.find("alice") == std::string::npos);
  CHECK(auth.find("$4\r\nAUTH\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n") != std::string::npos);
  auto hello = logged({"HELLO", "3", "AUTH", "bob", "secret-2", "SETNAME", "app"});
  CHECK(hello.find("secret-2") == std::string::npos);
  CHECK(hello.find("$7\r\nSETNAME\r\n$3\r\napp\r\n") != std::string::npos);
  auto migrate = logged(
      {"MIGRATE", "127.0.0.1", "6379", "", "0", "1000", "AUTH2", "carol", "secret-3", "KEYS", "k"});
  CHECK(migrate.find("secret-3") == std::string::npos);
  CHECK(migrate.find("carol") == std::string::npos);
  CHECK(migrate.find("$4\r\nKEYS\r\n$1\r\nk\r\n") != std::string::npos);
  CHECK(logged({"GET", "AUTH"}).find("$4\r\nAUTH\r\n") != std::string::npos);
}

TEST_CASE("a short command's arguments stay within the trace: no allocation per request") {
  std::vector<std::string_view> get = {"GET", "key:000000012345"};
  SlowArgs kept;
  slow_args(get, kept);
  CHECK(kept.size() == 21);
  CHECK(kept.capacity() == SlowArgs().capacity());  // still the inline buffer
  std::vector<std::string_view> set = {"SET", "key:000000012345", "xxx"};
  slow_args(set, kept);
  CHECK(kept.size() == 25);
  CHECK(kept.capacity() == SlowArgs().capacity());
}

TEST_CASE("slow_measure names each shard, slowest first, then the time queued in Santral") {
  SlowTrace trace;
  trace.shards.push_back({0, 0us, 1200us});
  trace.shards.push_back({2, 0us, 500000us});
  trace.shards.push_back({0, 0us, 1500us});  // two fragments on shard0: the longer one counts
  CHECK(slow_measure(trace, shard_name) == "santral: shard2 waited 500000us, shard0 waited 1500us");

  SlowTrace held;
  held.shards.push_back({1, 800000us, 300us});
  held.queued = 20000us;
  held.queued_behind_pull = true;
  CHECK(slow_measure(held, shard_name) ==
        "santral: shard1 waited 300us after 800000us held for a failover, queued 20000us "
        "behind a pull of its keys");

  CHECK(slow_measure(SlowTrace{}, shard_name) == "santral: answered by Santral");
}

TEST_CASE("SlowLog keeps the newest max_len entries, newest first") {
  SlowLog log;
  for (std::uint64_t id = 1; id <= 5; ++id) {
    SlowEntry entry;
    entry.id = id;
    log.add(entry, 3);
  }
  CHECK(log.size() == 3);
  auto newest = log.newest(10);
  REQUIRE(newest.size() == 3);
  CHECK(newest[0].id == 5);
  CHECK(newest[2].id == 3);
  CHECK(log.newest(1).front().id == 5);
  log.reset();
  CHECK(log.size() == 0);
}

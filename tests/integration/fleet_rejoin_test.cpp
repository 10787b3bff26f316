// What a router that was away must not do when it comes back (findings F4 and F11 of
// ../shared/findings/moves-and-fleet.md, both failing on ba49e3c):
// - F4: a router frozen while the fleet finished a move and then took a map change that moves
//   nothing serves the map etcd holds when it wakes, not its pre-move map (which it once
//   refused to leave: the later map "gave keys new owners without a move" compared with it);
// - F11: the rest of a batch only partly written to a shard (the shard stopped reading) is not
//   written after the router wakes past its lease: the fence is checked before every write
//   system call, not once per batch.
// Real etcd, real redis-server shards, real Santral processes.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/etcd_cluster.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

// How many routers `asker` lists in SANTRAL ROUTERS.
std::size_t routers_listed(const SantralProcess& asker) {
  return asker.client().command({"SANTRAL", "ROUTERS"}).elements.size();
}

// Bytes `fd` has sent that its peer's kernel has not acknowledged.
int unsent_bytes(int fd) {
  int bytes = -1;
  ::ioctl(fd, SIOCOUTQ, &bytes);
  return bytes;
}

// Bytes the kernel holds, unread by the process, on the side at `port` of `client`'s connection
// (rx_queue in /proc/net/tcp); -1 when no such socket is listed.
long long unread_bytes(int port, const RawConnection& client) {
  sockaddr_in own{};
  socklen_t size = sizeof own;
  ::getsockname(client.fd(), reinterpret_cast<sockaddr*>(&own), &size);
  char local[32];
  char remote[32];
  std::snprintf(local, sizeof local, "0100007F:%04X", port);
  std::snprintf(remote, sizeof remote, "0100007F:%04X", ntohs(own.sin_port));
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the heading
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, from, to, state, queues;
    fields >> slot >> from >> to >> state >> queues;
    if (from == local && to == remote)
      return std::stoll(queues.substr(queues.find(':') + 1), nullptr, 16);
  }
  return -1;
}

long long map_version(const SantralProcess& router) {
  auto reply = router.client().command({"SANTRAL", "SHARDMAP"});
  return std::stoll(reply.str.substr(reply.str.find(':') + 1));
}

long long dbsize(const RedisServer& shard) {
  return shard.client().command({"DBSIZE"}).integer;
}

}  // namespace

TEST_CASE("F4: a router back from an outage serves etcd's map, not its pre-move map") {
  EtcdCluster etcd(1);
  RedisServer a, b, c;
  std::string cluster = etcd.cluster_yaml("f4", "  lease_ttl_s: 2\n");
  SantralProcess pusher(SantralProcess::config_for({&a, &b}, cluster));
  SantralProcess away(SantralProcess::config_for({&a, &b}, cluster));
  REQUIRE(wait_until([&] { return routers_listed(pusher) == 2; }, 5000));
  auto writer = pusher.client();
  constexpr int kKeys = 300;
  for (int i = 0; i < kKeys; ++i)
    REQUIRE(writer.command({"SET", "k" + std::to_string(i), "v" + std::to_string(i)}).is_ok());

  away.process().pause();
  REQUIRE(wait_until([&] { return routers_listed(pusher) == 1; }, 10000));
  // The fleet grows without it: a move to c, finished...
  plan_move(writer, SantralProcess::config_for({&a, &b, &c}, ""));
  REQUIRE(writer.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_until([&] { return reshard_status(writer)["state"] == "idle"; }, 30000));
  REQUIRE(dbsize(c) > 0);
  // ... then a change that moves nothing overwrites the map the move ended with.
  long long before = map_version(pusher);
  auto changed = push_map(writer, SantralProcess::config_for({&a, &b, &c}, "databases: 4\n"),
                          [&] { return map_version(pusher) > before; });
  INFO(changed);
  REQUIRE(wait_until([&] { return map_version(pusher) > before; }, 5000));
  long long version = map_version(pusher);

  away.process().resume();
  // It serves again only on the version etcd holds, and finds every key where it is.
  CHECK(wait_until(
      [&] {
        return away.client().command({"GET", "k0"}).str == "v0" && map_version(away) == version;
      },
      15000));
  INFO("router log:\n" << away.log());
  auto reader = away.client();
  int wrong = 0;
  std::string first_wrong;
  for (int i = 0; i < kKeys; ++i) {
    auto got = reader.command({"GET", "k" + std::to_string(i)});
    if (got.str == "v" + std::to_string(i)) continue;
    if (wrong++ == 0) first_wrong = "k" + std::to_string(i) + ": " + got.str;
  }
  INFO("the first wrong read: " << first_wrong);
  CHECK(wrong == 0);
  // And writes land where the fleet reads them.
  for (int i = 0; i < kKeys; i += 10)
    REQUIRE(reader.command({"SET", "k" + std::to_string(i), "w"}).is_ok());
  for (int i = 0; i < kKeys; i += 10)
    CHECK(writer.command({"GET", "k" + std::to_string(i)}).str == "w");
  CHECK(dbsize(a) + dbsize(b) + dbsize(c) == kKeys);
}

TEST_CASE("F11: the rest of a partly written batch does not reach the shard after the lease") {
  EtcdCluster etcd(1);
  RedisServer shard;
  // Long request and health timeouts: nothing but the fence may stop the batch.
  std::string cluster = etcd.cluster_yaml("f11", "  lease_ttl_s: 2\n") +
                        "timeouts:\n  request_ms: 120000\nhealth:\n  interval_ms: 120000\n";
  SantralProcess frozen(SantralProcess::config_for({&shard}, cluster));
  SantralProcess other(SantralProcess::config_for({&shard}, cluster));
  REQUIRE(wait_until([&] { return routers_listed(other) == 2; }, 5000));
  REQUIRE(frozen.client().command({"SET", "warm", "1"}).is_ok());

  // The shard stops reading; a pipeline of 400 SETs of 64 KB each (25 MB, far more than the
  // kernel's buffers hold) goes to the router, which writes what the socket takes.
  shard.pause();
  constexpr int kSets = 400;
  std::string value(64 * 1024, 'x');
  std::string batch;
  for (int i = 0; i < kSets; ++i) {
    std::string key = "big:" + std::to_string(i);
    batch += "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$" +
             std::to_string(value.size()) + "\r\n" + value + "\r\n";
  }
  auto client = std::make_unique<RawConnection>(frozen.port());
  std::string_view rest = batch;
  while (!rest.empty()) {
    rest.remove_prefix(client->try_send(rest));
    pollfd writable{client->fd(), POLLOUT, 0};
    if (!rest.empty()) REQUIRE(::poll(&writable, 1, 20000) == 1);
  }
  // The router has read the whole pipeline (it reads up to limits.max_pending_requests, far
  // more than 400) before it freezes: bytes still in its socket would be new work read after
  // it woke and joined again, which it may rightly run.
  REQUIRE(wait_until(
      [&] { return unsent_bytes(client->fd()) == 0 && unread_bytes(frozen.port(), *client) == 0; },
      20000));

  frozen.process().pause();  // in the middle of the batch
  REQUIRE(wait_until([&] { return routers_listed(other) == 1; }, 10000));  // its lease is gone
  shard.resume();
  // What the kernel held reaches the shard; then nothing more arrives (the count stays the
  // same over a second, three looks apart: a loaded machine may pause the shard briefly).
  long long landed = -1;
  int same = 0;
  REQUIRE(wait_until(
      [&] {
        long long now = dbsize(shard);
        same = now == landed ? same + 1 : 0;
        landed = now;
        if (same == 3) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return false;
      },
      20000));
  INFO(landed - 1 << " of " << kSets << " SETs were in the kernel's buffers");
  REQUIRE(landed - 1 < kSets);

  // The client gives up (a reset): what the router had not read yet is gone with it, so that
  // only what it had queued for the shard before it froze could still reach the shard.
  linger reset{1, 0};
  ::setsockopt(client->fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  client.reset();
  frozen.process().resume();
  // Awake past its lease, the router writes none of the rest, and joins the fleet again.
  REQUIRE(wait_until([&] { return routers_listed(other) == 2; }, 15000));
  REQUIRE(wait_until([&] { return frozen.client().command({"PING"}).str == "PONG"; }, 15000));
  INFO("router log:\n" << frozen.log());
  CHECK(dbsize(shard) == landed);
  // And it serves again: the connection it gave up on at its wake (the rest of the batch never
  // written) is proven over by CLIENT KILL ID, which the fence must let through while the
  // router rejoins (the rejoin waits for that proof; a fenced kill waited for the rejoin).
  CHECK(wait_until([&] { return frozen.client().command({"SET", "after", "1"}).is_ok(); }, 20000));
  CHECK(shard.client().command({"GET", "after"}).str == "1");
}

// Issue 26, the loss a 10-minute `fence: acl` chaos run found (seed 966762): a router approved
// the next move through its own ledger write before its next read of etcd brought the map that
// move starts from (the end of the move before it). It switched to the new move's epoch, then
// took that map as a plain map over the move's topology: for the rest of the move it read the
// keys the move carried away on their old shard (nil) and wrote beside them, where the end of
// the move hid the writes. The router reads etcd only every 10 s here, so that its APPROVE
// lands before that read; the walk is slowed so that the move lasts.
TEST_CASE(
    "a router that approves a move from a map it has not read yet serves the move, "
    "not that map") {
  EtcdCluster etcd(1);
  RedisServer a, b, c;
  const std::string shared = "resharding: {max_keys_per_sec: 40, batch_keys: 5}\n";
  SantralProcess quick(SantralProcess::config_for(
      {&a, &b}, etcd.cluster_yaml("late", "  lease_ttl_s: 4\n") + shared));
  SantralProcess slow(SantralProcess::config_for(
      {&a, &b}, etcd.cluster_yaml("late", "  lease_ttl_s: 4\n  poll_ms: 10000\n") + shared));
  REQUIRE(wait_until([&] { return routers_listed(quick) == 2; }, 15000));
  auto writer = quick.client();
  constexpr int kKeys = 200;
  for (int i = 0; i < kKeys; ++i)
    REQUIRE(writer.command({"SET", "k" + std::to_string(i), "v" + std::to_string(i)}).is_ok());

  // The first move (c joins) ends; the slow router has not read its end yet when...
  plan_move(writer, SantralProcess::config_for({&a, &b, &c}, shared));
  REQUIRE(writer.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_until([&] { return reshard_status(writer)["state"] == "idle"; }, 60000));
  auto moved = c.client().command({"KEYS", "*"});
  REQUIRE(moved.elements.size() > 10);
  // ... the next (c leaves) is proposed through one router and approved through it.
  plan_move(writer, SantralProcess::config_for({&a, &b}, shared));
  auto reader = slow.client(60000);  // a request may wait for the move's switch
  REQUIRE(reader.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());

  // While that move lasts, the keys it carries away from c read through the slow router as
  // they were written, and what it writes to them is where the fleet reads it afterwards.
  std::map<std::string, std::string> expected;
  for (const auto& key : moved.elements) expected[key.str] = "v" + key.str.substr(1);
  int rounds = 0, wrong = 0, written = 0;
  std::string first_wrong;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto read = [&](const std::string& key) {
    for (;;) {
      auto got = reader.command({"GET", key});
      if (!got.str.starts_with("TRYAGAIN") || std::chrono::steady_clock::now() > deadline)
        return got;
    }
  };
  bool ended = false;
  while (!(ended = reshard_status(writer)["state"] == "idle") &&
         std::chrono::steady_clock::now() < deadline) {
    ++rounds;
    for (auto& [key, value] : expected) {
      auto got = read(key);
      if (got.str != value && wrong++ == 0)
        first_wrong = key + ": " + (got.is_nil() ? "nil" : got.str) + " (" + value + " written)";
      if ((written++ % 7) == 0) {
        std::string next = "r" + std::to_string(rounds) + key;
        if (reader.command({"SET", key, next}).is_ok()) value = next;
      }
    }
  }
  INFO("the slow router's log:\n" << slow.log());
  INFO("rounds of reads during the move: " << rounds << "; the first wrong read: " << first_wrong);
  REQUIRE(ended);  // before the fix, the slow router's walk of c did not end either
  CHECK(rounds > 0);
  CHECK(wrong == 0);
  for (const auto& [key, value] : expected) CHECK(writer.command({"GET", key}).str == value);
  CHECK(dbsize(c) == 0);
  CHECK(dbsize(a) + dbsize(b) == kKeys);
}

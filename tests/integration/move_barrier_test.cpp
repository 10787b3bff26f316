// The switch of a move waits for every connection that may still carry a request routed the
// old way (finding F7), not only the shared ones: here a transaction's EXEC goes out on a
// connection lent for it and given back before its reply, and that connection's bytes are held
// on the way to the shard (the fault proxy holds that one new connection). Until the EXEC has
// run on the old owner, no key may be pulled away from it; else the EXEC lands on the old
// owner after the move and its acknowledged write is lost (left behind on a shard that no
// longer owns the key).
#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

using santral::placement::ShardMap;

// s0 and s1 through the proxy; with `added`, s2 straight.
std::string shards_through(const FaultProxy& proxy, const RedisServer* added) {
  std::string yaml = "shards:\n";
  yaml += "  - {name: s0, address: 127.0.0.1:" + std::to_string(proxy.port("s0")) + "}\n";
  yaml += "  - {name: s1, address: 127.0.0.1:" + std::to_string(proxy.port("s1")) + "}\n";
  if (added != nullptr) yaml += "  - {name: s2, address: " + added->address() + "}\n";
  return yaml;
}

}  // namespace

TEST_CASE("a move's switch waits for an EXEC on a given-back connection: its write is kept") {
  RedisServer a, b, c;
  FaultProxy proxy({{"s0", a.port()}, {"s1", b.port()}});
  const std::string settings = "watch_file: false\ntimeouts: {request_ms: 10000}\n";
  SantralProcess santral(shards_through(proxy, nullptr) + settings);
  auto admin = santral.client();
  rewrite(santral, shards_through(proxy, &c) + settings);
  ShardMap to(santral::config::load_config(santral.config_path()));
  rewrite(santral, shards_through(proxy, nullptr) + settings);
  ShardMap from(santral::config::load_config(santral.config_path()));

  // A key that leaves s0 for s2, and keys for the walk to move meanwhile.
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    std::string k = "reg:" + std::to_string(i);
    if (from.shard(from.shard_for_key(k)).name == "s0" &&
        to.shard(to.shard_for_key(k)).name == "s2")
      key = k;
  }
  REQUIRE(admin.command({"SET", key, "before"}).is_ok());
  for (int i = 0; i < 200; ++i) admin.append({"SET", "filler:" + std::to_string(i), "x"});
  for (int i = 0; i < 200; ++i) REQUIRE(admin.get_reply().is_ok());

  // The transaction's connection is the next new one to s0: its bytes are held.
  int before = proxy.accepted("s0");
  proxy.fault("s0", "stall-next 1");
  Reply exec;
  std::thread transaction([&] {
    RedisClient client(santral.port(), 30000);
    client.append({"MULTI"});
    client.append({"SET", key, "in-exec"});
    client.append({"EXEC"});
    client.get_reply();
    client.get_reply();
    exec = client.get_reply();
  });
  REQUIRE(wait_until([&] { return proxy.accepted("s0") > before; }, 5000));

  rewrite(santral, shards_through(proxy, &c) + settings);
  auto reload = admin.command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  REQUIRE(reload.str.find("planned") != std::string::npos);
  REQUIRE(admin.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  // Old way: the move could end while the EXEC is held. The switch must wait for it instead.
  bool ended_while_held = wait_for_state(admin, "idle", 2000);
  proxy.fault("s0", "pass");
  transaction.join();
  INFO("EXEC answered: " << exec.str);
  REQUIRE(exec.type == Reply::Type::Array);
  REQUIRE(wait_for_state(admin, "idle", 30000));
  CHECK_FALSE(ended_while_held);
  // The acknowledged EXEC is what the key holds, on its new owner alone.
  CHECK(admin.command({"GET", key}).str == "in-exec");
  std::vector<RedisServer*> shards = {&a, &b, &c};
  auto places = where(shards);
  REQUIRE(places.count(key) == 1);
  CHECK(places[key] == std::vector<std::size_t>{2});
}

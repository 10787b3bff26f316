// GET /livez and GET /readyz, as an orchestrator's probes see them: no token needed, 503 with a
// status and a reason while the router should not get clients (starting with a shard not
// reached yet, back from a freeze past its fleet lease until it has joined again, draining at
// SIGTERM), 200 once it should. At SIGTERM /readyz says 503 while the client listener still
// takes new clients, and the listener closes only after shutdown.ready_delay_ms.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/etcd_cluster.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

constexpr const char* kToken = "probe-test-token";

std::string admin_yaml(int port, const std::string& more = "") {
  return "admin:\n  listen: 127.0.0.1:" + std::to_string(port) + "\n  token: " + kToken + "\n" +
         more;
}

struct Probe {
  int status = 0;
  nlohmann::json body;
};

// GET `target` without a token, as Kubernetes asks.
Probe probe(int admin_port, const std::string& target) {
  auto response = http_request(admin_port, "GET", target);
  INFO(target << ": " << response.body);
  return {response.status, nlohmann::json::parse(response.body)};
}

// The probe's body says a status and, when it is not 200, a reason; nothing else.
void check_shape(const Probe& answer) {
  INFO(answer.body.dump());
  CHECK(answer.body.contains("status"));
  CHECK(answer.body.size() == (answer.status == 200 ? 1u : 2u));
  if (answer.status != 200) CHECK_FALSE(answer.body["reason"].get<std::string>().empty());
}

// `readyz` answered 200, polled until `timeout_ms`.
bool becomes_ready(int admin_port, int timeout_ms) {
  return wait_until([&] { return probe(admin_port, "/readyz").status == 200; }, timeout_ms);
}

}  // namespace

TEST_CASE("/readyz: 503 while a shard is not reached yet, 200 once every worker reaches it") {
  RedisServer a, b;
  b.kill();  // not up when Santral starts
  int admin_port = free_loopback_port();
  SantralProcess santral(SantralProcess::config_for({&a, &b}, admin_yaml(admin_port)),
                         {"--workers", "2"});

  // Until every worker has reached shard0 too, the reason may name it first: asked until it
  // names shard1, which stays down; starting all along.
  Probe starting;
  bool names_shard1 = wait_until(
      [&] {
        starting = probe(admin_port, "/readyz");
        REQUIRE(starting.status == 503);
        REQUIRE(starting.body["status"] == "starting");
        return starting.body["reason"].get<std::string>().find("shard1") != std::string::npos;
      },
      10000);
  INFO(starting.body.dump());
  CHECK(names_shard1);
  check_shape(starting);
  // Alive all along: its loops answer.
  auto live = probe(admin_port, "/livez");
  CHECK(live.status == 200);
  CHECK(live.body["status"] == "live");
  check_shape(live);

  b.restart();
  REQUIRE(becomes_ready(admin_port, 15000));
  auto ready = probe(admin_port, "/readyz");
  CHECK(ready.body["status"] == "ready");
  check_shape(ready);

  // Once it was ready, a shard lost is "shard_down", not "starting".
  b.kill();
  Probe down;
  REQUIRE(wait_until(
      [&] {
        down = probe(admin_port, "/readyz");
        return down.status == 503;
      },
      15000));
  CHECK(down.body["status"] == "shard_down");
  check_shape(down);

  // The probes need no token; every other page still does.
  CHECK(http_request(admin_port, "GET", "/shards").status == 401);
  CHECK(http_request(admin_port, "GET", "/shards", kToken).status == 200);
}

TEST_CASE(
    "at SIGTERM /readyz answers 503 while the client listener still accepts, then it closes") {
  RedisServer a;
  int admin_port = free_loopback_port();
  // Long enough that a loaded machine still connects within it after seeing the 503.
  SantralProcess santral(SantralProcess::config_for(
      {&a}, admin_yaml(admin_port, "shutdown: {ready_delay_ms: 8000}\n")));
  REQUIRE(becomes_ready(admin_port, 10000));
  auto before = santral.client();
  REQUIRE(before.command({"SET", "k", "v"}).is_ok());

  REQUIRE(::kill(santral.process().pid(), SIGTERM) == 0);
  Probe draining;
  REQUIRE(wait_until(
      [&] {
        draining = probe(admin_port, "/readyz");
        return draining.status == 503;
      },
      5000));
  CHECK(draining.body["status"] == "draining");
  check_shape(draining);
  CHECK(probe(admin_port, "/livez").status == 200);

  // The listener is still open: a new client connects and is served, and so is an old one.
  auto after = santral.client();
  CHECK(after.command({"GET", "k"}).str == "v");
  CHECK(before.command({"GET", "k"}).str == "v");

  // Then the listener closes and the process exits by itself.
  CHECK(wait_until([&] { return !answers_ping(santral.port()); }, 30000));
  int status = santral.process().wait(30000);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("fleet: a router frozen past its lease answers 503 on waking until it has joined again") {
  EtcdCluster etcd(1);
  RedisServer a, b;
  std::vector<int> admin_ports = {free_loopback_port(), free_loopback_port()};
  std::vector<std::unique_ptr<SantralProcess>> routers;
  for (int port : admin_ports)
    routers.push_back(std::make_unique<SantralProcess>(
        SantralProcess::config_for(
            {&a, &b}, etcd.cluster_yaml("probes", "  lease_ttl_s: 2\n") + admin_yaml(port)),
        std::vector<std::string>{"--workers", "2"}));
  for (int port : admin_ports) REQUIRE(becomes_ready(port, 15000));
  auto live_routers = [&] {
    auto reply = routers[0]->client().command({"SANTRAL", "ROUTERS"});
    return reply.elements.size();
  };
  REQUIRE(wait_until([&] { return live_routers() == 2; }, 10000));

  auto& frozen = *routers[1];
  frozen.process().pause();
  // Past its lease: etcd expired it, and the other router no longer lists it.
  REQUIRE(wait_until([&] { return live_routers() == 1; }, 15000));
  // Asked while it is frozen, so that this is the first thing its admin listener reads on
  // waking, before it can have talked to etcd.
  HttpExchange on_waking(admin_ports[1], "GET", "/readyz");
  frozen.process().resume();
  auto woke = on_waking.response();
  INFO(woke.body);
  CHECK(woke.status == 503);
  auto body = nlohmann::json::parse(woke.body);
  CHECK(body["status"] == "out_of_touch");
  check_shape({woke.status, body});

  // It joins again with a new lease, and is ready once it serves the fleet's map.
  CHECK(becomes_ready(admin_ports[1], 15000));
  CHECK(wait_until([&] { return live_routers() == 2; }, 10000));
  // The other router was ready all along.
  CHECK(probe(admin_ports[0], "/readyz").status == 200);
}

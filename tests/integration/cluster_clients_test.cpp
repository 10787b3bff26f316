// Redis Cluster clients through Santral's cluster endpoint, unchanged: redis-py's RedisCluster
// (Debian's python3-redis), ioredis's Cluster, node-redis's createCluster and valkey-glide's
// GlideClusterClient each run tests/clients/cluster's application (strings, hashes, lists,
// sorted sets, counters, a pipeline, MGET and a transaction within a hash tag, pub/sub, SCAN)
// against a fleet of 3 routers (real etcd) over 4 redis-server shards, and one router is killed
// while they run: every application ends with what it was told it wrote. Then the same
// applications, in their standalone form, against one router with the endpoint off.
// The npm packages are installed into tests/clients/node_modules (npm ci) when missing.
#include <catch2/catch.hpp>

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/etcd_cluster.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;

namespace {

const std::filesystem::path kClients = std::filesystem::path(SANTRAL_SOURCE_DIR) / "tests/clients";

void install_packages() {
  if (std::filesystem::exists(kClients / "node_modules/@valkey/valkey-glide") &&
      std::filesystem::exists(kClients / "node_modules/ioredis") &&
      std::filesystem::exists(kClients / "node_modules/redis"))
    return;
  std::string command = "cd '" + kClients.string() +
                        "' && npm ci --no-audit --no-fund --loglevel=error > /dev/null 2>&1";
  INFO("npm ci in tests/clients (the machine reaches the npm registry)");
  REQUIRE(std::system(command.c_str()) == 0);
}

struct App {
  std::string client;  // ioredis, node-redis, glide, redis-py
  std::unique_ptr<Process> process;
};

// Starts every client's application against `seeds` ("h:p,h:p").
std::vector<App> start_apps(const TempDir& dir, const std::string& mode, const std::string& seeds,
                            int seconds) {
  std::vector<App> apps;
  for (std::string client : {"ioredis", "node-redis", "glide", "redis-py"}) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "CLIENT=" + client,
                                     "MODE=" + mode,
                                     "SEEDS=" + seeds,
                                     "PREFIX=" + mode + "-" + client,
                                     "DURATION_S=" + std::to_string(seconds)};
    if (client == "redis-py") {
      argv.insert(argv.end(), {"/usr/bin/python3", (kClients / "cluster/app.py").string()});
    } else {
      argv.insert(argv.end(), {"node", (kClients / "cluster/app.mjs").string()});
    }
    auto log = (dir.path() / (mode + "-" + client + ".log")).string();
    apps.push_back({client, std::make_unique<Process>(argv, log)});
  }
  return apps;
}

void check_apps(std::vector<App>& apps) {
  for (auto& app : apps) {
    int status = app.process->wait(90000);
    std::string log = app.process->log();
    // The verdict lines first: a client library's own tracebacks can fill what CI shows.
    std::string verdicts;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("FAIL ") || line.starts_with("PASS ")) verdicts += line + "\n";
    INFO(app.client << " said:\n" << verdicts << "its whole output:\n" << log);
    CHECK(status == 0);
    CHECK(log.find("PASS " + app.client) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("cluster clients through a fleet of routers, one killed mid-run; standalone clients") {
  install_packages();
  EtcdCluster etcd(1);
  std::vector<std::unique_ptr<RedisServer>> shards;
  for (int i = 0; i < 4; ++i) shards.push_back(std::make_unique<RedisServer>());
  std::vector<const RedisServer*> list;
  for (const auto& s : shards) list.push_back(s.get());
  std::vector<std::unique_ptr<SantralProcess>> routers;
  for (int i = 0; i < 3; ++i)
    routers.push_back(std::make_unique<SantralProcess>(
        SantralProcess::config_for(
            list, etcd.cluster_yaml("clients", "  lease_ttl_s: 2\n") + "cluster_endpoint: true\n"),
        std::vector<std::string>{"--workers", "2"}));
  auto slots_listed = [&](const SantralProcess& router) {
    auto reply = router.client().command({"CLUSTER", "SLOTS"});
    return reply.elements.size();
  };
  REQUIRE(wait_until([&] { return slots_listed(*routers[0]) == 3; }, 10000));
  REQUIRE(wait_until([&] { return slots_listed(*routers[2]) == 3; }, 10000));
  // Every router reports the same split: the same node at the same slots.
  auto ranges = [](const SantralProcess& router) {
    std::string text;
    for (const auto& range : router.client().command({"CLUSTER", "SLOTS"}).elements)
      text += std::to_string(range.elements[0].integer) + "-" +
              std::to_string(range.elements[1].integer) + " " + range.elements[2].elements[2].str +
              " " + std::to_string(range.elements[2].elements[1].integer) + "\n";
    return text;
  };
  CHECK(ranges(*routers[0]) == ranges(*routers[2]));
  std::string seeds;
  for (const auto& router : routers)
    seeds +=
        (seeds.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(router->port());
  TempDir dir;
  auto apps = start_apps(dir, "cluster", seeds, 8);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  routers[1]->process().signal(SIGKILL);
  // Its lease runs out: the others stop listing it, with its slots split between them.
  CHECK(wait_until([&] { return slots_listed(*routers[0]) == 2; }, 10000));
  check_apps(apps);

  SantralProcess alone(SantralProcess::config_for(list), {"--workers", "2"});
  CHECK(alone.client()
            .command({"CLUSTER", "SLOTS"})
            .str.starts_with("ERR This instance has cluster support disabled"));
  auto standalone = start_apps(dir, "standalone", "127.0.0.1:" + std::to_string(alone.port()), 2);
  check_apps(standalone);
}

// A fleet of routers sharing one shard map in etcd: three real Santral processes over a
// three-member etcd (both on loopback). A map pushed through one router is served by all; a
// map etcd holds that does not validate is refused by every router alike; etcd losing a
// member or stopping altogether does not stop ordinary traffic.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "router/hotkeys/salting/salted_layout.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/free_port.h"
#include "tests/support/move_checks.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;
using Clock = std::chrono::steady_clock;

namespace {

// The map version a router serves, as SANTRAL SHARDMAP's first line says ("version:N").
long long map_version(const SantralProcess& router) {
  auto reply = router.client().command({"SANTRAL", "SHARDMAP"});
  REQUIRE(reply.type == Reply::Type::String);
  return std::stoll(reply.str.substr(reply.str.find(':') + 1));
}

// SANTRAL RESHARD STATUS's state, through `router`.
std::string reshard_state(const SantralProcess& router) {
  auto client = router.client();
  return reshard_status(client)["state"];
}

// SANTRAL ROUTERS: name -> map_version.
std::map<std::string, long long> routers_of(const SantralProcess& router) {
  auto reply = router.client().command({"SANTRAL", "ROUTERS"});
  REQUIRE(reply.type == Reply::Type::Array);
  std::map<std::string, long long> out;
  for (const auto& entry : reply.elements) {
    std::string name;
    long long version = -1;
    for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
      if (entry.elements[i].str == "name") name = entry.elements[i + 1].str;
      if (entry.elements[i].str == "map_version") version = entry.elements[i + 1].integer;
    }
    out[name] = version;
  }
  return out;
}

struct Fleet {
  explicit Fleet(int members = 3, const std::string& cluster_more = "  lease_ttl_s: 3\n",
                 bool peers_through_proxy = false)
      : etcd(members, peers_through_proxy) {
    for (int i = 0; i < 3; ++i)
      routers.push_back(std::make_unique<SantralProcess>(
          SantralProcess::config_for({&a, &b}, etcd.cluster_yaml("t", cluster_more)),
          std::vector<std::string>{"--workers", "2"}));
  }
  std::string router_address(int i) const {
    return "127.0.0.1:" + std::to_string(routers[i]->port());
  }
  // Every router serves `version`.
  bool all_serve(long long version) const {
    for (const auto& router : routers)
      if (map_version(*router) != version) return false;
    return true;
  }

  EtcdCluster etcd;
  RedisServer a, b;
  std::vector<std::unique_ptr<SantralProcess>> routers;
};

}  // namespace

TEST_CASE("fleet: the first router publishes its map and every router serves that version") {
  Fleet fleet;
  long long version = map_version(*fleet.routers[0]);
  CHECK(version > 1);  // an etcd revision, not a router's own count
  CHECK(fleet.all_serve(version));
  CHECK(fleet.routers[0]->log().find("etcd had no map; published") != std::string::npos);
  CHECK(fleet.routers[1]->log().find("serving the fleet's map version " +
                                     std::to_string(version)) != std::string::npos);
  // Every router is registered with its lease and its map version.
  REQUIRE(wait_until([&] { return routers_of(*fleet.routers[2]).size() == 3; }, 5000));
  for (const auto& [name, acked] : routers_of(*fleet.routers[2])) {
    CHECK(acked == version);
    CHECK(name.starts_with("127.0.0.1:"));
  }
  auto client = fleet.routers[0]->client();
  REQUIRE(client.command({"SET", "greeting", "merhaba"}).is_ok());
  CHECK(fleet.routers[2]->client().command({"GET", "greeting"}).str == "merhaba");
}

TEST_CASE("fleet: a map pushed through one router is served by all of them") {
  Fleet fleet;
  long long before = map_version(*fleet.routers[0]);
  TempDir dir;
  auto file =
      dir.write("next.yaml", SantralProcess::config_for({&fleet.a, &fleet.b}, "databases: 4\n"));
  auto started = Clock::now();
  auto pushed = run_santral({"map", "push", file.string(), "--router", fleet.router_address(1)});
  INFO(pushed.output);
  REQUIRE(pushed.exit_code == 0);
  CHECK(pushed.output.find("proposed map version") != std::string::npos);
  long long after = 0;
  REQUIRE(wait_until(
      [&] {
        after = map_version(*fleet.routers[0]);
        return after > before && fleet.all_serve(after);
      },
      5000));
  auto took = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  WARN("map push to every router serving version " << after << ": " << took << " ms");
  // The pushed map's databases are every router's now.
  for (const auto& router : fleet.routers) {
    auto client = router->client();
    CHECK(client.command({"SELECT", "3"}).is_ok());
    CHECK(client.command({"SELECT", "5"}).str.find("out of range") != std::string::npos);
  }
  REQUIRE(wait_until(
      [&] {
        for (const auto& [name, acked] : routers_of(*fleet.routers[0]))
          if (acked != after) return false;
        return true;
      },
      5000));
}

TEST_CASE("fleet: a reload proposes the file's changed map; an unchanged one proposes nothing") {
  Fleet fleet;
  long long before = map_version(*fleet.routers[0]);
  auto& router = *fleet.routers[2];
  auto unchanged = router.client().command({"SANTRAL", "RELOAD"});
  CHECK(unchanged.str.find("the file's map is not new") != std::string::npos);
  CHECK(map_version(router) == before);
  {
    std::ofstream out(router.config_path(), std::ios::app);
    out << "databases: 8\n";
  }
  auto reload = router.client().command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  REQUIRE(reload.type == Reply::Type::Status);
  CHECK(reload.str.find("proposed map version") != std::string::npos);
  REQUIRE(wait_until([&] { return map_version(*fleet.routers[0]) > before; }, 5000));
  REQUIRE(wait_until([&] { return fleet.all_serve(map_version(*fleet.routers[0])); }, 5000));
  // databases is the fleet's: SELECT 5 is refused by a router whose file still says 16.
  CHECK(fleet.routers[0]->client().command({"SELECT", "9"}).is_error());
}

TEST_CASE("fleet: a map in etcd that does not validate is refused alike by every router") {
  Fleet fleet;
  long long before = map_version(*fleet.routers[0]);
  auto client = fleet.routers[1]->client();
  REQUIRE(client.command({"SET", "kept", "1"}).is_ok());

  auto refused_by_all = [&](const std::string& error) {
    return wait_until(
        [&] {
          for (const auto& router : fleet.routers)
            if (router->log().find("refusing map version") == std::string::npos ||
                router->log().find(error) == std::string::npos)
              return false;
          return true;
        },
        5000);
  };
  SECTION("not a map document") {
    fleet.etcd.put("/santral/t/map", "shards: [truncated");
    CHECK(refused_by_all("etcd key /santral/t/map: not a Santral map document"));
  }
  SECTION("from a newer Santral") {
    fleet.etcd.put("/santral/t/map", R"({"format": 2, "santral": "9.0", "config": "x"})");
    CHECK(refused_by_all("etcd key /santral/t/map: field format: 2 is from a newer Santral"));
  }
  SECTION("a config that does not validate names the field") {
    fleet.etcd.put("/santral/t/map",
                   R"({"format": 1, "config": "shards:\n  - name: a\n    address: nowhere\n"})");
    CHECK(refused_by_all("etcd key /santral/t/map field config:3: shards[0].address"));
  }
  for (const auto& router : fleet.routers) {
    CHECK(map_version(*router) == before);
    CHECK(router->client().command({"GET", "kept"}).str == "1");
  }
  // A router that starts now cannot know the map the others kept: it refuses to start rather
  // than serve its file's map beside theirs.
  const std::string config =
      SantralProcess::config_for({&fleet.a, &fleet.b}, fleet.etcd.cluster_yaml("t"));
  TempDir dir;
  auto file = dir.path() / "late.yaml";
  std::ofstream(file) << "listen: 127.0.0.1:" << free_loopback_port() << "\n" << config;
  auto late = run_santral({"-c", file.string()});
  INFO(late.output);
  CHECK(late.exit_code != 0);
  CHECK(late.output.find("3 other router(s) of the fleet serve the last map they took") !=
        std::string::npos);
  // Alone (the others left), a router serves its file's map until a valid one is pushed.
  fleet.routers.clear();
  SantralProcess alone(config);
  CHECK(alone.client().command({"GET", "kept"}).str == "1");
  CHECK(alone.log().find("no other router of the fleet is live") != std::string::npos);
}

TEST_CASE("fleet: a map the fleet moved keys to that a router cannot read: it serves nothing") {
  Fleet fleet;
  long long before = map_version(*fleet.routers[0]);
  REQUIRE(fleet.routers[1]->client().command({"SET", "kept", "1"}).is_ok());
  std::string readable = fleet.etcd.get("/santral/t/map");
  // As a move's end writes it, but from a newer Santral (a rolling upgrade's skew): the keys
  // are on that map's shards now, and the old map no longer says where.
  fleet.etcd.put("/santral/t/map", R"({"format": 2, "santral": "9.0", "config": "x", )"
                                   R"("moved_from": )" +
                                       std::to_string(before) + R"(, "based_on": )" +
                                       std::to_string(before) + "}");
  for (const auto& router : fleet.routers) {
    auto client = router->client();
    Reply got;
    CHECK(wait_until(
        [&] {
          got = client.command({"GET", "kept"});
          return got.is_error();
        },
        5000));
    INFO(got.str);
    CHECK(got.str.starts_with("CLUSTERDOWN santral: the fleet moved on to map version"));
    CHECK(router->log().find("serving nothing") != std::string::npos);
  }
  // A map it reads, written over that version: it serves again.
  fleet.etcd.put("/santral/t/map", readable);
  for (const auto& router : fleet.routers)
    CHECK(wait_until([&] { return router->client().command({"GET", "kept"}).str == "1"; }, 5000));
}

TEST_CASE("fleet: etcd losing one member of three changes nothing") {
  // A lease well beyond etcd's election (about a second) when the member lost led.
  Fleet fleet(3, "  lease_ttl_s: 6\n");
  long long before = map_version(*fleet.routers[0]);
  fleet.etcd.kill(0);
  // Ordinary traffic through every router goes on through the election.
  std::vector<RedisClient> clients;
  for (const auto& router : fleet.routers) clients.push_back(router->client());
  auto until = Clock::now() + std::chrono::seconds(3);
  for (int n = 0; Clock::now() < until; ++n) {
    auto& client = clients[n % clients.size()];
    std::string key = "k" + std::to_string(n);
    REQUIRE(client.command({"SET", key, "v"}).is_ok());
    REQUIRE(clients[(n + 1) % clients.size()].command({"GET", key}).str == "v");
  }
  // And the map changes as before (a proposal made during the election is refused: try again).
  Reply reply;
  REQUIRE(wait_until(
      [&] {
        reply = fleet.routers[2]->client().command(
            {"SANTRAL", "MAP", "PUSH",
             SantralProcess::config_for({&fleet.a, &fleet.b}, "databases: 4\n")});
        return reply.type == Reply::Type::Status;
      },
      15000));
  REQUIRE(wait_until(
      [&] {
        long long now = map_version(*fleet.routers[0]);
        return now > before && fleet.all_serve(now);
      },
      10000));
}

TEST_CASE("fleet: etcd without quorum (a majority says it has no leader): routers serve on") {
  // Every member alive, answering clients, and cut off from the others: none has a leader,
  // so no lease can expire, and each router has the proof from the members themselves.
  Fleet fleet(3, "  lease_ttl_s: 3\n", true);
  long long before = map_version(*fleet.routers[0]);
  fleet.etcd.partition_peers();
  std::vector<RedisClient> clients;
  for (const auto& router : fleet.routers) clients.push_back(router->client());
  // Once the members have seen they are alone (an election timeout), well past the lease.
  REQUIRE(wait_until(
      [&] { return fleet.routers[0]->log().find("etcd has no quorum") != std::string::npos; },
      10000));
  auto until = Clock::now() + std::chrono::seconds(4);
  for (int n = 0; Clock::now() < until; ++n) {
    std::string key = "q" + std::to_string(n);
    auto set = clients[n % 3].command({"SET", key, "v"});
    INFO(set.str);
    REQUIRE(set.is_ok());
    REQUIRE(clients[(n + 1) % 3].command({"GET", key}).str == "v");
  }
  auto reply =
      clients[0].command({"SANTRAL", "MAP", "PUSH",
                          SantralProcess::config_for({&fleet.a, &fleet.b}, "databases: 4\n")});
  CHECK(reply.is_error());
  CHECK(reply.str.find("etcd did not answer") != std::string::npos);
  CHECK(fleet.all_serve(before));
  fleet.etcd.heal_peers();
}

// Members that refuse, reset or say nothing prove nothing: they may be up and serving the rest
// of the fleet from behind a partition. A router that cannot confirm its lease stops reaching
// the shards at 2/3 of it (finding F3), unless the operator chose serve_when_etcd_down.
TEST_CASE("fleet: etcd out of reach proves nothing: routers stop, unless told to serve on") {
  bool serve_on = GENERATE(false, true);
  INFO("serve_when_etcd_down: " << serve_on);
  Fleet fleet(
      3, std::string("  lease_ttl_s: 2\n") + (serve_on ? "  serve_when_etcd_down: true\n" : ""));
  std::vector<RedisClient> clients;
  for (const auto& router : fleet.routers) clients.push_back(router->client());
  REQUIRE(clients[0].command({"SET", "k", "v"}).is_ok());
  // A transaction open on the router that will be cut off: its EXEC, refused, must end it.
  auto transaction = fleet.routers[1]->client();
  REQUIRE(transaction.command({"MULTI"}).is_ok());
  REQUIRE(transaction.command({"SET", "queued", "1"}).str == "QUEUED");
  SECTION("every member gone") {
    fleet.etcd.kill_all();
  }
  SECTION("two of three gone, the third without a leader") {
    fleet.etcd.kill(1);
    fleet.etcd.kill(2);
  }
  if (serve_on) {
    // Well past the lease, it serves on.
    auto until = Clock::now() + std::chrono::seconds(4);
    std::string last = "v";
    try {
      while (Clock::now() < until && last == "v") last = clients[1].command({"GET", "k"}).str;
    } catch (const std::exception& e) {
      last = e.what();
    }
    INFO("router log:\n" << fleet.routers[1]->log());
    REQUIRE(last == "v");
  } else {
    // Within the lease and an election timeout, it no longer reaches the shards.
    std::string last;
    bool stopped = false;
    try {
      stopped = wait_until(
          [&] {
            last = clients[1].command({"GET", "k"}).str;
            return last.rfind("CLUSTERDOWN", 0) == 0;
          },
          6000);
    } catch (const std::exception& e) {
      last = e.what();
    }
    INFO(last << "\nrouter log:\n" << fleet.routers[1]->log());
    CHECK(stopped);
    // As Redis does when EXEC itself is refused: EXECABORT naming why, the transaction over
    // (a new MULTI is refused as this router's requests are, not as "nested"), nothing of it
    // run.
    auto exec = transaction.command({"EXEC"});
    CHECK(exec.str.rfind("EXECABORT Transaction discarded because of: CLUSTERDOWN", 0) == 0);
    auto multi = transaction.command({"MULTI"});
    CHECK(multi.str.find("nested") == std::string::npos);
    for (auto* shard : {&fleet.a, &fleet.b})
      CHECK(shard->client().command({"EXISTS", "queued"}).integer == 0);
  }
}

TEST_CASE("fleet: a router frozen past its lease leaves the fleet, and joins again on waking") {
  Fleet fleet(3, "  lease_ttl_s: 2\n");
  auto& frozen = *fleet.routers[1];
  REQUIRE(wait_until([&] { return routers_of(*fleet.routers[0]).size() == 3; }, 5000));
  frozen.process().pause();
  // lease_ttl_s: 2; etcd expires the lease, and the others no longer list the router.
  CHECK(wait_until([&] { return routers_of(*fleet.routers[0]).size() == 2; }, 10000));
  frozen.process().resume();
  CHECK(wait_until([&] { return routers_of(*fleet.routers[0]).size() == 3; }, 10000));
  CHECK(frozen.log().find("lease") != std::string::npos);
}

namespace {

// SANTRAL ROUTERS through `asker`: the shard user (cluster.fence: acl) of the router listening
// on `listen`, "" when it is not listed.
std::string fence_user_of(const SantralProcess& asker, const std::string& listen) {
  auto reply = asker.client().command({"SANTRAL", "ROUTERS"});
  for (const auto& entry : reply.elements) {
    std::map<std::string, std::string> fields;
    for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2)
      fields[entry.elements[i].str] = entry.elements[i + 1].str;
    if (fields["listen"] == listen) return fields["fence_user"];
  }
  return "";
}

// ACL GETUSER's flags of `user` on `shard`, as one string ("on allkeys ..."); "" when absent.
std::string acl_flags(const RedisServer& shard, const std::string& user) {
  auto reply = shard.client().command({"ACL", "GETUSER", user});
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
    if (reply.elements[i].str == "flags") {
      std::string flags;
      for (const auto& flag : reply.elements[i + 1].elements) flags += flag.str + " ";
      return flags;
    }
  return "";
}

// How many of `shard`'s connections are logged in as `user`.
int connections_of(const RedisServer& shard, const std::string& user) {
  std::string list = shard.client().command({"CLIENT", "LIST"}).str;
  int count = 0;
  for (auto at = list.find(" user=" + user + " "); at != std::string::npos;
       at = list.find(" user=" + user + " ", at + 1))
    ++count;
  return count;
}

}  // namespace

// Fencing at the shards: a router frozen past its lease (SIGSTOP) while a move starts finds
// its user disabled and its connections closed on every shard when it wakes, writes nothing,
// and joins again as a new user.
TEST_CASE("fleet: with fence: acl a router the fleet went on without is shut out at the shards") {
  Fleet fleet(3, "  lease_ttl_s: 2\n  fence: acl\n");
  RedisServer c;
  auto& frozen = *fleet.routers[1];
  REQUIRE(wait_until([&] { return routers_of(*fleet.routers[0]).size() == 3; }, 5000));
  std::string user = fence_user_of(*fleet.routers[0], fleet.router_address(1));
  REQUIRE(user.starts_with("santral:t:"));
  // Every router reaches the shards as its own user.
  auto writer = frozen.client();
  for (int i = 0; i < 20; ++i)
    REQUIRE(writer.command({"SET", "k" + std::to_string(i), "before"}).is_ok());
  REQUIRE(connections_of(fleet.a, user) + connections_of(fleet.b, user) > 0);
  for (const auto* shard : {&fleet.a, &fleet.b}) CHECK(acl_flags(*shard, user).starts_with("on "));

  frozen.process().pause();
  auto started = Clock::now();
  // A move starts through another router while it sleeps, and ends without it.
  auto pusher = fleet.routers[0]->client();
  plan_move(pusher, SantralProcess::config_for({&fleet.a, &fleet.b, &c}, ""));
  REQUIRE(pusher.command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  REQUIRE(wait_until([&] { return reshard_status(pusher)["state"] == "idle"; }, 30000));
  for (const auto* shard : {&fleet.a, &fleet.b}) {
    CHECK(acl_flags(*shard, user).starts_with("off "));
    CHECK(connections_of(*shard, user) == 0);
  }
  // The new shard never let it in (made disabled, or not at all when it came later).
  CHECK_FALSE(acl_flags(c, user).starts_with("on "));
  WARN("from SIGSTOP to the move's end, the router shut out first: "
       << std::chrono::duration<double>(Clock::now() - started).count() << " s");

  // Awake, it writes nothing as its old self; it joins again as a new user and serves.
  frozen.process().resume();
  auto late = writer.command({"SET", "k0", "after"});
  CHECK(late.is_error());
  std::string fresh;
  CHECK(wait_until(
      [&] {
        fresh = fence_user_of(*fleet.routers[0], fleet.router_address(1));
        return !fresh.empty() && fresh != user;
      },
      15000));
  CHECK(wait_until(
      [&] {
        return frozen.client().command({"SET", "k1", "rejoined"}).is_ok();
      },
      15000));
  for (const auto* shard : {&fleet.a, &fleet.b}) CHECK(acl_flags(*shard, user).starts_with("off "));
  CHECK(pusher.command({"GET", "k0"}).str == "before");
  CHECK(pusher.command({"GET", "k1"}).str == "rejoined");
}

// Names that cannot collide (finding F10): a second router given the name of a live one is
// refused instead of hiding it from the fleet (and from every count of routers); routers left
// to their default names on one address get names of their own.
TEST_CASE("fleet: a live router's name is not taken twice; default names differ") {
  EtcdCluster etcd(1);
  RedisServer a;
  SantralProcess first(
      SantralProcess::config_for({&a}, etcd.cluster_yaml("names", "  router: same\n")));
  TempDir dir;
  auto file = dir.write("second.yaml", "listen: 127.0.0.1:" + std::to_string(free_loopback_port()) +
                                           "\n" + etcd.cluster_yaml("names", "  router: same\n"));
  auto second = run_santral({"--config", file.string()});
  CHECK(second.exit_code != 0);
  CHECK(second.output.find("router name 'same' is held by a live router") != std::string::npos);
  CHECK(routers_of(first).size() == 1);

  SantralProcess x(SantralProcess::config_for({&a}, etcd.cluster_yaml("defaults")));
  SantralProcess y(etcd.cluster_yaml("defaults"));
  REQUIRE(wait_until([&] { return routers_of(x).size() == 2; }, 5000));
  for (const auto& [name, version] : routers_of(x)) {
    CHECK((name.starts_with("127.0.0.1:" + std::to_string(x.port()) + "-") ||
           name.starts_with("127.0.0.1:" + std::to_string(y.port()) + "-")));
  }
}

TEST_CASE("fleet: a router whose file has no shards takes the map from etcd") {
  EtcdCluster etcd(1);
  RedisServer a;
  SECTION("an empty fleet and no map of its own: it says so and exits non-zero") {
    TempDir dir;
    auto file =
        dir.write("santral.yaml", "listen: 127.0.0.1:" + std::to_string(free_loopback_port()) +
                                      "\n" + etcd.cluster_yaml("empty"));
    auto result = run_santral({"--config", file.string()});
    CHECK(result.exit_code != 0);
    CHECK(result.output.find("has none of its own") != std::string::npos);
  }
  SECTION("a fleet with a map: it serves it") {
    SantralProcess first(SantralProcess::config_for({&a}, etcd.cluster_yaml("full")));
    SantralProcess second(etcd.cluster_yaml("full"));
    REQUIRE(first.client().command({"SET", "x", "1"}).is_ok());
    CHECK(second.client().command({"GET", "x"}).str == "1");
    CHECK(map_version(second) == map_version(first));
  }
}

namespace {

// Every router lists every router as routing by a salting version of at least `version`.
bool salting_everywhere(const Fleet& fleet, long long version) {
  for (const auto& router : fleet.routers) {
    auto reply = router->client().command({"SANTRAL", "ROUTERS"});
    if (reply.elements.size() != fleet.routers.size()) return false;
    for (const auto& entry : reply.elements)
      for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2)
        if (entry.elements[i].str == "salting_version" && entry.elements[i + 1].integer < version)
          return false;
  }
  return true;
}

// The key's mod_revision, from etcdctl's JSON (0: no such key).
long long etcd_revision_of(const EtcdCluster& etcd, const std::string& key) {
  std::string out = etcd.get_json(key);
  auto at = out.find("\"mod_revision\":");
  if (at == std::string::npos) return 0;
  return std::stoll(out.substr(at + 15));
}

}  // namespace

TEST_CASE(
    "fleet: a counter salted through one router is summed through the others, and folded "
    "only once every router stopped writing its sub-keys") {
  Fleet fleet;
  REQUIRE(wait_until([&] { return routers_of(*fleet.routers[0]).size() == 3; }, 5000));
  REQUIRE(fleet.routers[0]->client().command({"SANTRAL", "SALT", "hits", "4"}).is_ok());
  long long salted = 0;
  REQUIRE(wait_until(
      [&] {
        salted = etcd_revision_of(fleet.etcd, "/santral/t/salting");
        return salted > 0 && salting_everywhere(fleet, salted);
      },
      5000));
  // Another router knows the key is salted (the fleet's salting is its salting).
  CHECK(fleet.routers[2]
            ->client()
            .command({"SANTRAL", "SALT", "hits", "4"})
            .str.find("already salted") != std::string::npos);

  // Writers on every router while the counter is salted, then unsalted through another one.
  std::atomic<long long> acknowledged{0}, attempted{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w)
    writers.emplace_back([&, w] {
      auto client = fleet.routers[w]->client();
      while (!stop) {
        ++attempted;
        auto reply = client.command({"INCR", "hits"});
        if (reply.type == Reply::Type::Integer) ++acknowledged;
      }
    });
  REQUIRE(wait_until([&] { return acknowledged > 600; }, 20000));
  // Sub-keys landed beside the key (summed on reads through any router).
  auto total = [&](int router) {
    auto reply = fleet.routers[router]->client().command({"GET", "hits"});
    return reply.type == Reply::Type::String ? std::stoll(reply.str) : -1;
  };
  long long seen = total(1);
  CHECK(seen >= 600);
  CHECK(seen <= attempted);
  auto unsalted = fleet.routers[1]->client().command({"SANTRAL", "UNSALT", "hits"});
  INFO(unsalted.str);
  CHECK(unsalted.is_ok());
  REQUIRE(wait_until([&] { return acknowledged > seen + 300; }, 20000));
  stop = true;
  for (auto& writer : writers) writer.join();
  // Nothing acknowledged is lost: every router reads the key alone now, and it holds it all.
  for (int router = 0; router < 3; ++router) {
    long long value = total(router);
    CHECK(value >= acknowledged);
    CHECK(value <= attempted);
  }
  for (int i = 1; i < 4; ++i) {
    CHECK_FALSE(fleet.a.has_key("hits:s" + std::to_string(i)));
    CHECK_FALSE(fleet.b.has_key("hits:s" + std::to_string(i)));
  }
}

TEST_CASE("fleet: run-time salting outlives the router that made it") {
  Fleet fleet;
  REQUIRE(fleet.routers[0]->client().command({"SANTRAL", "SALT", "views", "3"}).is_ok());
  REQUIRE(wait_until(
      [&] { return fleet.etcd.get("/santral/t/salting").find("views") != std::string::npos; },
      5000));
  fleet.routers[0]->process().signal(SIGKILL);
  // A router started afterwards takes the salting from etcd.
  SantralProcess late(
      SantralProcess::config_for({&fleet.a, &fleet.b}, fleet.etcd.cluster_yaml("t")));
  CHECK(late.client().command({"SANTRAL", "SALT", "views", "3"}).str.find("already salted") !=
        std::string::npos);
}

TEST_CASE("fleet: a router started after a move names salted counters as the others do") {
  Fleet fleet;
  RedisServer c;
  auto& first = *fleet.routers[0];
  // A counter whose sub-keys the three-shard map would name otherwise than the two-shard one.
  std::string next = SantralProcess::config_for({&fleet.a, &fleet.b, &c});
  santral::placement::ShardMap two(
      santral::config::parse_config(SantralProcess::config_for({&fleet.a, &fleet.b}), "two"));
  santral::placement::ShardMap three(santral::config::parse_config(next, "three"));
  std::string likes;
  for (int i = 0; likes.empty() && i < 1000; ++i) {
    std::string key = "likes:" + std::to_string(i);
    auto by = [&](const santral::placement::ShardMap& map) {
      auto names =
          santral::router::lay_out_counter(key, 4, santral::config::SaltReply::Exact, map).sub_keys;
      return std::set<std::string>(names.begin(), names.end());
    };
    if (by(two) != by(three)) likes = key;
  }
  REQUIRE(!likes.empty());
  // SALT answers once every live router has taken it.
  REQUIRE(first.client().command({"SANTRAL", "SALT", likes, "4"}).is_ok());
  auto add = [&](const SantralProcess& router, int times) {
    auto client = router.client();
    for (int i = 0; i < times; ++i)
      REQUIRE(client.command({"INCR", likes}).type == Reply::Type::Integer);
  };
  for (const auto& router : fleet.routers) add(*router, 50);

  // A third shard, moved in: the sub-keys keep the names the two-shard map gave them.
  auto proposer = fleet.routers[1]->client();
  auto pushed =
      push_map(proposer, next, [&] { return reshard_state(*fleet.routers[1]) == "planned"; });
  INFO(pushed);
  REQUIRE(wait_until([&] { return reshard_state(*fleet.routers[2]) == "planned"; }, 5000));
  REQUIRE(fleet.routers[2]->client().command({"SANTRAL", "RESHARD", "APPROVE"}).is_ok());
  auto moved = [&](const SantralProcess& router) {
    return reshard_state(router) == "idle" &&
           router.client().command({"SANTRAL", "SHARDMAP"}).str.find("shard:shard2") !=
               std::string::npos;
  };
  for (const auto& router : fleet.routers)
    REQUIRE(wait_until([&] { return moved(*router); }, 60000));

  // A router that joins afterwards knows only the three-shard map from its file and etcd.
  SantralProcess late(SantralProcess::config_for(
      {&fleet.a, &fleet.b, &c}, fleet.etcd.cluster_yaml("t", "  lease_ttl_s: 3\n")));
  add(late, 50);
  add(first, 50);
  std::vector<const SantralProcess*> every = {&first, fleet.routers[1].get(),
                                              fleet.routers[2].get(), &late};
  for (const auto* router : every) {
    INFO("through the router on port " << router->port());
    CHECK(router->client().command({"GET", likes}).str == "250");
  }
}

namespace {

// Writers through every router at once, on the same counters: each INCR counted when sent
// and when acknowledged; each acknowledged SET of a unique key remembered. A router that is
// killed or frozen only makes its writer wait or fail (and reconnect), never the test.
class FleetWriters {
 public:
  explicit FleetWriters(const std::vector<int>& ports) {
    for (std::size_t w = 0; w < ports.size(); ++w)
      threads_.emplace_back([this, port = ports[w], w] {
        std::unique_ptr<RedisClient> client;
        for (long long n = 0; !stop_; ++n) {
          try {
            if (!client) client = std::make_unique<RedisClient>(port, 20000);
            int c = static_cast<int>(n % kCounters);
            ++attempted_[c];
            if (client->command({"INCR", "ctr:" + std::to_string(c)}).type == Reply::Type::Integer)
              ++acked_[c];
            std::string unique = "u:" + std::to_string(w) + ":" + std::to_string(n);
            if (client->command({"SET", unique, unique}).is_ok()) {
              std::lock_guard lock(mutex_);
              written_.push_back(unique);
            }
          } catch (const std::exception&) {
            client.reset();  // the router went away: try again shortly
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
        }
      });
  }
  ~FleetWriters() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
  }
  long long acked() const {
    long long total = 0;
    for (const auto& a : acked_) total += a;
    return total;
  }

  static constexpr int kCounters = 20;
  std::atomic<long long> attempted_[kCounters]{};
  std::atomic<long long> acked_[kCounters]{};
  std::vector<std::string> written_;

 private:
  std::mutex mutex_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace

TEST_CASE("fleet: a shard added through one router is moved while every router takes writes") {
  Fleet fleet(3, "  lease_ttl_s: 2\n");
  RedisServer c;
  std::vector<RedisServer*> shards = {&fleet.a, &fleet.b, &c};
  auto loader = fleet.routers[0]->client();
  constexpr int kKeys = 3000;
  load_keys(loader, kKeys);
  std::vector<int> ports;
  for (const auto& router : fleet.routers) ports.push_back(router->port());
  FleetWriters writers(ports);
  REQUIRE(wait_until([&] { return writers.acked() > 300; }, 20000));

  std::string next = SantralProcess::config_for({&fleet.a, &fleet.b, &c},
                                                "resharding:\n  max_keys_per_sec: 2000\n");
  auto proposer = fleet.routers[1]->client();
  auto pushed =
      push_map(proposer, next, [&] { return reshard_state(*fleet.routers[1]) == "planned"; });
  INFO(pushed);
  CHECK((pushed.empty() || pushed.find("planned a move") != std::string::npos));
  // Planned through one router, visible through every one; the old map keeps serving.
  for (const auto& router : fleet.routers)
    REQUIRE(wait_until([&] { return reshard_state(*router) == "planned"; }, 5000));
  auto approved = fleet.routers[2]->client().command({"SANTRAL", "RESHARD", "APPROVE"});
  INFO(approved.str);
  REQUIRE(approved.is_ok());
  std::vector<SantralProcess*> live = {fleet.routers[0].get(), fleet.routers[1].get(),
                                       fleet.routers[2].get()};
  auto started = Clock::now();

  SECTION("every router keeps writing") {}
  SECTION("the coordinating router is killed mid-move: another resumes") {
    std::string coordinator;
    REQUIRE(wait_until(
        [&] {
          coordinator = fleet.etcd.get("/santral/t/coordinator");
          while (!coordinator.empty() && std::isspace(coordinator.back())) coordinator.pop_back();
          return !coordinator.empty();
        },
        10000));
    for (std::size_t i = 0; i < fleet.routers.size(); ++i)
      // A router's default name is its listen address and an id of its start.
      if (coordinator.starts_with(fleet.router_address(static_cast<int>(i)) + "-")) {
        fleet.routers[i]->process().signal(SIGKILL);
        live.erase(std::find(live.begin(), live.end(), fleet.routers[i].get()));
      }
    REQUIRE(live.size() == 2);
  }
  SECTION("a router frozen past its lease: its writes are refused when it wakes") {
    auto& frozen = *fleet.routers[0];
    frozen.process().pause();
    live.erase(live.begin());
    REQUIRE(wait_until([&] { return routers_of(*live[0]).size() == 2; }, 10000));
    REQUIRE(wait_until([&] { return reshard_state(*live[0]) == "idle"; }, 90000));
    frozen.process().resume();
    live.insert(live.begin(), &frozen);
    // It rejoins and serves the fleet's map.
    REQUIRE(wait_until([&] { return routers_of(*live[1]).size() == 3; }, 10000));
  }

  // Every live router ends on the new map, with the move over.
  REQUIRE(wait_until(
      [&] {
        for (auto* router : live)
          if (reshard_state(*router) != "idle" ||
              router->client().command({"SANTRAL", "SHARDMAP"}).str.find("shard:shard2") ==
                  std::string::npos)
            return false;
        return true;
      },
      90000));
  auto took = std::chrono::duration<double>(Clock::now() - started).count();
  WARN("the move took " << took << " s");
  writers.stop();

  // Nothing acknowledged is lost; every key is on its owner in the new map, once.
  auto client = live.back()->client();
  auto map_config = santral::config::parse_config(next, "next.yaml");
  santral::placement::ShardMap map(map_config);
  for (const auto& [key, on] : where(shards)) {
    INFO(key);
    REQUIRE(on.size() == 1);
    REQUIRE(map.shard(map.shard_for_key(key)).address.port == shards[on[0]]->port());
  }
  for (int i = 0; i < kKeys; i += 7) {
    std::string key = "key:" + std::to_string(i);
    INFO(key);
    REQUIRE(client.command({"GET", key}).str == std::to_string(i));
  }
  for (int k = 0; k < FleetWriters::kCounters; ++k) {
    auto value = client.command({"GET", "ctr:" + std::to_string(k)});
    long long got = value.is_nil() ? 0 : std::stoll(value.str);
    INFO("ctr:" << k << " = " << got << ", acked " << writers.acked_[k] << ", attempted "
                << writers.attempted_[k]);
    REQUIRE(got >= writers.acked_[k]);
    REQUIRE(got <= writers.attempted_[k]);
  }
  for (const auto& unique : writers.written_) {
    INFO(unique);
    REQUIRE(client.command({"GET", unique}).str == unique);
  }
}

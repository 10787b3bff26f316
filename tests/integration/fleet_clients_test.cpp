// The fleet's clients and slow log through any router: CLIENT LIST and CLIENT KILL through
// router A list and close a client of router B (ids unique across the fleet, each line naming
// its router); SLOWLOG through A shows a request B logged; a router that does not answer is
// named, never silently left out; SANTRAL CLIENTS LOCAL and SANTRAL SLOWLOG LOCAL keep one
// router's view. Two real Santral processes over a one-member etcd, one real redis-server.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/etcd_cluster.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

// One CLIENT LIST line as its key=value fields.
using ClientLine = std::map<std::string, std::string>;

std::vector<ClientLine> client_lines(const std::string& text) {
  std::vector<ClientLine> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ClientLine fields;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      auto eq = word.find('=');
      REQUIRE(eq != std::string::npos);  // every field is key=value, as clients parse them
      fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    lines.push_back(std::move(fields));
  }
  return lines;
}

// The lines whose client is named `name`.
std::vector<ClientLine> named(const std::vector<ClientLine>& lines, const std::string& name) {
  std::vector<ClientLine> found;
  for (const auto& line : lines)
    if (line.contains("name") && line.at("name") == name) found.push_back(line);
  return found;
}

// This router's name in the fleet: SANTRAL ROUTERS lists every router, and the router's own
// CLIENT LIST lines (through SANTRAL CLIENTS LOCAL) carry it.
std::string router_name(const SantralProcess& router) {
  auto client = router.client();
  REQUIRE(client.command({"CLIENT", "SETNAME", "whoami"}).is_ok());
  auto mine = named(client_lines(client.command({"SANTRAL", "CLIENTS", "LOCAL"}).str), "whoami");
  REQUIRE(mine.size() == 1);
  REQUIRE(mine.front().contains("router"));
  return mine.front().at("router");
}

std::size_t routers_seen(const SantralProcess& router) {
  auto reply = router.client().command({"SANTRAL", "ROUTERS"});
  return reply.type == Reply::Type::Array ? reply.elements.size() : 0;
}

struct TwoRouters {
  explicit TwoRouters(const std::string& more = "")
      : etcd(1),
        a(SantralProcess::config_for({&shard}, etcd.cluster_yaml("clients") + more),
          std::vector<std::string>{"--workers", "2"}),
        b(SantralProcess::config_for({&shard}, etcd.cluster_yaml("clients") + more),
          std::vector<std::string>{"--workers", "2"}) {
    REQUIRE(wait_until([&] { return routers_seen(a) == 2 && routers_seen(b) == 2; }, 10000));
  }

  RedisServer shard;
  EtcdCluster etcd;
  SantralProcess a, b;
};

}  // namespace

TEST_CASE("fleet: CLIENT LIST and CLIENT KILL through one router cover a client of another") {
  TwoRouters fleet;
  std::string name_a = router_name(fleet.a);
  std::string name_b = router_name(fleet.b);
  REQUIRE(name_a != name_b);

  auto on_b = fleet.b.client();
  REQUIRE(on_b.command({"CLIENT", "SETNAME", "tenant-on-b"}).is_ok());
  auto id_on_b = on_b.command({"CLIENT", "ID"}).integer;
  auto on_a = fleet.a.client();
  REQUIRE(on_a.command({"CLIENT", "SETNAME", "operator-on-a"}).is_ok());
  auto id_on_a = on_a.command({"CLIENT", "ID"}).integer;
  // Ids are unique across the fleet: each router's carry its own high bits.
  CHECK(id_on_a != id_on_b);

  // Through A: every router's clients, each line naming its router, no id twice.
  auto all = client_lines(on_a.command({"CLIENT", "LIST"}).str);
  std::set<std::string> ids;
  for (const auto& line : all) {
    REQUIRE(line.contains("router"));
    CHECK(line.at("router") != "");
    CHECK(!line.contains("error"));
    CHECK(ids.insert(line.at("id")).second);
  }
  auto b_line = named(all, "tenant-on-b");
  REQUIRE(b_line.size() == 1);
  CHECK(b_line.front().at("id") == std::to_string(id_on_b));
  CHECK(b_line.front().at("router") == name_b);
  auto a_line = named(all, "operator-on-a");
  REQUIRE(a_line.size() == 1);
  CHECK(a_line.front().at("router") == name_a);
  // CLIENT LIST ID <B's client> through A.
  auto by_id = client_lines(on_a.command({"CLIENT", "LIST", "ID", std::to_string(id_on_b)}).str);
  REQUIRE(by_id.size() == 1);
  CHECK(by_id.front().at("name") == "tenant-on-b");

  // SANTRAL CLIENTS LOCAL: A's own clients only.
  auto local = client_lines(on_a.command({"SANTRAL", "CLIENTS", "LOCAL"}).str);
  CHECK(named(local, "tenant-on-b").empty());
  CHECK(named(local, "operator-on-a").size() == 1);

  // CLIENT KILL ID through A closes B's client, and only it.
  auto killed = on_a.command({"CLIENT", "KILL", "ID", std::to_string(id_on_b)});
  INFO(killed.str);
  CHECK(killed.type == Reply::Type::Integer);
  CHECK(killed.integer == 1);
  CHECK_THROWS(on_b.command({"PING"}));
  CHECK(on_a.command({"PING"}).str == "PONG");
  CHECK(named(client_lines(on_a.command({"CLIENT", "LIST"}).str), "tenant-on-b").empty());

  // The old form by address reaches B too.
  auto again = fleet.b.client();
  REQUIRE(again.command({"CLIENT", "SETNAME", "again-on-b"}).is_ok());
  auto again_line = named(client_lines(on_a.command({"CLIENT", "LIST"}).str), "again-on-b");
  REQUIRE(again_line.size() == 1);
  CHECK(on_a.command({"CLIENT", "KILL", again_line.front().at("addr")}).is_ok());
  CHECK_THROWS(again.command({"PING"}));
  // A client no router has.
  CHECK(on_a.command({"CLIENT", "KILL", "ID", "99"}).integer == 0);
}

TEST_CASE("fleet: a router that does not answer is named by CLIENT LIST and CLIENT KILL") {
  TwoRouters fleet("timeouts: {connect_ms: 300, request_ms: 300}\n");
  std::string name_b = router_name(fleet.b);
  auto on_a = fleet.a.client();
  REQUIRE(on_a.command({"CLIENT", "SETNAME", "operator-on-a"}).is_ok());

  fleet.b.process().pause();
  auto listed = on_a.command({"CLIENT", "LIST"});
  auto killed = on_a.command({"CLIENT", "KILL", "TYPE", "pubsub"});
  fleet.b.process().resume();

  REQUIRE(listed.type == Reply::Type::String);
  auto lines = client_lines(listed.str);
  CHECK(named(lines, "operator-on-a").size() == 1);
  bool b_named = false;
  for (const auto& line : lines)
    if (line.contains("error") && line.at("router") == name_b) b_named = true;
  INFO(listed.str);
  CHECK(b_named);

  INFO(killed.str);
  REQUIRE(killed.is_error());
  CHECK(killed.str.find(name_b) != std::string::npos);
  CHECK(killed.str.find("0 closed") != std::string::npos);

  // Once B answers again, so do the fleet-wide views.
  REQUIRE(wait_until(
      [&] {
        auto text = on_a.command({"CLIENT", "LIST"}).str;
        return text.find("error=") == std::string::npos;
      },
      10000));
}

TEST_CASE("fleet: SLOWLOG through one router shows a request another router waited on") {
  // B's request waits on the stopped shard until timeouts.request_ms: past the threshold
  // however loaded the machine is.
  TwoRouters fleet("slowlog: {threshold_us: 200000, max_len: 16}\ntimeouts: {request_ms: 600}\n");
  std::string name_b = router_name(fleet.b);
  auto on_a = fleet.a.client();
  auto on_b = fleet.b.client();
  REQUIRE(on_b.command({"SET", "slow-on-b", "v"}).is_ok());
  REQUIRE(on_a.command({"SLOWLOG", "RESET"}).is_ok());
  CHECK(on_a.command({"SLOWLOG", "LEN"}).integer == 0);

  fleet.shard.pause();
  auto answer = on_b.command({"GET", "slow-on-b"});
  fleet.shard.resume();
  REQUIRE(answer.is_error());

  auto slowlog = on_a.command({"SLOWLOG", "GET", "-1"});
  REQUIRE(slowlog.type == Reply::Type::Array);
  std::vector<Reply> found;
  std::string seen;  // every entry's arguments, for the failure message
  for (const auto& entry : slowlog.elements) {
    REQUIRE(entry.elements.size() == 6);
    const auto& args = entry.elements[3].elements;
    for (const auto& arg : args) seen += arg.str + " ";
    seen += "\n";
    if (args.size() == 3 && args[0].str == "GET" && args[1].str == "slow-on-b")
      found.push_back(entry);
  }
  INFO(seen);
  REQUIRE(found.size() == 1);
  std::string measure = found.front().elements[3].elements.back().str;
  INFO(measure);
  CHECK(measure.starts_with("santral: shard0 waited "));
  CHECK(measure.ends_with("on router " + name_b));
  CHECK(found.front().elements[2].integer >= 600000);
  CHECK(on_a.command({"SLOWLOG", "LEN"}).integer >= 1);
  // A's own slow log does not have it; B's does.
  auto local_a = on_a.command({"SANTRAL", "SLOWLOG", "LOCAL", "GET", "-1"});
  for (const auto& entry : local_a.elements)
    CHECK(entry.elements[3].elements[1].str != "slow-on-b");
  CHECK(on_b.command({"SANTRAL", "SLOWLOG", "LOCAL", "LEN"}).integer >= 1);
  // RESET through A empties B's too.
  REQUIRE(on_a.command({"SLOWLOG", "RESET"}).is_ok());
  CHECK(on_b.command({"SANTRAL", "SLOWLOG", "LOCAL", "LEN"}).integer == 0);
}

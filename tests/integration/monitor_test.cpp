// MONITOR through Santral: a monitoring client is shown what every client of the router runs,
// on whichever worker serves it, in each client's order, as Redis writes it, passwords hidden and
// admin commands left out; it may not touch keys until RESET, after which it is shown nothing.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/cluster.h"

using namespace santral::test;

TEST_CASE("MONITOR shows every worker's commands in order, passwords redacted, admin ones not") {
  Cluster cluster(2, "", {"--workers", "2"});
  auto monitor = cluster.client();
  REQUIRE(monitor.command({"MONITOR"}).is_ok());

  constexpr int kClients = 4;
  std::vector<RedisClient> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(cluster.client());
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < kClients; ++i) {
      auto& client = clients[i];
      std::string n = std::to_string(i);
      REQUIRE(client.command({"SET", "k" + n, "v" + n + "\n" + std::to_string(round)}).is_ok());
      REQUIRE(client.command({"GET", "k" + n}).str == "v" + n + "\n" + std::to_string(round));
      CHECK(client.command({"AUTH", "someone", "secret" + n}).is_error());
      client.command({"CONFIG", "GET", "maxmemory"});  // admin: never shown
    }
  REQUIRE(clients[0].command({"ECHO", "the end"}).str == "the end");

  // Each line is Redis's: "<s>.<us> [<db> <client>] "<arg>" ...".
  const std::regex shape(R"(^\d+\.\d{6} \[0 127\.0\.0\.1:\d+\]( ".*")+$)");
  std::map<std::string, std::vector<std::string>> by_client;  // the arguments, by address
  for (int lines = 0;; ++lines) {
    REQUIRE(lines < 1000);
    auto reply = monitor.get_reply();
    REQUIRE_FALSE(reply.is_error());
    INFO(reply.str);
    REQUIRE(std::regex_match(reply.str, shape));
    CHECK(reply.str.find("secret") == std::string::npos);
    CHECK(reply.str.find("maxmemory") == std::string::npos);
    auto open = reply.str.find('[');
    auto close = reply.str.find(']');
    std::string client = reply.str.substr(open + 3, close - open - 3);
    by_client[client].push_back(reply.str.substr(close + 2));
    if (reply.str.ends_with("\"ECHO\" \"the end\"")) break;
  }
  // Every client's commands, in the order it sent them, each once.
  REQUIRE(by_client.size() == kClients);
  int matched = 0;
  for (const auto& [address, lines] : by_client) {
    INFO(address);
    std::string n = lines.front().substr(lines.front().find("\"k") + 2, 1);
    std::vector<std::string> expected;
    for (int round = 0; round < 3; ++round) {
      expected.push_back("\"SET\" \"k" + n + "\" \"v" + n + "\\n" + std::to_string(round) + "\"");
      expected.push_back("\"GET\" \"k" + n + "\"");
      expected.push_back("\"AUTH\" \"(redacted)\" \"(redacted)\"");
    }
    if (n == "0") expected.push_back("\"ECHO\" \"the end\"");
    CHECK(lines == expected);
    ++matched;
  }
  CHECK(matched == kClients);
}

TEST_CASE("a monitoring client may not touch keys; after RESET it runs them and is shown nothing") {
  Cluster cluster(2, "", {"--workers", "2"});
  auto monitor = cluster.client();
  auto other = cluster.client();
  REQUIRE(other.command({"SET", "k", "v"}).is_ok());
  REQUIRE(monitor.command({"MONITOR"}).is_ok());
  auto refused = monitor.command({"GET", "k"});
  CHECK(refused.str.starts_with("ERR Replica can't interact with the keyspace"));
  REQUIRE(other.command({"SET", "k", "w"}).is_ok());
  CHECK(monitor.get_reply().str.ends_with("\"SET\" \"k\" \"w\""));

  // RESET is answered as such (its own command is not shown to it), and keys work again.
  CHECK(monitor.command({"RESET"}).str == "RESET");
  CHECK(monitor.command({"GET", "k"}).str == "w");
  // Another client's command now is not pushed: had it been, it would come before PONG.
  REQUIRE(other.command({"SET", "k", "x"}).is_ok());
  CHECK(monitor.command({"PING"}).str == "PONG");
}

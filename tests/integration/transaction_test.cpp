// MULTI/EXEC through Santral: one shard per transaction, on a connection lent from a pool.
#include <catch2/catch.hpp>

#include "tests/support/cluster.h"

using namespace santral::test;

TEST_CASE("a transaction on one shard runs there, atomically, and reuses pooled connections") {
  Cluster cluster(3);
  auto client = cluster.client();
  std::string owner_key = "{acct42}:balance";
  std::size_t shard = cluster.owner(owner_key);
  long long connections_before = 0;
  for (int round = 0; round < 20; ++round) {
    REQUIRE(client.command({"MULTI"}).is_ok());
    CHECK(client.command({"INCRBY", "{acct42}:balance", "10"}).str == "QUEUED");
    CHECK(client.command({"LPUSH", "{acct42}:log", "deposit"}).str == "QUEUED");
    auto exec = client.command({"EXEC"});
    REQUIRE(exec.elements.size() == 2);
    CHECK(exec.elements[0].integer == 10 * (round + 1));
    CHECK(exec.elements[1].integer == round + 1);
    if (round == 0)
      connections_before = cluster.shard(shard).client().command({"INFO", "stats"}).str.size();
  }
  CHECK(cluster.shard(shard).command_calls("exec") == 20);
  // Pooled: 20 transactions did not open 20 connections to the shard.
  auto stats = cluster.shard(shard).client().command({"INFO", "stats"}).str;
  auto at = stats.find("total_connections_received:");
  REQUIRE(at != std::string::npos);
  long long opened = std::stoll(stats.substr(at + 27));
  CHECK(opened < 10);
  (void)connections_before;
}

TEST_CASE("a key of another shard inside MULTI is refused when queued and EXEC answers EXECABORT") {
  Cluster cluster(2);
  auto client = cluster.client();
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"SET", a, "1"}).str == "QUEUED");
  auto refused = client.command({"SET", b, "2"});
  REQUIRE(refused.is_error());
  CHECK(refused.str.rfind("CROSSSLOT", 0) == 0);
  CHECK(refused.str.find("shard0") != std::string::npos);
  auto exec = client.command({"EXEC"});
  REQUIRE(exec.is_error());
  CHECK(exec.str == "EXECABORT Transaction discarded because of previous errors.");
  CHECK_FALSE(cluster.shard(0).has_key(a));
  CHECK_FALSE(cluster.shard(1).has_key(b));
  // The connection goes on as normal afterwards.
  CHECK(client.command({"SET", b, "3"}).is_ok());
}

TEST_CASE("broadcast and local commands are refused inside MULTI") {
  Cluster cluster(2);
  auto client = cluster.client();
  REQUIRE(client.command({"MULTI"}).is_ok());
  auto dbsize = client.command({"DBSIZE"});
  REQUIRE(dbsize.is_error());
  CHECK(dbsize.str.find("cannot be queued in a transaction") != std::string::npos);
  CHECK(client.command({"EXEC"}).str.rfind("EXECABORT", 0) == 0);
}

TEST_CASE("FLUSHDB and FLUSHALL inside MULTI run on every shard; a key beside them is refused") {
  Cluster cluster(3);
  auto client = cluster.client();
  for (std::size_t s = 0; s < 3; ++s)
    REQUIRE(client.command({"SET", cluster.key_on(s, "k"), "v"}).is_ok());
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"PING"}).str == "QUEUED");
  CHECK(client.command({"FLUSHDB"}).str == "QUEUED");
  auto exec = client.command({"EXEC"});
  REQUIRE(exec.elements.size() == 2);
  CHECK(exec.elements[0].str == "PONG");
  CHECK(exec.elements[1].str == "OK");
  for (std::size_t s = 0; s < 3; ++s) {
    CHECK(cluster.shard(s).client().command({"DBSIZE"}).integer == 0);
    CHECK(cluster.shard(s).command_calls("flushdb") == 1);
  }

  // Keys choose one shard; FLUSHALL needs them all: whichever comes second is refused.
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"FLUSHALL"}).str == "QUEUED");
  auto set = client.command({"SET", "k", "v"});
  REQUIRE(set.is_error());
  CHECK(set.str.find("runs on every shard") != std::string::npos);
  CHECK(client.command({"EXEC"}).str.rfind("EXECABORT", 0) == 0);
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"SET", "k", "v"}).str == "QUEUED");
  auto flush = client.command({"FLUSHALL"});
  REQUIRE(flush.is_error());
  CHECK(flush.str.find("runs on every shard") != std::string::npos);
  CHECK(client.command({"EXEC"}).str.rfind("EXECABORT", 0) == 0);
  for (std::size_t s = 0; s < 3; ++s) CHECK(cluster.shard(s).command_calls("flushall") == 0);
  CHECK(client.command({"EXISTS", "k"}).integer == 0);
}

TEST_CASE("PING, ECHO and TIME are queued as Redis queues them; SAVE and SHUTDOWN are refused") {
  Cluster cluster(2);
  auto client = cluster.client();
  std::string key = cluster.key_on(1, "k");
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"PING"}).str == "QUEUED");
  CHECK(client.command({"ECHO", "hi"}).str == "QUEUED");
  CHECK(client.command({"TIME"}).str == "QUEUED");
  CHECK(client.command({"SET", key, "v"}).str == "QUEUED");
  // Redis checks PING's one message when it runs: the error is EXEC's element, as there.
  CHECK(client.command({"PING", "x", "y"}).str == "QUEUED");
  auto exec = client.command({"EXEC"});
  REQUIRE(exec.type == Reply::Type::Array);
  REQUIRE(exec.elements.size() == 5);
  CHECK(exec.elements[0].str == "PONG");
  CHECK(exec.elements[1].str == "hi");
  CHECK(exec.elements[2].elements.size() == 2);
  CHECK(exec.elements[3].is_ok());
  CHECK(exec.elements[4].str == "ERR wrong number of arguments for 'ping' command");
  // All of it ran on the key's shard, in the transaction.
  CHECK(cluster.shard(1).command_calls("exec") == 1);
  CHECK(cluster.shard(1).has_key(key));

  // Keyless only: any shard runs it.
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"ECHO", "alone"}).str == "QUEUED");
  auto alone = client.command({"EXEC"});
  REQUIRE(alone.elements.size() == 1);
  CHECK(alone.elements[0].str == "alone");

  for (const char* refused : {"SAVE", "SHUTDOWN"}) {
    INFO(refused);
    REQUIRE(client.command({"MULTI"}).is_ok());
    CHECK(client.command({refused}).str == "ERR Command not allowed inside a transaction");
    CHECK(client.command({"EXEC"}).str.rfind("EXECABORT", 0) == 0);
  }
  // Outside MULTI, PING with two messages gets the arity error from Santral itself.
  CHECK(client.command({"PING", "x", "y"}).str ==
        "ERR wrong number of arguments for 'ping' command");
}

TEST_CASE("WATCH: a change by another client makes EXEC return nil") {
  Cluster cluster(3);
  auto client = cluster.client();
  auto other = cluster.client();
  REQUIRE(client.command({"SET", "{w}k", "1"}).is_ok());
  REQUIRE(client.command({"WATCH", "{w}k"}).is_ok());
  REQUIRE(other.command({"SET", "{w}k", "2"}).is_ok());
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"SET", "{w}k", "3"}).str == "QUEUED");
  CHECK(client.command({"EXEC"}).is_nil());
  CHECK(client.command({"GET", "{w}k"}).str == "2");

  // Without interference the same transaction goes through.
  REQUIRE(client.command({"WATCH", "{w}k"}).is_ok());
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"SET", "{w}k", "4"}).str == "QUEUED");
  CHECK(client.command({"EXEC"}).elements.size() == 1);
  CHECK(client.command({"GET", "{w}k"}).str == "4");
}

TEST_CASE("MULTI/DISCARD, EXEC without MULTI, nested MULTI, empty transaction") {
  Cluster cluster(2);
  auto client = cluster.client();
  CHECK(client.command({"EXEC"}).str == "ERR EXEC without MULTI");
  CHECK(client.command({"DISCARD"}).str == "ERR DISCARD without MULTI");
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"MULTI"}).str == "ERR MULTI calls can not be nested");
  CHECK(client.command({"EXEC"}).elements.empty());
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"SET", "{d}k", "1"}).str == "QUEUED");
  CHECK(client.command({"DISCARD"}).is_ok());
  CHECK(client.command({"GET", "{d}k"}).is_nil());
}

TEST_CASE("a client that leaves inside MULTI leaves nothing behind") {
  Cluster cluster(2);
  {
    auto client = cluster.client();
    REQUIRE(client.command({"MULTI"}).is_ok());
    CHECK(client.command({"SET", "{gone}k", "1"}).str == "QUEUED");
  }
  auto client = cluster.client();
  CHECK(client.command({"GET", "{gone}k"}).is_nil());
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"GET", "{gone}k"}).str == "QUEUED");
  auto exec = client.command({"EXEC"});
  REQUIRE(exec.elements.size() == 1);
  CHECK(exec.elements[0].is_nil());
}

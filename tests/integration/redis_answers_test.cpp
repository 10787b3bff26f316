// Where a request is wrong, Santral answers in Redis's own words: checked against what one
// redis-server answers to the same bytes.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/cluster.h"

using namespace santral::test;

TEST_CASE("a numkeys Redis refuses gets Redis's own error, and runs nothing") {
  Cluster cluster(2);
  auto client = cluster.client();
  auto direct = cluster.shard(0).client();
  const std::vector<std::vector<std::string>> requests = {
      {"EVAL", "return 1", "-1"},
      {"EVAL", "return 1", "x"},
      {"EVAL", "return 1", "5", "a"},
      {"EVAL_RO", "return 1", "3", "a"},
      {"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "-2"},
      {"FCALL", "f", "-1"},
      {"FCALL_RO", "f", "9", "a"},
      {"SINTERCARD", "0", "a"},
      {"SINTERCARD", "-1", "a"},
      {"SINTERCARD", "3", "a", "b"},
      {"ZINTERCARD", "-1", "a"},
      {"ZINTERCARD", "x", "a"},
      {"LMPOP", "0", "a", "LEFT"},
      {"LMPOP", "x", "a", "LEFT"},
      {"LMPOP", "4", "a", "LEFT"},
      {"ZMPOP", "-1", "a", "MIN"},
      {"BLMPOP", "0", "-1", "a", "LEFT"},
      {"BZMPOP", "0", "5", "a", "MIN"},
      {"ZUNION", "0", "a"},
      {"ZUNIONSTORE", "d", "-3", "a"},
      {"ZDIFF", "7", "a"},
  };
  for (const auto& request : requests) {
    std::string text;
    for (const auto& arg : request) text += arg + " ";
    INFO(text);
    auto expected = direct.command(request);
    REQUIRE(expected.is_error());
    CHECK(client.command(request).str == expected.str);
  }
  CHECK(cluster.shard(0).dbsize() + cluster.shard(1).dbsize() == 0);

  // Inside MULTI Redis queues them and EXEC carries the error; the rest of it runs.
  std::string key = cluster.key_on(1, "k");
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"SET", key, "v"}).str == "QUEUED");
  CHECK(client.command({"EVAL", "return 1", "-1"}).str == "QUEUED");
  auto exec = client.command({"EXEC"});
  REQUIRE(exec.elements.size() == 2);
  CHECK(exec.elements[0].is_ok());
  CHECK(exec.elements[1].str == "ERR Number of keys can't be negative");
  CHECK(cluster.shard(1).has_key(key));
}

TEST_CASE(
    "CLIENT LIST and CLIENT KILL with a client type or user Redis does not know: Redis's error") {
  Cluster cluster(2);
  auto client = cluster.client();
  auto direct = cluster.shard(0).client();
  const std::vector<std::vector<std::string>> requests = {
      {"CLIENT", "KILL", "TYPE", "wrong_type"},
      {"CLIENT", "LIST", "TYPE", "Wrong_Type"},
      {"CLIENT", "KILL", "USER", "wrong_user"},
  };
  for (const auto& request : requests) {
    auto expected = direct.command(request);
    REQUIRE(expected.is_error());
    CHECK(client.command(request).str == expected.str);
  }
  CHECK(client.command({"CLIENT", "KILL", "TYPE", "PUBSUB"}).integer == 0);
  CHECK_FALSE(client.command({"CLIENT", "LIST", "TYPE", "normal"}).is_error());
}

// Replies come back in request order, including when one pipeline spans shards that answer
// out of order.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>

#include "tests/support/cluster.h"

using namespace santral::test;

TEST_CASE("a 1,000-request pipeline across shards comes back in order with the right values") {
  Cluster cluster(4);
  auto client = cluster.client();
  constexpr int kRequests = 1000;
  // SET, GET, INCR and APPEND interleaved over many keys on every shard.
  for (int i = 0; i < kRequests; ++i) {
    std::string key = "p:" + std::to_string(i % 97);
    switch (i % 4) {
      case 0:
        client.append({"SET", key, std::to_string(i)});
        break;
      case 1:
        client.append({"GET", key});
        break;
      case 2:
        client.append({"INCR", "counter:" + std::to_string(i % 13)});
        break;
      case 3:
        client.append({"APPEND", "log:" + std::to_string(i % 11), "x"});
        break;
    }
  }
  std::map<std::string, std::string> values;
  std::map<std::string, long long> counters;
  std::map<std::string, long long> logs;
  for (int i = 0; i < kRequests; ++i) {
    auto reply = client.get_reply();
    std::string key = "p:" + std::to_string(i % 97);
    INFO("request " << i);
    switch (i % 4) {
      case 0:
        REQUIRE(reply.is_ok());
        values[key] = std::to_string(i);
        break;
      case 1:
        if (values.count(key))
          REQUIRE(reply.str == values[key]);
        else
          REQUIRE(reply.is_nil());
        break;
      case 2:
        REQUIRE(reply.integer == ++counters["counter:" + std::to_string(i % 13)]);
        break;
      case 3:
        REQUIRE(reply.integer == ++logs["log:" + std::to_string(i % 11)]);
        break;
    }
  }
}

TEST_CASE("a reply from a fast shard waits for the slow shard's reply ahead of it") {
  Cluster cluster(2);
  auto client = cluster.client();
  std::string slow_key = cluster.key_on(0, "slow");
  std::string fast_key = cluster.key_on(1, "fast");
  REQUIRE(client.command({"SET", fast_key, "fast-value"}).is_ok());

  // Shard 0 spins in a script for a while; shard 1 answers its GETs at once, so its replies
  // reach Santral first and must be held back.
  const char* spin =
      "local i = 0 while i < 20000000 do i = i + 1 end return redis.call('INCR', KEYS[1])";
  auto started = std::chrono::steady_clock::now();
  client.append({"EVAL", spin, "1", slow_key});
  for (int i = 0; i < 50; ++i) client.append({"GET", fast_key});
  client.append({"GET", slow_key});
  auto first = client.get_reply();
  auto waited = std::chrono::steady_clock::now() - started;
  CHECK(first.integer == 1);
  CHECK(waited > std::chrono::milliseconds(50));  // the script really was slow
  for (int i = 0; i < 50; ++i) REQUIRE(client.get_reply().str == "fast-value");
  CHECK(client.get_reply().str == "1");
}

TEST_CASE("inline commands work as in redis-cli's telnet mode") {
  Cluster cluster(2);
  RawConnection raw(cluster.santral().port());
  raw.send("SET greeting \"hello world\"\r\nGET greeting\r\nPING\n");
  std::string expected = "+OK\r\n$11\r\nhello world\r\n+PONG\r\n";
  CHECK(raw.read_some(expected.size()) == expected);
}

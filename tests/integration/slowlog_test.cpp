// SLOWLOG through Santral: Santral's own slow log, in Redis's format, measured end to end with
// the shard each request waited for named; `slowlog: {threshold_us, max_len}`; the shards' own
// slow logs through SANTRAL SHARD SLOWLOG.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/cluster.h"

using namespace santral::test;

namespace {

// The entries of SLOWLOG GET whose arguments start with `command` and `key`.
std::vector<Reply> entries_for(const Reply& slowlog, const std::string& command,
                               const std::string& key) {
  std::vector<Reply> found;
  for (const auto& entry : slowlog.elements) {
    const auto& args = entry.elements.at(3).elements;
    if (args.size() >= 2 && args[0].str == command && args[1].str == key) found.push_back(entry);
  }
  return found;
}

// Santral's measure: the last argument of an entry.
std::string measure_of(const Reply& entry) {
  return entry.elements.at(3).elements.back().str;
}

}  // namespace

TEST_CASE("SLOWLOG: a request that waited on a stopped shard is logged, naming that shard") {
  // The shard is stopped and the request fails after timeouts.request_ms: it waited on the
  // shard at least that long, past the threshold however loaded the machine is.
  Cluster cluster(2,
                  "slowlog: {threshold_us: 200000, max_len: 16}\n"
                  "timeouts: {request_ms: 600}\n",
                  {"--workers", "2"});
  auto client = cluster.client();
  std::string slow_key = cluster.key_on(1, "slow");
  REQUIRE(client.command({"SET", slow_key, "v"}).is_ok());
  REQUIRE(client.command({"SLOWLOG", "RESET"}).is_ok());

  cluster.shard(1).pause();
  auto answer = client.command({"GET", slow_key});
  cluster.shard(1).resume();
  INFO(answer.str);
  REQUIRE(answer.is_error());
  CHECK(answer.str.find("shard1") != std::string::npos);

  auto slowlog = client.command({"SLOWLOG", "GET", "-1"});
  REQUIRE(slowlog.type == Reply::Type::Array);
  auto entries = entries_for(slowlog, "GET", slow_key);
  REQUIRE(entries.size() == 1);
  const auto& entry = entries.front();
  // Redis's six fields: id, unix time, microseconds, arguments, client address, client name.
  REQUIRE(entry.elements.size() == 6);
  CHECK(entry.elements[0].type == Reply::Type::Integer);
  CHECK(entry.elements[1].integer > 1700000000);
  CHECK(entry.elements[2].integer >= 600000);
  CHECK(entry.elements[4].str.starts_with("127.0.0.1:"));
  CHECK(entry.elements[5].str.empty());
  // The arguments, then Santral's measure, naming the shard the request waited for and how
  // long.
  const auto& args = entry.elements[3].elements;
  REQUIRE(args.size() == 3);
  std::string measure = measure_of(entry);
  INFO(measure);
  CHECK(measure.starts_with("santral: shard1 waited "));
  CHECK(measure.find("shard0") == std::string::npos);
  auto waited = std::stoll(measure.substr(std::string("santral: shard1 waited ").size()));
  CHECK(waited >= 600000);
  CHECK(waited <= entry.elements[2].integer);

  // The shard answers again, and reads of both shards are served.
  REQUIRE(client.command({"GET", slow_key}).str == "v");
  CHECK(client.command({"SLOWLOG", "LEN"}).integer >= 1);
  REQUIRE(client.command({"SLOWLOG", "RESET"}).is_ok());
  CHECK(entries_for(client.command({"SLOWLOG", "GET"}), "GET", slow_key).empty());
}

TEST_CASE("SLOWLOG: every worker's requests, newest first, truncated as Redis does") {
  // threshold_us: 0 keeps every request; max_len bounds what GET and LEN give.
  Cluster cluster(2, "slowlog: {threshold_us: 0, max_len: 5}\n", {"--workers", "2"});
  std::vector<RedisClient> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(cluster.client());
  REQUIRE(clients[0].command({"SLOWLOG", "RESET"}).is_ok());
  REQUIRE(clients[1].command({"CLIENT", "SETNAME", "second"}).is_ok());
  REQUIRE(clients[1].command({"SET", cluster.key_on(0, "a"), "1"}).is_ok());
  REQUIRE(clients[2].command({"MGET", cluster.key_on(0, "a"), cluster.key_on(1, "b")}).type ==
          Reply::Type::Array);
  std::vector<std::string> many = {"DEL"};
  for (int i = 0; i < 40; ++i) many.push_back("{tag}" + std::to_string(i));
  many[1] = "{tag}" + std::string(200, 'x');
  REQUIRE(clients[3].command(many).type == Reply::Type::Integer);

  auto slowlog = clients[0].command({"SLOWLOG", "GET", "-1"});
  REQUIRE(slowlog.elements.size() == 5);  // max_len
  for (std::size_t i = 1; i < slowlog.elements.size(); ++i)
    CHECK(slowlog.elements[i - 1].elements[0].integer > slowlog.elements[i].elements[0].integer);
  CHECK(clients[0].command({"SLOWLOG", "LEN"}).integer == 5);
  CHECK(clients[0].command({"SLOWLOG", "GET", "2"}).elements.size() == 2);
  CHECK(clients[0].command({"SLOWLOG", "GET", "-2"}).is_error());

  auto set = entries_for(slowlog, "SET", cluster.key_on(0, "a"));
  REQUIRE(set.size() == 1);
  CHECK(set[0].elements[5].str == "second");
  CHECK(measure_of(set[0]).starts_with("santral: shard0 waited "));
  // A split request names each shard it waited for.
  auto mget = entries_for(slowlog, "MGET", cluster.key_on(0, "a"));
  REQUIRE(mget.size() == 1);
  CHECK(measure_of(mget[0]).find("shard0 waited") != std::string::npos);
  CHECK(measure_of(mget[0]).find("shard1 waited") != std::string::npos);
  // 32 arguments at most, the 32nd saying how many more; 128 bytes of each.
  auto del = entries_for(slowlog, "DEL", "{tag}" + std::string(123, 'x') + "... (77 more bytes)");
  REQUIRE(del.size() == 1);
  const auto& del_args = del[0].elements[3].elements;
  REQUIRE(del_args.size() == 33);  // 32, and Santral's measure
  CHECK(del_args[31].str == "... (10 more arguments)");
  // Answered by Santral itself: no shard to name.
  auto pings = entries_for(clients[0].command({"SLOWLOG", "GET", "1"}), "SLOWLOG", "GET");
  REQUIRE(pings.size() == 1);
  CHECK(measure_of(pings[0]) == "santral: answered by Santral");
}

TEST_CASE("SLOWLOG: a negative threshold keeps nothing") {
  Cluster cluster(1, "slowlog: {threshold_us: -1}\n");
  auto client = cluster.client();
  REQUIRE(client.command({"SET", "k", "v"}).is_ok());
  CHECK(client.command({"SLOWLOG", "LEN"}).integer == 0);
  CHECK(client.command({"SLOWLOG", "GET"}).elements.empty());
}

TEST_CASE("SANTRAL SHARD SLOWLOG: each shard's own slow log under its name") {
  Cluster cluster(2);
  for (std::size_t s = 0; s < cluster.size(); ++s)
    REQUIRE(cluster.shard(s)
                .client()
                .command({"CONFIG", "SET", "slowlog-log-slower-than", "0"})
                .is_ok());
  auto client = cluster.client();
  REQUIRE(client.command({"SET", cluster.key_on(1, "on-one"), "v"}).is_ok());

  auto got = client.command({"SANTRAL", "SHARD", "SLOWLOG", "GET", "-1"});
  REQUIRE(got.elements.size() == 4);
  CHECK(got.elements[0].str == "shard0");
  CHECK(got.elements[2].str == "shard1");
  bool set_on_one = false;
  for (const auto& entry : got.elements[3].elements)
    if (entry.elements.at(3).elements.at(0).str == "SET") set_on_one = true;
  CHECK(set_on_one);
  for (const auto& entry : got.elements[1].elements)
    CHECK(entry.elements.at(3).elements.at(0).str != "SET");

  auto len = client.command({"SANTRAL", "SHARD", "SLOWLOG", "LEN"});
  REQUIRE(len.elements.size() == 4);
  CHECK(len.elements[3].integer >= 1);
  auto reset = client.command({"SANTRAL", "SHARD", "SLOWLOG", "RESET"});
  REQUIRE(reset.elements.size() == 4);
  CHECK(reset.elements[1].is_ok());
  CHECK(reset.elements[3].is_ok());
  CHECK(client.command({"SANTRAL", "SHARD", "SLOWLOG"}).is_error());
  CHECK(client.command({"SANTRAL", "SHARD", "CONFIG", "GET"}).is_error());
}

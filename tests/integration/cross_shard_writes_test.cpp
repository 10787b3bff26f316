// The write forms whose keys live on different shards (SINTERSTORE ..., SMOVE, LMOVE, RENAME,
// COPY): CROSSSLOT by default; with `cross_shard_writes: allow` they run as a read, a write and
// a delete. Their answers and what they leave behind are checked against one redis-server
// holding the same keys, and on the shards themselves.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/redis_client.h"

using namespace santral::test;

namespace {

std::string describe(const Reply& reply) {
  switch (reply.type) {
    case Reply::Type::Integer:
      return ":" + std::to_string(reply.integer);
    case Reply::Type::Nil:
      return "nil";
    case Reply::Type::Array: {
      std::string out = "[";
      for (const auto& e : reply.elements) out += describe(e) + ",";
      return out + "]";
    }
    default:
      return reply.str;
  }
}

// What a key holds, read in a way that does not depend on hash-table order.
std::string contents(RedisClient& client, const std::string& key) {
  std::string type = client.command({"TYPE", key}).str;
  Reply value;
  if (type == "set") {
    value = client.command({"SMEMBERS", key});
    std::sort(value.elements.begin(), value.elements.end(),
              [](const Reply& a, const Reply& b) { return a.str < b.str; });
  } else if (type == "zset") {
    value = client.command({"ZRANGE", key, "0", "-1", "WITHSCORES"});
  } else if (type == "list") {
    value = client.command({"LRANGE", key, "0", "-1"});
  } else if (type == "string") {
    value = client.command({"GET", key});
  }
  return type + " " + describe(value);
}

std::map<std::string, Reply> as_map(const Reply& reply) {
  std::map<std::string, Reply> fields;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
    fields[reply.elements[i].str] = reply.elements[i + 1];
  return fields;
}

}  // namespace

TEST_CASE("cross-shard writes are CROSSSLOT by default, and EXPLAIN says why") {
  Cluster cluster(2);
  auto client = cluster.client();
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  REQUIRE(client.command({"SADD", a, "1"}).integer == 1);
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"SUNIONSTORE", a, a, b}, {"SMOVE", a, b, "1"}, {"RENAME", a, b}, {"COPY", a, b}}) {
    INFO(command[0]);
    CHECK(client.command(command).str.starts_with("CROSSSLOT"));
  }
  auto e = as_map(client.command({"SANTRAL", "EXPLAIN", "RENAME", a, b}));
  CHECK(e["kind"].str == "CROSSSLOT");
  CHECK(e["note"].str.find("cross_shard_writes is refuse") != std::string::npos);
  CHECK(client.command({"SMEMBERS", a}).elements.size() == 1);
}

TEST_CASE("with cross_shard_writes: allow, the write forms answer and leave what one Redis does") {
  Cluster cluster(3, "cross_shard_writes: allow\n");
  RedisServer reference_server;
  auto reference = reference_server.client();
  auto client = cluster.client();
  // Sources spread over the shards; destinations on each shard.
  std::vector<std::string> s = {cluster.key_on(0, "s"), cluster.key_on(1, "s"),
                                cluster.key_on(2, "s")};
  std::vector<std::string> z = {cluster.key_on(0, "z"), cluster.key_on(1, "z"),
                                cluster.key_on(2, "z")};
  std::vector<std::string> d = {cluster.key_on(0, "d"), cluster.key_on(1, "d"),
                                cluster.key_on(2, "d")};
  std::string text = cluster.key_on(1, "str");
  std::string missing = cluster.key_on(2, "none");
  auto both = [&](const std::vector<std::string>& command) {
    auto expected = reference.command(command);
    auto got = client.command(command);
    INFO(command[0] << " " << (command.size() > 1 ? command[1] : ""));
    REQUIRE(describe(got) == describe(expected));
  };
  auto reset = [&] {
    both({"FLUSHALL"});
    both({"SADD", s[0], "1", "2", "3", "a"});
    both({"SADD", s[1], "2", "3", "4", "b"});
    both({"SADD", s[2], "3", "5"});
    both({"ZADD", z[0], "1", "x", "2.5", "y", "inf", "w"});
    both({"ZADD", z[1], "10", "x", "-inf", "w", "0.1", "q"});
    both({"SET", text, "hello"});
    both({"SET", d[2], "old value"});
  };
  const std::vector<std::vector<std::string>> commands = {
      {"SINTERSTORE", d[0], s[1], s[2]},
      {"SINTERSTORE", d[2], s[0], missing},
      {"SUNIONSTORE", d[1], s[0], s[1], s[2]},
      {"SUNIONSTORE", d[2], s[0], s[1]},
      {"SDIFFSTORE", d[0], s[0], s[1]},
      {"SDIFFSTORE", d[2], s[2], s[0]},
      {"SUNIONSTORE", d[0], s[0], text},
      {"ZUNIONSTORE", d[2], "2", z[0], z[1]},
      {"ZUNIONSTORE", d[0], "3", z[0], z[1], s[0], "WEIGHTS", "2", "0.5", "3", "AGGREGATE", "MAX"},
      {"ZINTERSTORE", d[1], "2", z[0], z[1], "AGGREGATE", "MIN"},
      {"ZINTERSTORE", d[0], "2", z[0], z[1], "WEIGHTS", "0", "1"},
      {"ZDIFFSTORE", d[2], "2", z[0], z[1]},
      {"ZDIFFSTORE", d[0], "2", z[1], z[0]},
      {"ZUNIONSTORE", d[2], "2", z[0], z[1], "WITHSCORES"},
      {"ZUNIONSTORE", d[2], "2", z[0], text},
      {"ZINTERSTORE", d[2], "2", z[0], missing},
      {"SMOVE", s[0], s[1], "a"},
      {"SMOVE", s[0], s[1], "nope"},
      {"SMOVE", s[0], text, "a"},
      {"SMOVE", missing, text, "a"},
      {"SMOVE", s[0], d[1], "1"},
      {"RENAME", s[0], d[1]},
      {"RENAME", missing, d[0]},
      {"RENAME", s[1], d[2]},
      {"RENAMENX", s[2], d[2]},
      {"RENAMENX", s[2], d[0]},
      {"COPY", z[0], d[1]},
      {"COPY", z[0], d[2]},
      {"COPY", z[0], d[2], "REPLACE"},
      {"COPY", missing, d[1]},
      {"COPY", z[0], d[1], "FOO"},
  };
  int compared = 0;
  for (const auto& command : commands) {
    reset();
    both(command);
    for (const auto& key : {d[0], d[1], d[2], s[0], s[1], s[2], z[0], z[1], text}) {
      INFO(command[0] << " then " << key);
      CHECK(contents(client, key) == contents(reference, key));
      ++compared;
    }
  }
  // Lists.
  const std::vector<std::vector<std::string>> list_commands = {
      {"LMOVE", s[0], s[1], "LEFT", "RIGHT"},
      {"LMOVE", s[0], s[1], "RIGHT", "LEFT"},
      {"RPOPLPUSH", s[0], s[1]},
      {"RPOPLPUSH", missing, s[1]},
      {"LMOVE", s[0], text, "LEFT", "LEFT"},
      {"LMOVE", s[0], s[1], "UP", "LEFT"},
      {"LMOVE", s[0], missing, "LEFT", "LEFT"},
  };
  for (const auto& command : list_commands) {
    both({"FLUSHALL"});
    both({"RPUSH", s[0], "a", "b", "c"});
    both({"RPUSH", s[1], "x"});
    both({"SET", text, "hello"});
    both(command);
    for (const auto& key : {s[0], s[1], missing, text}) {
      INFO(command[0] << " then " << key);
      CHECK(contents(client, key) == contents(reference, key));
      ++compared;
    }
  }
  std::cout << "cross-shard writes: " << commands.size() + list_commands.size()
            << " commands answered as one Redis, " << compared << " keys compared after them\n";
}

TEST_CASE("cross-shard writes land on the destination's shard, keep TTLs, and are not overtaken") {
  Cluster cluster(2, "cross_shard_writes: allow\n");
  auto client = cluster.client();
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  std::string d = cluster.key_on(1, "d");
  auto on_shard1 = cluster.shard(1).client();
  auto on_shard0 = cluster.shard(0).client();

  REQUIRE(client.command({"SADD", a, "1", "2"}).integer == 2);
  REQUIRE(client.command({"SADD", b, "2", "3"}).integer == 2);
  // Pipelined: the SMEMBERS behind the store sees what it wrote.
  client.append({"SUNIONSTORE", d, a, b});
  client.append({"SMEMBERS", d});
  client.append({"SCARD", a});
  CHECK(client.get_reply().integer == 3);
  CHECK(client.get_reply().elements.size() == 3);
  CHECK(client.get_reply().integer == 2);
  CHECK(on_shard1.command({"SCARD", d}).integer == 3);
  CHECK(on_shard0.command({"EXISTS", d}).integer == 0);

  // RENAME keeps the TTL and deletes the source.
  REQUIRE(client.command({"SET", a, "v", "PX", "100000"}).is_ok());
  REQUIRE(client.command({"RENAME", a, b}).is_ok());
  CHECK(on_shard0.command({"EXISTS", a}).integer == 0);
  CHECK(on_shard1.command({"GET", b}).str == "v");
  long long ttl = on_shard1.command({"PTTL", b}).integer;
  CHECK(ttl > 90000);
  CHECK(ttl <= 100000);

  // SMOVE and LMOVE take the element from the source.
  REQUIRE(client.command({"SADD", a, "m"}).integer == 1);
  CHECK(client.command({"SMOVE", a, d, "m"}).integer == 1);
  CHECK(on_shard0.command({"EXISTS", a}).integer == 0);
  CHECK(on_shard1.command({"SISMEMBER", d, "m"}).integer == 1);
  REQUIRE(client.command({"RPUSH", a, "x", "y"}).integer == 2);
  std::string list = cluster.key_on(1, "list");
  CHECK(client.command({"LMOVE", a, list, "LEFT", "LEFT"}).str == "x");
  CHECK(on_shard0.command({"LRANGE", a, "0", "-1"}).elements.size() == 1);
  CHECK(on_shard1.command({"LINDEX", list, "0"}).str == "x");

  // Many pipelined moves keep their order.
  for (int i = 0; i < 50; ++i) client.append({"RPUSH", a, std::to_string(i)});
  for (int i = 0; i < 50; ++i) client.append({"RPOPLPUSH", a, list});
  for (int i = 0; i < 50; ++i) CHECK(client.get_reply().type == Reply::Type::Integer);
  for (int i = 0; i < 50; ++i) CHECK(client.get_reply().str == std::to_string(49 - i));
  CHECK(on_shard1.command({"LLEN", list}).integer == 51);

  // EXPLAIN shows the stages; MULTI still refuses.
  auto e = as_map(client.command({"SANTRAL", "EXPLAIN", "RENAME", a, b}));
  CHECK(e["kind"].str == "STAGED_WRITE");
  CHECK(e["route"].str == "STAGED_WRITE");
  REQUIRE(e["steps"].elements.size() == 3);
  CHECK(e["steps"].elements[2].str == "delete on shard 'shard0': DEL " + a);
  CHECK(e["note"].str.find("not atomically") != std::string::npos);
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"SMOVE", a, d, "m"}).str.starts_with("CROSSSLOT"));
  CHECK(client.command({"EXEC"}).str.starts_with("EXECABORT"));

  // A destination shard that is down: the error names it, the source is left as it was.
  REQUIRE(client.command({"SET", a, "keep"}).is_ok());
  cluster.shard(1).kill();
  auto failed = client.command({"RENAME", a, b});
  REQUIRE(failed.is_error());
  CHECK(failed.str.find("shard1") != std::string::npos);
  CHECK(on_shard0.command({"GET", a}).str == "keep");
  CHECK(client.command({"GET", a}).str == "keep");
}

TEST_CASE("a cross-shard write reading more than limits.max_merge_bytes writes nothing") {
  Cluster cluster(2, "cross_shard_writes: allow\nlimits:\n  max_merge_bytes: 2kb\n");
  auto client = cluster.client();
  std::string a = cluster.key_on(0, "a");
  std::string d = cluster.key_on(1, "d");
  std::vector<std::string> big = {"SADD", a};
  for (int i = 0; i < 500; ++i) big.push_back("member" + std::to_string(i));
  REQUIRE(client.command(big).integer == 500);
  REQUIRE(client.command({"SET", d, "kept"}).is_ok());
  auto refused = client.command({"SUNIONSTORE", d, a});
  REQUIRE(refused.is_error());
  CHECK(refused.str.find("SUNIONSTORE reads keys from several shards") != std::string::npos);
  CHECK(refused.str.find("limits.max_merge_bytes (2048 bytes)") != std::string::npos);
  CHECK(cluster.shard(1).client().command({"GET", d}).str == "kept");
  auto renamed = client.command({"RENAME", a, d});
  CHECK(renamed.is_error());
  CHECK(cluster.shard(0).client().command({"SCARD", a}).integer == 500);
  // Small ones still run.
  std::string small = cluster.key_on(0, "small");
  REQUIRE(client.command({"SADD", small, "x"}).integer == 1);
  CHECK(client.command({"SUNIONSTORE", d, small}).integer == 1);
  CHECK(cluster.shard(1).client().command({"SMEMBERS", d}).elements.size() == 1);
}

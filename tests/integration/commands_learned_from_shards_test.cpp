// Commands missing from Santral's table are learned from the shards' COMMAND INFO. A test
// build hides GETEX, LMPOP, SINTERCARD, OBJECT FREQ and HSTRLEN from the built-in table
// (SANTRAL_TEST_HIDE_COMMANDS); a Santral that learns them from redis-server 7.0 must answer
// exactly as one that knows them, over the same shards. HSTRLEN is declared under commands:.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

namespace {

const std::string kUsers =
    "users:\n"
    "  - {name: writer, password: pw}\n"
    "  - {name: reader, password: pw, rules: \"on +@all -@write ~*\"}\n"
    "  - {name: strings, password: pw, rules: \"on -@all +@string +auth ~*\"}\n";

std::string flat(const Reply& reply) {
  switch (reply.type) {
    case Reply::Type::Nil:
      return "(nil)";
    case Reply::Type::Integer:
      return std::to_string(reply.integer);
    case Reply::Type::Array: {
      std::string out = "[";
      for (const auto& e : reply.elements) out += flat(e) + ",";
      return out + "]";
    }
    case Reply::Type::Error:
      return "-" + reply.str;
    default:
      return reply.str;
  }
}

// The same reply text once each client's key prefix is taken out.
std::string without(std::string text, const std::string& prefix) {
  for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix))
    text.erase(at, prefix.size());
  return text;
}

struct Pair {
  Pair() {
    for (int i = 0; i < 3; ++i) shards.push_back(std::make_unique<RedisServer>());
    std::vector<const RedisServer*> list;
    for (const auto& s : shards) list.push_back(s.get());
    std::string extra =
        kUsers + "commands:\n  - {name: hstrlen, first_key: 1, flags: [readonly]}\n";
    ::setenv("SANTRAL_TEST_HIDE_COMMANDS", "getex,lmpop,sintercard,object|freq,hstrlen", 1);
    learning = std::make_unique<SantralProcess>(SantralProcess::config_for(list, extra));
    ::unsetenv("SANTRAL_TEST_HIDE_COMMANDS");
    knowing = std::make_unique<SantralProcess>(SantralProcess::config_for(list, kUsers));
  }
  RedisClient client(const SantralProcess& santral, const char* user = "writer") {
    auto c = santral.client();
    REQUIRE(c.command({"AUTH", user, "pw"}).is_ok());
    return c;
  }
  std::vector<std::unique_ptr<RedisServer>> shards;
  std::unique_ptr<SantralProcess> learning, knowing;
};

// Runs `commands` (with {p} for the prefix) through both, with their own keys, and compares.
void same_answers(Pair& pair, const std::vector<std::vector<std::string>>& commands,
                  const char* user = "writer") {
  auto a = pair.client(*pair.learning, user);
  auto b = pair.client(*pair.knowing, user);
  for (const auto& command : commands) {
    auto with = [&](const std::string& prefix) {
      std::vector<std::string> args;
      for (auto arg : command) {
        for (auto at = arg.find("{p}"); at != std::string::npos; at = arg.find("{p}"))
          arg.replace(at, 3, prefix);
        args.push_back(arg);
      }
      return args;
    };
    std::string learned = without(flat(a.command(with("la:"))), "la:");
    std::string builtin = without(flat(b.command(with("bi:"))), "bi:");
    INFO(command[0] << " " << (command.size() > 1 ? command[1] : ""));
    CHECK(learned == builtin);
  }
}

}  // namespace

TEST_CASE(
    "learned from COMMAND INFO: the same replies as the built-in table, and EXPLAIN says so") {
  Pair pair;
  // The catalog reads the shards right after connecting.
  REQUIRE(wait_until(
      [&] {
        auto c = pair.client(*pair.learning);
        return !c.command({"GETEX", "x"}).is_error();
      },
      5000));
  same_answers(pair, {
                         {"SET", "{p}s", "hello"},
                         {"GETEX", "{p}s", "EX", "100"},
                         {"TTL", "{p}s"},
                         {"GETEX", "{p}s", "PERSIST"},
                         {"TTL", "{p}s"},
                         {"GETEX", "{p}s", "EX"},  // Redis's syntax error
                         {"GETEX", "{p}missing"},
                         {"RPUSH", "{{p}t}a", "1", "2", "3"},
                         {"RPUSH", "{{p}t}b", "4"},
                         {"LMPOP", "2", "{{p}t}a", "{{p}t}b", "LEFT", "COUNT", "2"},
                         {"LMPOP", "2", "{{p}t}none", "{{p}t}b", "RIGHT"},
                         {"LMPOP", "x", "{{p}t}a", "LEFT"},  // numkeys Redis refuses
                         {"LMPOP", "1", "{{p}t}a", "SIDEWAYS"},
                         {"SADD", "{{p}t}s1", "a", "b", "c"},
                         {"SADD", "{{p}t}s2", "b", "c", "d"},
                         {"SINTERCARD", "2", "{{p}t}s1", "{{p}t}s2"},
                         {"SINTERCARD", "2", "{{p}t}s1", "{{p}t}s2", "LIMIT", "1"},
                         {"OBJECT", "FREQ", "{p}s"},  // no LFU policy: Redis's error
                         {"HSET", "{p}h", "f", "value"},
                         {"HSTRLEN", "{p}h", "f"},
                         {"HSTRLEN", "{p}h"},  // arity
                         {"MULTI"},
                         {"GETEX", "{{p}t}q"},
                         {"LMPOP", "1", "{{p}t}a", "LEFT"},
                         {"EXEC"},
                     });
  // ACL rules by category: GETEX is @write @string.
  same_answers(pair, {{"GETEX", "{p}s"}, {"OBJECT", "FREQ", "{p}s"}}, "reader");
  same_answers(pair, {{"GETEX", "{p}s"}, {"HSTRLEN", "{p}h", "f"}}, "strings");

  auto a = pair.client(*pair.learning);
  auto explain = a.command({"SANTRAL", "EXPLAIN", "GETEX", "k"});
  REQUIRE(explain.type == Reply::Type::Array);
  CHECK(flat(explain).find("learned from every shard's COMMAND INFO") != std::string::npos);
  CHECK(flat(explain).find("SINGLE_SHARD") != std::string::npos);
  auto declared = a.command({"SANTRAL", "EXPLAIN", "HSTRLEN", "k", "f"});
  CHECK(flat(declared).find("declared under commands:") != std::string::npos);
  // COMMAND shows it (a shard answers), and counts it.
  auto info = a.command({"COMMAND", "INFO", "getex"});
  REQUIRE(info.type == Reply::Type::Array);
  CHECK(info.elements[0].elements[0].str == "getex");
  CHECK(a.command({"COMMAND", "COUNT"}).integer ==
        pair.client(*pair.knowing).command({"COMMAND", "COUNT"}).integer);
  // Learned commands run by the built-in rules: keys on two shards are CROSSSLOT (the
  // built-in SINTERCARD is merged at the router instead: see docs/compatibility.md).
  std::string x = "x", y;
  for (int i = 0; y.empty(); ++i) {
    auto explained =
        flat(a.command({"SANTRAL", "EXPLAIN", "SINTERCARD", "2", x, "y" + std::to_string(i)}));
    if (explained.find("CROSSSLOT") != std::string::npos) y = "y" + std::to_string(i);
  }
  CHECK(a.command({"SINTERCARD", "2", x, y}).str.starts_with("CROSSSLOT"));
  // HELLO and INFO say the shards' version.
  auto version = pair.shards[0]->client().command({"INFO", "server"}).str;
  auto at = version.find("redis_version:");
  std::string shard_version = version.substr(at + 14, version.find('\r', at) - at - 14);
  auto hello = a.command({"HELLO", "2"});
  REQUIRE(hello.elements.size() >= 4);
  CHECK(hello.elements[3].str == shard_version);
  CHECK(a.command({"INFO", "server"}).str.find("redis_version:" + shard_version) !=
        std::string::npos);
}

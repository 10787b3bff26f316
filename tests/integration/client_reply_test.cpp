// CLIENT REPLY OFF, SKIP and ON byte for byte as one redis-server answers them: the same
// pipelines sent to Santral (over two shards) and to a redis-server, the replies compared.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/redis_server.h"

using namespace santral::test;

namespace {

using Command = std::vector<std::string>;

std::string resp(const Command& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// Sends the pipeline and a closing PING end, and reads up to that PING's reply.
std::string answers(int port, const std::vector<Command>& pipeline) {
  RawConnection raw(port);
  std::string bytes = resp({"FLUSHALL"});
  for (const auto& command : pipeline) bytes += resp(command);
  raw.send(bytes + resp({"PING", "end"}));
  return raw.read_until("$3\r\nend\r\n");
}

}  // namespace

TEST_CASE("CLIENT REPLY OFF, SKIP and ON answer as one redis-server") {
  Cluster cluster(2);
  RedisServer redis;
  const std::vector<std::vector<Command>> cases = {
      {{"CLIENT", "REPLY", "OFF"},
       {"GET"},
       {"NOSUCH"},
       {"SET", "a", "1"},
       {"CLIENT", "REPLY", "ON"},
       {"GET", "a"}},
      {{"MSET", "a", "1", "b", "2", "c", "3"},
       {"CLIENT", "REPLY", "SKIP"},
       {"MGET", "a", "b", "c"},
       {"MGET", "a", "b"}},
      {{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "a"}, {"GET", "b"}},
      {{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"GET", "a"}},
      {{"CLIENT", "REPLY", "SKIP"}, {"GET"}, {"GET", "a"}},
      {{"CLIENT", "REPLY", "MAYBE"}, {"CLIENT", "REPLY"}},
      {{"CLIENT", "REPLY", "OFF"},
       {"DBSIZE"},
       {"KEYS", "*"},
       {"CLIENT", "REPLY", "ON"},
       {"EXISTS", "a", "b"}},
      {{"CLIENT", "REPLY", "SKIP"}, {"EVAL", "return 1", "0"}, {"EVAL", "return 2", "0"}},
      // Subscription confirmations are pushes: sent even with replies off.
      {{"CLIENT", "REPLY", "OFF"}, {"SUBSCRIBE", "ch"}, {"UNSUBSCRIBE", "ch"}},
      {{"CLIENT", "REPLY", "SKIP"}, {"SUBSCRIBE", "ch"}, {"UNSUBSCRIBE", "ch"}},
  };
  for (const auto& pipeline : cases) {
    std::string first;
    for (const auto& arg : pipeline.front()) first += arg + " ";
    INFO("pipeline starting " << first);
    CHECK(answers(cluster.santral().port(), pipeline) == answers(redis.port(), pipeline));
  }
}

// Bad input gets a clear error and a closed connection; earlier requests keep their replies,
// other clients are unaffected and the process keeps running.
#include <catch2/catch.hpp>

#include "tests/support/cluster.h"

using namespace santral::test;

namespace {

struct Case {
  const char* what;
  std::string bytes;
  std::string error;  // expected start of the error reply
};

}  // namespace

TEST_CASE("malformed requests: error, then the connection closes; others keep working") {
  Cluster cluster(2,
                  "limits:\n"
                  "  max_args: 16\n"
                  "  max_bulk_bytes: 1kb\n"
                  "  max_inline_bytes: 1kb\n");
  auto bystander = cluster.client();
  REQUIRE(bystander.command({"SET", "b", "1"}).is_ok());

  const Case cases[] = {
      {"bad type byte", "*1\r\n!4\r\nPING\r\n", "-ERR Protocol error: expected '$', got '!'"},
      {"negative bulk length", "*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length"},
      {"non-numeric bulk length", "*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length"},
      {"huge multibulk count", "*99999999999\r\n", "-ERR Protocol error: invalid multibulk length"},
      {"too many arguments", "*17\r\n",
       "-ERR Protocol error: invalid multibulk length (17 arguments exceed"},
      {"bulk over the limit", "*2\r\n$3\r\nGET\r\n$5000\r\n",
       "-ERR Protocol error: invalid bulk length (5000 bytes exceed"},
      {"inline line over the limit", std::string(2000, 'a'),
       "-ERR Protocol error: too big inline request"},
      {"unbalanced quotes", "SET \"abc\r\n", "-ERR Protocol error: unbalanced quotes"},
      {"count line without CRLF", "*" + std::string(2000, '1'),
       "-ERR Protocol error: too big mbulk count string"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    RawConnection raw(cluster.santral().port());
    // A good request first: its reply must come back before the error, unharmed.
    raw.send("*1\r\n$4\r\nPING\r\n" + c.bytes);
    std::string received;
    REQUIRE(raw.wait_closed(received));
    REQUIRE(received.rfind("+PONG\r\n", 0) == 0);
    std::string error = received.substr(7);
    CHECK(error.rfind(c.error, 0) == 0);
    CHECK(error.size() >= 2);
    CHECK(error.substr(error.size() - 2) == "\r\n");
    CHECK(bystander.command({"GET", "b"}).str == "1");
  }
  CHECK(cluster.santral().process().running());
}

TEST_CASE("protocol errors do not reach the shards") {
  Cluster cluster(1);
  {
    RawConnection raw(cluster.santral().port());
    raw.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n:1\r\n");
    std::string received;
    REQUIRE(raw.wait_closed(received));
    CHECK(received.rfind("-ERR Protocol error", 0) == 0);
  }
  CHECK(cluster.shard(0).dbsize() == 0);
  CHECK(cluster.shard(0).command_calls("set") == 0);
}

TEST_CASE("unknown commands and wrong arity are answered like Redis, and the connection stays") {
  Cluster cluster(2);
  auto client = cluster.client();
  auto unknown = client.command({"FOO", "bar"});
  REQUIRE(unknown.is_error());
  CHECK(unknown.str == "ERR unknown command 'FOO', with args beginning with: 'bar' ");
  auto arity = client.command({"GET"});
  CHECK(arity.str == "ERR wrong number of arguments for 'get' command");
  auto sub = client.command({"CLIENT", "NOPE"});
  CHECK(sub.str == "ERR unknown subcommand 'NOPE'. Try CLIENT HELP.");
  auto refused = client.command({"CLUSTER", "INFO"});
  CHECK(refused.is_error());
  CHECK(refused.str.starts_with("ERR This instance has cluster support disabled"));
  CHECK(client.command({"PING"}).str == "PONG");
}

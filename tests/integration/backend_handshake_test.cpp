// A shard connection's handshake (AUTH / HELLO, SELECT, CLIENT TRACKING) is answered before any
// request queued on that connection goes out. A refused AUTH leaves a Redis connection logged
// in as `default` (on by default, without a password): a request written behind it would run
// as `default`, while Santral answers it "the shard is unavailable", which says it did not run.
// That is also how a router fenced at the shards (cluster.fence: acl disables its user) would
// write through the fence.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/fault_proxy.h"
#include "tests/support/process.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"

using namespace santral::test;

TEST_CASE("a request queued behind a refused AUTH never reaches the shard") {
  RedisServer shard;
  auto direct = shard.client();
  REQUIRE(direct.command({"ACL", "SETUSER", "router", "on", ">pw", "~*", "&*", "+@all"}).is_ok());
  FaultProxy proxy({{"s0", shard.port()}});
  SantralProcess santral(
      "shards:\n  - {name: s0, address: 127.0.0.1:" + std::to_string(proxy.port("s0")) +
      "}\nworkers: 1\nwatch_file: false\n"
      "backend: {username: router, password: pw}\n"
      "timeouts: {request_ms: 10000}\n");
  auto client = santral.client();
  REQUIRE(client.command({"SET", "warm", "1"}).is_ok());
  REQUIRE(direct.command({"ACL", "WHOAMI"}).str == "default");

  // Santral's next connection is held at the proxy (its bytes kept) while its user is turned
  // off and its connection killed: it connects again at once, into the held connection.
  int before = proxy.accepted("s0");
  proxy.fault("s0", "stall-new");
  REQUIRE(direct.command({"ACL", "SETUSER", "router", "off"}).is_ok());
  auto killed = direct.command({"CLIENT", "KILL", "USER", "router"}).integer;
  REQUIRE(killed >= 1);
  REQUIRE(wait_until([&] { return proxy.accepted("s0") >= before + killed; }, 10000));

  // Queued on the connection whose AUTH is on its way: CLIENT LIST shows the client's last
  // command as SET once the worker has dispatched (and so queued) it.
  RawConnection raw(santral.port());
  raw.send("*2\r\n$6\r\nCLIENT\r\n$2\r\nID\r\n");
  std::string id = raw.read_until("\r\n", 10000);
  REQUIRE(id.size() > 3);
  id = id.substr(1, id.size() - 3);
  raw.send("*3\r\n$3\r\nSET\r\n$6\r\nvictim\r\n$1\r\n1\r\n");
  REQUIRE(wait_until(
      [&] {
        auto listed = client.command({"CLIENT", "LIST", "ID", id}).str;
        return listed.find(" cmd=set ") != std::string::npos;
      },
      10000));
  proxy.fault("s0", "pass");
  std::string answer = raw.read_until("\r\n", 10000);
  INFO("SET answered: " << answer);
  CHECK(answer.rfind("-ERR", 0) == 0);
  CHECK(answer.find("handshake failed") != std::string::npos);
  CHECK(direct.command({"EXISTS", "victim"}).integer == 0);
  CHECK(direct.command({"EXISTS", "warm"}).integer == 1);
}

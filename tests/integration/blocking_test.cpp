// Blocking commands run on connections of their own: a blocked client never stalls the shared
// pipelined connections, and leaving releases the shard.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "tests/support/cluster.h"

using namespace santral::test;
using Clock = std::chrono::steady_clock;

namespace {

long long blocked_clients(RedisServer& shard) {
  auto info = shard.client().command({"INFO", "clients"}).str;
  auto at = info.find("blocked_clients:");
  return at == std::string::npos ? -1 : std::stoll(info.substr(at + 16));
}

}  // namespace

TEST_CASE("a client blocked in BLPOP does not slow 1,000 GETs on the same shard") {
  Cluster cluster(2, "workers: 1\n");
  std::string queue = cluster.key_on(0, "queue");
  std::string key = cluster.key_on(0, "value");
  auto setup = cluster.client();
  REQUIRE(setup.command({"SET", key, "v"}).is_ok());

  auto blocked = cluster.client(30000);
  blocked.append({"BLPOP", queue, "0"});
  // hiredis sends on get_reply; do it on a thread that waits for the element.
  // Catch's assertions are not thread-safe: the thread only fetches, the test checks.
  Reply popped;
  std::thread waiter([&] { popped = blocked.get_reply(); });
  REQUIRE(wait_until([&] { return blocked_clients(cluster.shard(0)) == 1; }, 5000));

  auto reader = cluster.client();
  auto started = Clock::now();
  for (int i = 0; i < 1000; ++i) reader.append({"GET", key});
  for (int i = 0; i < 1000; ++i) REQUIRE(reader.get_reply().str == "v");
  CHECK(Clock::now() - started < std::chrono::seconds(2));

  Reply pushed = setup.command({"RPUSH", queue, "job-1"});
  INFO("RPUSH: " << pushed.str);
  // CHECK, not REQUIRE: the waiter must still be joined.
  CHECK(pushed.type == Reply::Type::Integer);
  CHECK(pushed.integer == 1);  // the list's length after the push, before BLPOP takes it
  waiter.join();
  REQUIRE(popped.elements.size() == 2);
  CHECK(popped.elements.at(1).str == "job-1");
  CHECK(wait_until([&] { return blocked_clients(cluster.shard(0)) == 0; }, 5000));
}

TEST_CASE("blocking commands time out as on Redis and keep their reply shapes") {
  Cluster cluster(2);
  auto client = cluster.client();
  std::string a = cluster.key_on(1, "a");
  CHECK(client.command({"BLPOP", a, "0.1"}).is_nil());
  CHECK(client.command({"BRPOPLPUSH", a, a, "0.1"}).is_nil());
  CHECK(client.command({"BZPOPMIN", a, "0.1"}).is_nil());
  REQUIRE(client.command({"XADD", "{s}stream", "*", "f", "v"}).type == Reply::Type::String);
  auto read = client.command({"XREAD", "BLOCK", "100", "STREAMS", "{s}stream", "0"});
  CHECK(read.elements.size() == 1);
  auto nothing = client.command({"XREAD", "BLOCK", "100", "STREAMS", "{s}stream", "$"});
  CHECK(nothing.is_nil());
  auto cross = client.command({"BLPOP", cluster.key_on(0, "x"), cluster.key_on(1, "y"), "1"});
  CHECK(cross.str.rfind("CROSSSLOT", 0) == 0);
}

TEST_CASE("a client that disconnects while blocked releases its shard connection") {
  Cluster cluster(1);
  {
    RawConnection raw(cluster.santral().port());
    raw.send("*3\r\n$5\r\nBLPOP\r\n$5\r\nqueue\r\n$1\r\n0\r\n");
    REQUIRE(wait_until([&] { return blocked_clients(cluster.shard(0)) == 1; }, 5000));
  }
  CHECK(wait_until([&] { return blocked_clients(cluster.shard(0)) == 0; }, 5000));
  // Nothing was popped by the abandoned BLPOP.
  auto client = cluster.client();
  REQUIRE(client.command({"RPUSH", "queue", "x"}).integer == 1);
  CHECK(client.command({"LLEN", "queue"}).integer == 1);
}

TEST_CASE("CLIENT UNBLOCK ends another client's BLPOP") {
  Cluster cluster(1);
  auto blocked = cluster.client(30000);
  long long id = blocked.command({"CLIENT", "ID"}).integer;
  blocked.append({"BLPOP", "q", "0"});
  Reply unblocked;
  std::thread waiter([&] { unblocked = blocked.get_reply(); });
  REQUIRE(wait_until([&] { return blocked_clients(cluster.shard(0)) == 1; }, 5000));
  auto admin = cluster.client();
  CHECK(admin.command({"CLIENT", "UNBLOCK", std::to_string(id)}).integer == 1);
  waiter.join();
  CHECK(unblocked.is_nil());
  CHECK(admin.command({"CLIENT", "UNBLOCK", std::to_string(id)}).integer == 0);
  CHECK(wait_until([&] { return blocked_clients(cluster.shard(0)) == 0; }, 5000));
}

TEST_CASE("WAIT counts replicas on every shard after the client's writes") {
  Cluster cluster(2);
  auto client = cluster.client();
  client.append({"SET", cluster.key_on(0, "w"), "1"});
  client.append({"WAIT", "0", "100"});
  CHECK(client.get_reply().is_ok());
  auto wait = client.get_reply();
  CHECK(wait.type == Reply::Type::Integer);
  CHECK(wait.integer == 0);  // these shards have no replicas
}

// WAIT waits on every shard, one lent connection each: CLIENT UNBLOCK must answer each of
// them (it answered only the first, and the others then failed with the dropped connection).
TEST_CASE("CLIENT UNBLOCK ... TIMEOUT ends a WAIT on several shards with 0, ERROR with UNBLOCKED") {
  Cluster cluster(2);
  for (std::string mode : {"TIMEOUT", "ERROR"}) {
    auto blocked = cluster.client(30000);
    long long id = blocked.command({"CLIENT", "ID"}).integer;
    blocked.append({"WAIT", "1", "0"});  // no replica will ever confirm
    Reply answer;
    std::thread waiter([&] { answer = blocked.get_reply(); });
    REQUIRE(wait_until(
        [&] {
          return blocked_clients(cluster.shard(0)) == 1 && blocked_clients(cluster.shard(1)) == 1;
        },
        5000));
    auto admin = cluster.client();
    CHECK(admin.command({"CLIENT", "UNBLOCK", std::to_string(id), mode}).integer == 1);
    waiter.join();
    INFO(mode << ": " << answer.str);
    if (mode == "TIMEOUT") {
      CHECK(answer.type == Reply::Type::Integer);
      CHECK(answer.integer == 0);
    } else {
      CHECK(answer.is_error());
      CHECK(answer.str.rfind("UNBLOCKED", 0) == 0);
    }
    CHECK(blocked.command({"PING"}).str == "PONG");
  }
}

// Scripts that run long, as on one Redis: an EVAL or FCALL longer than timeouts.request_ms
// is answered (it has timeouts.script_ms), and SCRIPT KILL / FUNCTION KILL through Santral
// reach the shard whose script is busy, whose own reply then ends the call.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "tests/support/cluster.h"

using namespace santral::test;
using Clock = std::chrono::steady_clock;

namespace {

// Busy for `ms` milliseconds of the shard's own clock, then answers "done".
const std::string kBusyFor =
    "local t = redis.call('TIME'); local start = t[1] * 1000 + t[2] / 1000; "
    "while true do t = redis.call('TIME'); "
    "if t[1] * 1000 + t[2] / 1000 - start > tonumber(ARGV[1]) then break end end "
    "return 'done'";

const std::string kLibrary =
    "#!lua name=busy\n"
    "redis.register_function('spin', function(keys, args) while true do end end)\n";

}  // namespace

TEST_CASE("a script longer than timeouts.request_ms is answered; KILL reaches the busy shard") {
  Cluster cluster(2, "timeouts:\n  request_ms: 300\n  script_ms: 20000\n");
  auto client = cluster.client();
  // Redis reads other clients' commands (a KILL among them) only once a script has run this
  // long (5 s by default).
  REQUIRE(client.command({"CONFIG", "SET", "busy-reply-threshold", "100"}).is_ok());
  auto started = Clock::now();
  auto reply = client.command({"EVAL", kBusyFor, "1", "{k}", "800"});
  CHECK(reply.str == "done");
  // The script ran past timeouts.request_ms before its answer came. (Not ">= 800 ms": the
  // shard counts by its wall clock, which the system may step or slew, while this test counts
  // by a steady one; a CI run measured 796.6 ms for the shard's 800.)
  CHECK(Clock::now() - started >= std::chrono::milliseconds(600));
  // The shard's connection was not dropped: the next request is answered at once.
  CHECK(client.command({"SET", "{k}", "v"}).is_ok());

  // A script that never ends, on the shard of "{k}": SCRIPT KILL from another client ends it
  // with the shard's own error.
  auto busy = std::async(std::launch::async, [&] {
    auto other = cluster.client(30000);
    return other.command({"EVAL", "while true do end", "1", "{k}"});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto killer = cluster.client();
  Reply killed;
  for (int i = 0; i < 50; ++i) {  // until the script has started
    killed = killer.command({"SCRIPT", "KILL"});
    if (killed.is_ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(killed.str);
  CHECK(killed.is_ok());
  auto ended = busy.get();
  CHECK(ended.is_error());
  CHECK(ended.str.find("Script killed by user") != std::string::npos);
  CHECK(killer.command({"SCRIPT", "KILL"}).str.starts_with("NOTBUSY"));

  // FUNCTION KILL likewise, for FCALL.
  REQUIRE(client.command({"FUNCTION", "LOAD", kLibrary}).str == "busy");
  auto spinning = std::async(std::launch::async, [&] {
    auto other = cluster.client(30000);
    return other.command({"FCALL", "spin", "1", "{k}"});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Reply function_killed;
  for (int i = 0; i < 50; ++i) {
    function_killed = killer.command({"FUNCTION", "KILL"});
    if (function_killed.is_ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(function_killed.str);
  CHECK(function_killed.is_ok());
  CHECK(spinning.get().str.find("killed by user") != std::string::npos);

  // A transaction around a long script: EXEC waits for it, as on Redis.
  REQUIRE(client.command({"MULTI"}).is_ok());
  CHECK(client.command({"EVAL", kBusyFor, "1", "{k}", "600"}).str == "QUEUED");
  CHECK(client.command({"GET", "{k}"}).str == "QUEUED");
  auto exec = client.command({"EXEC"});
  REQUIRE(exec.elements.size() == 2);
  CHECK(exec.elements[0].str == "done");
  CHECK(exec.elements[1].str == "v");
}

TEST_CASE("while a script holds its shard busy, PING answers that shard's BUSY, as one Redis") {
  Cluster cluster(2, "timeouts:\n  request_ms: 300\n  script_ms: 20000\n");
  auto client = cluster.client();
  REQUIRE(client.command({"CONFIG", "SET", "busy-reply-threshold", "50"}).is_ok());
  CHECK(client.command({"PING"}).str == "PONG");  // no script out: Santral answers
  auto busy = std::async(std::launch::async, [&] {
    auto other = cluster.client(30000);
    return other.command({"EVAL", "while true do end", "1", "{k}"});
  });
  auto pinger = cluster.client(30000);
  Reply ping;
  for (int i = 0; i < 200; ++i) {  // until the script has run past busy-reply-threshold
    ping = pinger.command({"PING"});
    if (ping.is_error()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  INFO(ping.str);
  CHECK(ping.str.rfind("BUSY Redis is busy running a script", 0) == 0);
  CHECK(pinger.command({"PING", "hello"}).str.rfind("BUSY", 0) == 0);
  REQUIRE(pinger.command({"SCRIPT", "KILL"}).is_ok());
  CHECK(busy.get().str.find("Script killed by user") != std::string::npos);
  CHECK(pinger.command({"PING"}).str == "PONG");
  CHECK(pinger.command({"PING", "hello"}).str == "hello");
}

// The barrier of a move's switch (router/routes/in_flight_barrier.h) over a connection the router
// gave up on while its shard was stopped (findings 2026-12-06, F1 and F2). Giving up ends
// nothing on the shard: a stopped shard runs every byte already in its socket once it wakes.
// So a connection given up on with requests on the wire drains: the barrier waits until the shard
// proves them over, by answering every one of them, or by answering CLIENT KILL ID <the
// connection's id> sent on another connection. Never on a timeout alone.
//
// The shard is a scripted one (tests/support/scripted_shard.h) on a loopback port: its first
// connection answers its handshake (CLIENT ID: 7) and then reads nothing more, as a SIGSTOPped
// Redis would; the worker's connections really connect to it.
#include <catch2/catch.hpp>

#include <cctype>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "router/backend/backend_connection.h"
#include "router/backend/reply_sink.h"
#include "router/routes/in_flight_barrier.h"
#include "tests/support/fake_worker_services.h"
#include "tests/support/recorded_replies.h"
#include "tests/support/scripted_shard.h"

using namespace santral;
using test::FakeWorkerServices;
using test::ScriptedShard;

namespace {

constexpr std::string_view kGet = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";

using Replies = test::RecordedReplies;

void poll(boost::asio::io_context& io) {
  io.restart();
  io.poll();
}

// One shard, the scripted one; a request times out after 300 ms, and failures never mark the
// shard down (the connection is given up on and opened again).
struct StoppedShard {
  ScriptedShard shard;
  FakeWorkerServices worker{"shards:\n  - {name: shard0, address: " + shard.address() +
                            "}\n"
                            "timeouts: {request_ms: 300}\n"
                            "health: {failures: 100}\n"};
  boost::asio::io_context origin;
  boost::intrusive_ptr<Replies> sink{new Replies};
  router::BackendConnection* connection = nullptr;
  bool passed = false;

  // Runs the worker's, its connections' and origin's work until `ready`, for at most `ms` of
  // wall time (the shard answers on its own thread).
  bool run_until(const std::function<bool()>& ready, int ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
      poll(worker.io());
      poll(worker.connections_io());
      worker.pool().check_deadlines(std::chrono::steady_clock::now());  // the worker's tick
      poll(origin);
      if (ready()) return true;
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void run_for(int ms) {
    run_until([] { return false; }, ms);
  }

  // The shared connection is up (its handshake answered), a GET is on the wire, and the barrier's
  // PING behind it: both sit unread in the stopped shard's socket.
  void get_then_barrier() {
    auto& pool = worker.pool();
    connection = &pool.shared(0, pool.default_profile(), 1);
    REQUIRE(run_until(
        [&] { return connection->up() && connection->in_flight() == 0 && shard.accepted() >= 1; },
        5000));
    connection->send(kGet, sink, 1, 0);
    std::vector<FakeWorkerServices*> workers{&worker};
    router::barrier_workers<FakeWorkerServices>(origin, workers, {0}, nullptr,
                                                [this] { passed = true; });
    REQUIRE(run_until([&] { return shard.unread(0) >= kGet.size() + kPing.size(); }, 5000));
    CHECK_FALSE(passed);
  }

  // The router's clock passes the GET's deadline: it gives up on the connection.
  void time_out() {
    auto late = std::chrono::steady_clock::now() + worker.config().timeouts.request +
                std::chrono::milliseconds(100);
    connection->check_deadlines(late);
    run_for(200);
    REQUIRE(sink->got.size() == 1);  // the client hears of the timeout at once
    INFO("the GET's answer: " << sink->got[0]);
    CHECK(sink->got[0].starts_with("-"));
  }
};

bool upper_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) !=
        std::toupper(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

TEST_CASE("a connection given up on with requests on a stopped shard keeps the barrier waiting") {
  StoppedShard stopped;
  stopped.shard.hold_kills(true);  // no proof comes from the shard in this case
  stopped.get_then_barrier();
  stopped.time_out();

  // The shard has run nothing yet: it still holds the GET and the PING, and runs them when it
  // wakes. The barrier must not pass on the router's timeout.
  CHECK(stopped.shard.unread(0) >= kGet.size() + kPing.size());
  CHECK_FALSE(stopped.passed);
  stopped.run_for(500);
  CHECK_FALSE(stopped.passed);
}

TEST_CASE(
    "CLIENT KILL ID of the given-up connection, answered on another one, lets the barrier pass") {
  StoppedShard stopped;
  stopped.shard.hold_kills(true);
  stopped.get_then_barrier();
  stopped.time_out();
  CHECK_FALSE(stopped.passed);

  // The proof: CLIENT KILL ID 7 (the id the stopped connection's CLIENT ID was answered with),
  // on a connection of its own. While the shard has not answered it, the barrier waits.
  auto& shard = stopped.shard;
  REQUIRE(stopped.run_until([&] { return !shard.kills().empty(); }, 3000));
  auto kill = shard.kills().front();
  CHECK(kill.connection != 0);
  REQUIRE(kill.words.size() >= 4);
  CHECK(upper_equal(kill.words[2], "ID"));
  CHECK(kill.words[3] == "7");
  stopped.run_for(100);
  CHECK_FALSE(stopped.passed);

  // Answered (as Redis 7 does, :1: the client is closed with what it had not read): the GET
  // can never run now, and the barrier passes.
  shard.hold_kills(false);
  REQUIRE(stopped.run_until([&] { return stopped.passed; }, 3000));
  CHECK(shard.unread(0) == 0);
  CHECK(stopped.sink->got.size() == 1);
}

TEST_CASE("a given-up connection whose shard answers everything it held lets the barrier pass") {
  StoppedShard stopped;
  stopped.shard.hold_kills(true);  // the proof comes from the stopped connection itself
  stopped.get_then_barrier();
  stopped.time_out();
  CHECK_FALSE(stopped.passed);

  // The shard wakes and answers the GET and the PING on the old connection: everything sent on
  // it has run, so the barrier passes; the GET's late answer reaches nobody (its client was told
  // of the timeout).
  stopped.shard.wake(0);
  REQUIRE(stopped.run_until([&] { return stopped.passed; }, 3000));
  auto ran = stopped.shard.commands(0);
  REQUIRE(ran.size() >= 2);
  CHECK(ran[ran.size() - 2][0] == "GET");
  CHECK(ran[ran.size() - 1][0] == "PING");
  CHECK(stopped.sink->got.size() == 1);
}

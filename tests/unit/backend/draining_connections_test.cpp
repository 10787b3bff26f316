// router/backend/draining_connections.cpp: a connection Santral gave up on stays draining until
// its shard proves it over (CLIENT KILL ID answered on another connection); a timeout alone
// never counts. The shard is a script on a loopback socket (tests/support/scripted_shard.h).
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/backend/backend_connection.h"
#include "router/backend/draining_connections.h"
#include "router/backend/earlier_runs.h"
#include "router/backend/reply_sink.h"
#include "router/metrics/stats.h"
#include "tests/support/scripted_shard.h"

using santral::router::BackendConnection;
using santral::router::BackendConnectionPtr;
using santral::router::BackendTarget;
using santral::router::DrainingConnections;
using santral::test::ScriptedShard;
using Clock = std::chrono::steady_clock;
using Words = std::vector<std::string>;

namespace {

namespace asio = boost::asio;

class Replies final : public santral::router::ReplySink {
 public:
  void deliver(std::uint64_t slot, std::uint32_t, std::string_view reply) override {
    got.emplace_back(slot, std::string(reply));
  }
  std::vector<std::pair<std::uint64_t, std::string>> got;
};

std::shared_ptr<const santral::config::Config> config() {
  auto c = std::make_shared<santral::config::Config>();
  c->timeouts.request = std::chrono::milliseconds(200);
  c->timeouts.connect = std::chrono::seconds(30);
  c->health.failures = 100;  // a timeout reconnects; it never marks the shard down here
  return c;
}

// The io_context outlives everything that runs on it.
struct Loop {
  asio::io_context io;
  santral::router::ShardStats stats;

  template <typename Done>
  bool run_until(Done done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    auto until = Clock::now() + limit;
    while (!done() && Clock::now() < until) {
      io.restart();
      io.run_for(std::chrono::milliseconds(5));
    }
    return done();
  }
};

BackendConnectionPtr connect(Loop& loop, const ScriptedShard& shard) {
  return BackendConnection::open(loop.io, BackendTarget{0, "s0", {"127.0.0.1", shard.port()}, {}},
                                 config(), loop.stats);
}

std::string address(const ScriptedShard& shard) {
  return santral::config::Endpoint{"127.0.0.1", shard.port()}.text();
}

// A shard that tells each connection its id (7 for the first, 8, ...), answers PING and
// GET k, and answers kills as `kill` says.
ScriptedShard::Answer shard_script(std::function<std::optional<std::string>(const Words&)> kill) {
  return [kill](std::size_t connection, const Words& words) -> std::optional<std::string> {
    if (words == Words{"CLIENT", "ID"}) return ":" + std::to_string(7 + connection) + "\r\n";
    if (words.size() == 4 && words[0] == "CLIENT" && words[1] == "KILL") return kill(words);
    if (words[0] == "PING") return "+PONG\r\n";
    return "$1\r\nv\r\n";
  };
}

}  // namespace

TEST_CASE("a connection given up on is draining until the shard answers the kill of its id") {
  Loop loop;
  std::optional<std::string> kill_answer;  // held while empty: a shard that has not woken
  ScriptedShard shard(loop.io, shard_script([&](const Words&) { return kill_answer; }));
  auto connection = connect(loop, shard);
  boost::intrusive_ptr<Replies> replies(new Replies);

  connection->send("*1\r\n$4\r\nPING\r\n", replies, 1, 0);
  REQUIRE(loop.run_until([&] { return replies->got.size() == 1; }));
  REQUIRE(connection->server_client_id() == 7);

  // The shard stops reading (SIGSTOP); a GET is given up on at its timeout.
  shard.reading(0, false);
  connection->send("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", replies, 2, 0);
  loop.run_until([] { return false; }, std::chrono::milliseconds(50));
  connection->check_deadlines(Clock::now() + std::chrono::seconds(1));
  REQUIRE(replies->got.size() == 2);
  CHECK(replies->got[1].second.find("did not answer") != std::string::npos);

  auto& draining = DrainingConnections::of(loop.io);
  bool proven = false;
  draining.after(address(shard), [&] { proven = true; });
  CHECK(draining.draining(address(shard)));
  // Another connection carries CLIENT KILL ID 7; unanswered, nothing is proven, however long.
  REQUIRE(loop.run_until([&] {
    for (std::size_t c = 0; c < shard.accepted(); ++c)
      for (const auto& request : shard.requests(c))
        if (request == "CLIENT KILL ID 7") return true;
    return false;
  }));
  loop.run_until([] { return false; }, std::chrono::milliseconds(300));
  CHECK_FALSE(proven);
  REQUIRE(draining.list().size() == 1);
  CHECK(draining.list()[0].client_id == 7);

  // The shard wakes and answers the kill it holds: one client killed.
  kill_answer = ":1\r\n";
  for (std::size_t c = 1; c < shard.accepted(); ++c) {
    for (const auto& request : shard.requests(c))
      if (request == "CLIENT KILL ID 7") shard.write(c, ":1\r\n");
  }
  REQUIRE(loop.run_until([&] { return proven; }));
  CHECK_FALSE(draining.draining(address(shard)));
  connection->stop();
}

TEST_CASE("a kill that found no client proves it gone, and waiters before a drain do not wait") {
  Loop loop;
  ScriptedShard shard(
      loop.io, shard_script([](const Words&) { return std::string(":0\r\n"); }));
  auto& draining = DrainingConnections::of(loop.io);
  bool before = false;
  draining.after(address(shard), [&] { before = true; });
  CHECK(before);  // nothing draining: at once

  auto connection = connect(loop, shard);
  boost::intrusive_ptr<Replies> replies(new Replies);
  connection->send("*1\r\n$4\r\nPING\r\n", replies, 1, 0);
  REQUIRE(loop.run_until([&] { return replies->got.size() == 1; }));
  shard.reading(0, false);
  connection->send("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", replies, 2, 0);
  loop.run_until([] { return false; }, std::chrono::milliseconds(50));
  connection->stop();  // stopped with a request on the wire: draining too
  bool proven = false;
  draining.after_all([&] { proven = true; });
  REQUIRE(loop.run_until([&] { return proven; }));
  CHECK(draining.proven() == 1);
}

TEST_CASE("a connection given up on before its requests went out is not draining") {
  Loop loop;
  // The shard never answers the handshake: the request waits behind it, never sent.
  ScriptedShard shard(loop.io, [](std::size_t, const Words&) { return std::nullopt; });
  auto connection = connect(loop, shard);
  boost::intrusive_ptr<Replies> replies(new Replies);
  connection->send("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", replies, 1, 0);
  REQUIRE(loop.run_until([&] { return shard.requests(0).size() == 1; }));
  CHECK(shard.requests(0)[0] == "CLIENT ID");
  connection->check_deadlines(Clock::now() + std::chrono::seconds(1));
  REQUIRE(replies->got.size() == 1);
  CHECK_FALSE(DrainingConnections::of(loop.io).draining(address(shard)));
  connection->stop();
}

TEST_CASE("a restarted router finds the clients its earlier runs left, and only those") {
  using santral::router::earlier_run_clients;
  std::string list =
      "id=3 addr=127.0.0.1:50001 laddr=127.0.0.1:7000 fd=8 name=santral:h:127.0.0.1:6380:aa age=9 "
      "flags=N db=0 cmd=get user=default resp=2\n"
      "id=4 addr=127.0.0.1:50002 laddr=127.0.0.1:7000 fd=9 name=santral:h:127.0.0.1:6380:bb age=1 "
      "flags=N db=0 cmd=client|id user=default resp=2\n"
      "id=5 addr=127.0.0.1:50003 laddr=127.0.0.1:7000 fd=10 name= age=1 flags=N db=0 cmd=get "
      "user=default resp=2\n"
      "id=6 addr=127.0.0.1:50004 laddr=127.0.0.1:7000 fd=11 name=santral:h:127.0.0.1:6381:aa "
      "age=1 flags=N db=0 cmd=get user=default resp=2\n";
  auto ids = earlier_run_clients(list, "santral:h:127.0.0.1:6380:", "santral:h:127.0.0.1:6380:bb");
  CHECK(ids == std::vector<std::string>{"3"});
  CHECK(earlier_run_clients(list, "", "x").empty());
}

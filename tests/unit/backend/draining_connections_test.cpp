// router/backend/draining_connections.cpp: a connection Santral gave up on stays draining until
// its shard proves it over (CLIENT KILL ID answered on another connection); a timeout alone
// never counts. The shard is played on a loopback socket (tests/support/scripted_shard.h).
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.h"
#include "router/backend/backend_connection.h"
#include "router/backend/connection_name.h"
#include "router/backend/draining_connections.h"
#include "router/backend/earlier_runs.h"
#include "router/backend/reply_sink.h"
#include "router/metrics/stats.h"
#include "tests/support/scripted_shard.h"
#include "tests/support/shard_loop.h"

using santral::router::BackendConnection;
using santral::router::BackendConnectionPtr;
using santral::router::DrainingConnections;
using santral::test::ReplyLog;
using santral::test::ReplyLogPtr;
using santral::test::ScriptedShard;
using santral::test::ShardLoop;
using Clock = std::chrono::steady_clock;
using Words = std::vector<std::string>;

namespace {

namespace asio = boost::asio;

std::string address(int port) {
  return santral::config::Endpoint{"127.0.0.1", static_cast<std::uint16_t>(port)}.text();
}

// The shard stopped (SIGSTOP) with a GET unread; the router gives up on it at its timeout.
BackendConnectionPtr give_up_on_a_get(ShardLoop& loop, ScriptedShard& shard, ReplyLog& replies) {
  auto connection = loop.open(shard.port());
  REQUIRE(loop.run_until([&] { return connection->server_client_id() == 7; }));
  connection->send("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", &replies, 2, 0);
  REQUIRE(loop.run_until([&] { return shard.unread(0) > 0; }));
  connection->check_deadlines(Clock::now() + std::chrono::seconds(1));
  REQUIRE(replies.got.size() == 1);
  CHECK(replies.got[0].second.find("did not answer") != std::string::npos);
  return connection;
}

// The shard stopped with a GET unread and holding kills: the router has given up on the GET, so
// its connection drains, and the kill of it is out (held by the shard).
struct KillHeld {
  ShardLoop loop;
  ScriptedShard shard;  // its first connection stops after its handshake
  ReplyLogPtr replies{new ReplyLog};
  DrainingConnections& draining{DrainingConnections::of(loop.io)};
  BackendConnectionPtr connection;
  bool proven = false;

  KillHeld() {
    shard.hold_kills(true);
    connection = give_up_on_a_get(loop, shard, *replies);
    draining.after(address(shard.port()), [this] { proven = true; });
    REQUIRE(loop.run_until([&] { return !shard.kills().empty(); }));
  }
  ~KillHeld() { connection->stop(); }
  KillHeld(const KillHeld&) = delete;
  KillHeld& operator=(const KillHeld&) = delete;
};

}  // namespace

TEST_CASE("a connection given up on is draining until the shard answers the kill of its id") {
  KillHeld held;
  auto& shard = held.shard;
  // Another connection carries CLIENT KILL ID 7; unanswered, nothing is proven, however long.
  CHECK(held.draining.draining(address(shard.port())));
  CHECK(shard.kills()[0].connection != 0);
  CHECK(shard.kills()[0].words == Words{"CLIENT", "KILL", "ID", "7"});
  held.loop.run_until([] { return false; }, std::chrono::milliseconds(300));
  CHECK_FALSE(held.proven);
  REQUIRE(held.draining.list().size() == 1);
  CHECK(held.draining.list()[0].client_id == 7);

  // The shard wakes: it ends the connection and answers the kill (:1, one client killed).
  shard.hold_kills(false);
  REQUIRE(held.loop.run_until([&] { return held.proven; }));
  CHECK_FALSE(held.draining.draining(address(shard.port())));
  CHECK(held.draining.proven() == 1);
}

// A move's switch must not wait for good on a kill a link lost without closing its connection
// (a half-open TCP connection; the fault harness's blackhole).
TEST_CASE("a kill its link lost without a close is sent again on a new connection") {
  KillHeld held;
  auto& shard = held.shard;
  // The kill's connection goes silent for good; the shard serves new connections again.
  int lost = shard.kills()[0].connection;
  shard.lose(lost);
  shard.hold_kills(false);
  REQUIRE(held.loop.run_until([&] { return held.proven; }));
  CHECK(held.draining.proven() == 1);
  REQUIRE(shard.kills().size() >= 2);
  CHECK(shard.kills().back().connection != lost);
  CHECK(shard.kills().back().words == Words{"CLIENT", "KILL", "ID", "7"});
}

TEST_CASE(
    "a connection stopped with requests on the wire drains too; earlier waiters do not wait") {
  ShardLoop loop;
  ScriptedShard shard;
  auto& draining = DrainingConnections::of(loop.io);
  bool before = false;
  draining.after(address(shard.port()), [&] { before = true; });
  CHECK(before);  // nothing draining: at once

  auto connection = loop.open(shard.port());
  REQUIRE(loop.run_until([&] { return connection->server_client_id() == 7; }));
  ReplyLogPtr replies(new ReplyLog);
  connection->send("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", replies, 1, 0);
  REQUIRE(loop.run_until([&] { return shard.unread(0) > 0; }));
  connection->stop();
  bool proven = false;
  draining.after_all([&] { proven = true; });
  REQUIRE(loop.run_until([&] { return proven; }));
  CHECK(draining.proven() == 1);
}

TEST_CASE("a connection given up on before its requests went out is not draining") {
  ShardLoop loop;
  // A server that accepts and never reads: the handshake is never answered, so the request
  // waits behind it, never sent.
  asio::ip::tcp::acceptor acceptor(loop.io, {asio::ip::address_v4::loopback(), 0});
  asio::ip::tcp::socket accepted(loop.io);
  acceptor.async_accept(accepted, [](boost::system::error_code) {});
  int port = acceptor.local_endpoint().port();
  auto connection = loop.open(port);
  ReplyLogPtr replies(new ReplyLog);
  connection->send("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", replies, 1, 0);
  REQUIRE(loop.run_until([&] { return connection->state() == BackendConnection::State::Up; }));
  connection->check_deadlines(Clock::now() + std::chrono::seconds(1));
  REQUIRE(replies->got.size() == 1);
  CHECK_FALSE(DrainingConnections::of(loop.io).draining(address(port)));
  connection->stop();
}

TEST_CASE(
    "a restarted router asks again on a new connection when its CLIENT LIST goes unanswered") {
  ShardLoop loop;
  ScriptedShard shard;  // its first connection stops after its handshake
  santral::router::name_connections("earlier-runs-test");
  auto config = std::make_shared<santral::config::Config>();
  config->timeouts.request = std::chrono::milliseconds(200);
  santral::router::BackendTarget server{
      0, "s0", {"127.0.0.1", static_cast<std::uint16_t>(shard.port())}, {}};
  bool ended = false;
  santral::router::end_earlier_runs(loop.io, {server}, config, [&] { ended = true; });
  REQUIRE(loop.run_until([&] { return shard.unread(0) > 0; }));  // CLIENT LIST, not read yet

  // That connection goes silent for good (a link that lost it without a close).
  shard.lose(0);
  REQUIRE(loop.run_until([&] { return ended; }));
  CHECK(shard.accepted() >= 2);
  santral::router::name_connections("");
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

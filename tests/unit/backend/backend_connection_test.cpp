// router/backend/backend_connection.cpp against a scripted shard on a loopback socket
// (tests/support/scripted_shard.h): the pipeline's order, replies split across reads, a request
// that times out, reconnecting, and requests held behind the handshake.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "router/backend/backend_connection.h"
#include "tests/support/scripted_shard.h"
#include "tests/support/shard_loop.h"

namespace {
namespace backend_connection_cases {

using santral::router::BackendConnection;
using santral::router::BackendConnectionPtr;
using santral::router::ConnectionRole;
using santral::test::ReplyLog;
using santral::test::ReplyLogPtr;
using santral::test::ScriptedShard;
using santral::test::ShardLoop;
using Clock = std::chrono::steady_clock;

std::string echo_request(const std::string& word) {
  return "*2\r\n$4\r\nECHO\r\n$" + std::to_string(word.size()) + "\r\n" + word + "\r\n";
}

std::string bulk(const std::string& word) {
  return "$" + std::to_string(word.size()) + "\r\n" + word + "\r\n";
}

bool has_command(const std::vector<std::vector<std::string>>& commands,
                 const std::vector<std::string>& words) {
  return std::find(commands.begin(), commands.end(), words) != commands.end();
}

TEST_CASE("backend connection: pipelined replies reach each request's sink in the order sent") {
  ShardLoop loop;
  ScriptedShard shard(false);
  auto connection = loop.open(shard.port());
  REQUIRE(loop.run_until([&] { return connection->server_client_id() == 7; }));
  ReplyLogPtr replies(new ReplyLog);
  constexpr std::uint64_t kRequests = 2000;  // several writes and reads' worth
  for (std::uint64_t i = 0; i < kRequests; ++i)
    connection->send(echo_request("reply-" + std::to_string(i)), replies, i, 0);
  REQUIRE(loop.run_until([&] { return replies->got.size() == kRequests; }));
  for (std::uint64_t i = 0; i < kRequests; ++i) {
    INFO("request " << i);
    CHECK(replies->got[i].first == i);
    CHECK(replies->got[i].second == bulk("reply-" + std::to_string(i)));
  }
  connection->stop();
}

TEST_CASE("backend connection: a reply split across reads is delivered whole, once") {
  ShardLoop loop;
  ScriptedShard shard(false);
  auto connection = loop.open(shard.port());
  REQUIRE(loop.run_until([&] { return connection->server_client_id() == 7; }));
  ReplyLogPtr replies(new ReplyLog);
  // `first` bytes of the reply arrive and are read; the rest comes later.
  auto split_at = [&](const std::string& word, std::size_t first) {
    std::size_t delivered = replies->got.size();
    auto received = loop.stats.bytes_received;
    shard.split_replies(first);
    connection->send(echo_request(word), replies, first, 0);
    REQUIRE(loop.run_until([&] { return loop.stats.bytes_received == received + first; }));
    CHECK(replies->got.size() == delivered);
    shard.send_rest(0);
    REQUIRE(loop.run_until([&] { return replies->got.size() > delivered; }));
    REQUIRE(replies->got.size() == delivered + 1);
    CHECK(replies->got.back().first == first);
    CHECK(replies->got.back().second == bulk(word));
  };
  std::string word = "split-reply";
  for (std::size_t first = 1; first < bulk(word).size(); ++first) {
    INFO("split after byte " << first);
    split_at(word, first);
  }
  // Larger than the connection's first read buffer: split in the middle of the bulk.
  split_at(std::string(100000, 'x'), 50000);
  // Nothing more arrives for any of them.
  shard.split_replies(0);
  connection->send(echo_request("last"), replies, 1000000, 0);
  REQUIRE(loop.run_until(
      [&] { return !replies->got.empty() && replies->got.back().first == 1000000; }));
  CHECK(replies->got.size() == (bulk(word).size() - 1) + 2);
  connection->stop();
}

TEST_CASE("backend connection: a request not answered in time fails and its connection goes") {
  ShardLoop loop;
  ScriptedShard shard;     // its first connection stops reading after its handshake
  shard.hold_kills(true);  // and stays open: the late reply is really sent
  auto connection = loop.open(shard.port());
  REQUIRE(loop.run_until([&] { return connection->server_client_id() == 7; }));
  ReplyLogPtr replies(new ReplyLog);
  connection->send("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", replies, 1, 0);
  REQUIRE(loop.run_until([&] { return shard.unread(0) > 0; }));
  connection->check_deadlines(Clock::now() + std::chrono::seconds(1));
  REQUIRE(replies->got.size() == 1);
  CHECK(replies->got[0].first == 1);
  CHECK(replies->got[0].second.find("did not answer within 200 ms (timeouts.request_ms)") !=
        std::string::npos);

  // The stopped shard wakes and answers the GET (nil); the request after it is answered on
  // another connection, with its own reply.
  connection->send(echo_request("after"), replies, 2, 0);
  shard.wake(0);
  REQUIRE(loop.run_until([&] { return replies->got.size() == 2; }));
  CHECK(replies->got[1] == std::pair<std::uint64_t, std::string>{2, bulk("after")});
  CHECK(connection->server_client_id() != 7);
  CHECK_FALSE(has_command(shard.commands(0), {"ECHO", "after"}));
  connection->stop();
}

TEST_CASE("backend connection: a shared connection reconnects once the shard closes it") {
  ShardLoop loop;
  ScriptedShard shard(false);
  auto connection = loop.open(shard.port());
  REQUIRE(loop.run_until([&] { return connection->server_client_id() == 7; }));
  shard.drop(0);
  // The shard's second connection, handshake answered.
  REQUIRE(loop.run_until([&] { return connection->server_client_id() == 8; }));
  ReplyLogPtr replies(new ReplyLog);
  connection->send(echo_request("again"), replies, 1, 0);
  REQUIRE(loop.run_until([&] { return !replies->got.empty(); }));
  CHECK(replies->got[0] == std::pair<std::uint64_t, std::string>{1, bulk("again")});
  CHECK(has_command(shard.commands(1), {"ECHO", "again"}));
  connection->stop();
}

TEST_CASE("backend connection: a lent connection the shard closed stays down; requests fail") {
  ShardLoop loop;
  ScriptedShard shard(false);
  auto connection = loop.open(shard.port(), ConnectionRole::Dedicated);
  REQUIRE(loop.run_until([&] { return connection->server_client_id() == 7; }));
  shard.drop(0);
  REQUIRE(loop.run_until([&] { return connection->state() == BackendConnection::State::Down; }));
  ReplyLogPtr replies(new ReplyLog);
  connection->send(echo_request("lost"), replies, 1, 0);
  REQUIRE(replies->got.size() == 1);  // at once, not after a round trip
  CHECK(replies->got[0].second.starts_with("-ERR"));
  CHECK(replies->got[0].second.find("the connection was lost") != std::string::npos);
  // A new connection would have lost the client's MULTI or WATCH: none is made.
  loop.run_until([] { return false; }, std::chrono::milliseconds(100));
  CHECK(shard.accepted() == 1);
  CHECK(connection->state() == BackendConnection::State::Down);
  connection->stop();
}

TEST_CASE("backend connection: requests wait until the handshake has answered") {
  ShardLoop loop;
  ScriptedShard shard(false);
  shard.hold_client_ids(true);
  auto connection = loop.open(shard.port());
  ReplyLogPtr replies(new ReplyLog);
  connection->send(echo_request("early"), replies, 1, 0);  // before it connected
  REQUIRE(loop.run_until([&] { return has_command(shard.commands(0), {"CLIENT", "ID"}); }));
  connection->send(echo_request("later"), replies, 2, 0);  // connected, handshake unanswered
  CHECK(connection->handshaking());
  // Whatever the router writes meanwhile would be the shard's to read now.
  loop.run_until([] { return false; }, std::chrono::milliseconds(200));
  CHECK(shard.unread(0) == 0);
  CHECK(replies->got.empty());

  shard.hold_client_ids(false);
  REQUIRE(loop.run_until([&] { return replies->got.size() == 2; }));
  CHECK(connection->server_client_id() == 7);
  CHECK(replies->got[0] == std::pair<std::uint64_t, std::string>{1, bulk("early")});
  CHECK(replies->got[1] == std::pair<std::uint64_t, std::string>{2, bulk("later")});
  auto commands = shard.commands(0);
  REQUIRE(commands.size() >= 3);
  CHECK(commands[commands.size() - 3] == std::vector<std::string>{"CLIENT", "ID"});
  connection->stop();
}

}  // namespace backend_connection_cases
}  // namespace

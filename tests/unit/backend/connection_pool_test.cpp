// router/backend/connection_pool.cpp: lending dedicated connections (transactions, blocking
// commands) and taking them back. No redis-server is needed: while the io_context is not run a
// new connection stays Connecting, which counts as usable, and a loopback port nobody listens
// on refuses connections, which marks its shard down.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.h"
#include "config/hashkit/hash_functions.h"
#include "placement/topology.h"
#include "router/backend/backend_connection.h"
#include "router/backend/connection_pool.h"
#include "router/backend/reply_sink.h"
#include "router/metrics/stats.h"

using santral::router::BackendConnection;
using santral::router::BackendConnectionPtr;
using santral::router::ConnectionPool;
using santral::router::ConnectionProfile;
using State = santral::router::BackendConnection::State;
using Clock = std::chrono::steady_clock;

namespace {

namespace asio = boost::asio;

// A loopback port nobody listens on: bound once to learn a free one, then closed.
std::uint16_t closed_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::address_v4::loopback(), 0});
  return acceptor.local_endpoint().port();
}

// Shards by name, each on its own closed loopback port unless given one.
santral::placement::TopologyPtr topology(
    const std::vector<std::pair<std::string, std::uint16_t>>& shards, std::uint64_t version = 1) {
  santral::config::Config c;
  c.hash = santral::hashkit::hash_function_named("fnv1a_64").value();
  // Connections the io_context never gets to connect must not time out while a test runs on
  // a busy machine.
  c.timeouts.connect = std::chrono::minutes(5);
  for (const auto& [name, port] : shards) {
    santral::config::ShardConfig s;
    s.name = name;
    s.ring_name = name;
    s.address = {"127.0.0.1", port};
    c.shards.push_back(s);
  }
  return santral::placement::make_topology(std::move(c), version);
}

// One worker's pool; stopped, and its cancelled handlers run, before the io_context goes.
struct Worker {
  santral::placement::TopologyPtr topology;
  asio::io_context io;
  santral::router::WorkerStats stats;
  santral::router::ReplicaFreshness freshness;
  ConnectionPool pool{io, stats, freshness};

  explicit Worker(const santral::placement::TopologyPtr& t) : topology(t) { pool.apply(*t); }
  ~Worker() {
    pool.stop();
    io.restart();
    io.run_for(std::chrono::seconds(5));
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs the event loop until `done` or 10 s.
  template <typename Done>
  bool run_until(Done done) {
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while (!done() && Clock::now() < deadline) io.run_one_for(std::chrono::milliseconds(20));
    return done();
  }
};

// Records the replies a connection delivers.
class Replies final : public santral::router::ReplySink {
 public:
  void deliver(std::uint64_t slot, std::uint32_t, std::string_view reply) override {
    got.emplace_back(slot, std::string(reply));
  }
  std::vector<std::pair<std::uint64_t, std::string>> got;
};

const ConnectionProfile kDefault{0, 2};

}  // namespace

TEST_CASE(
    "a connection given back while still connecting is lent again, for its shard and "
    "profile only") {
  Worker w(topology({{"a", closed_port()}, {"b", closed_port()}}));
  REQUIRE(w.pool.default_profile() == kDefault);
  BackendConnectionPtr c = w.pool.lend(0, kDefault);
  CHECK(c->state() == State::Connecting);
  CHECK(c->usable());
  CHECK(c->target().shard_index == 0);
  CHECK(c->target().shard_name == "a");

  // While it is out, the next borrower gets a connection of its own.
  BackendConnectionPtr other = w.pool.lend(0, kDefault);
  CHECK(other != c);
  w.pool.give_back(other);

  w.pool.give_back(c);
  CHECK(c->state() == State::Connecting);  // not closed: kept for the next borrower
  BackendConnectionPtr b = w.pool.lend(1, kDefault);
  CHECK(b != c);
  CHECK(b != other);
  CHECK(b->target().shard_name == "b");
  BackendConnectionPtr db1 = w.pool.lend(0, {1, 2});
  CHECK(db1 != c);
  CHECK(db1 != other);
  CHECK(db1->target().profile.database == 1);
  BackendConnectionPtr resp3 = w.pool.lend(0, {0, 3});
  CHECK(resp3 != c);
  CHECK(resp3 != other);

  // Shard a, default profile: the two given back, and then a new one.
  std::set<BackendConnectionPtr> again = {w.pool.lend(0, kDefault), w.pool.lend(0, kDefault)};
  CHECK(again == std::set<BackendConnectionPtr>{c, other});
  BackendConnectionPtr third = w.pool.lend(0, kDefault);
  CHECK(third != c);
  CHECK(third != other);
}

TEST_CASE(
    "a connection given back with a reply still owed is kept; the next borrower queues "
    "behind it") {
  Worker w(topology({{"a", closed_port()}}));
  auto* replies = new Replies;
  santral::router::ReplySinkPtr sink(replies);
  BackendConnectionPtr c = w.pool.lend(0, kDefault);
  c->send("*1\r\n$4\r\nEXEC\r\n", sink, 7, 0);
  CHECK(c->in_flight() == 1);
  w.pool.give_back(c);
  BackendConnectionPtr next = w.pool.lend(0, kDefault);
  CHECK(next == c);
  CHECK(next->in_flight() == 1);
  CHECK(replies->got.empty());
  // Stopping fails what is in flight, with the shutting-down error.
  w.pool.stop();
  CHECK(c->state() == State::Stopped);
  REQUIRE(replies->got.size() == 1);
  CHECK(replies->got[0].first == 7);
  CHECK(replies->got[0].second.starts_with("-ERR santral: the router is shutting down"));
}

TEST_CASE(
    "at most 16 idle connections per shard and profile are kept; the others close once "
    "answered") {
  Worker w(topology({{"a", closed_port()}}));
  std::vector<BackendConnectionPtr> first;
  for (int i = 0; i < 20; ++i) first.push_back(w.pool.lend(0, kDefault));
  REQUIRE(std::set<BackendConnectionPtr>(first.begin(), first.end()).size() == 20);
  // The 17th carries a request when it comes back: it is not kept, but it closes only once
  // it has answered.
  auto* replies = new Replies;
  santral::router::ReplySinkPtr sink(replies);
  first[16]->send("*1\r\n$4\r\nPING\r\n", sink, 1, 0);
  for (auto& c : first) w.pool.give_back(c);
  w.pool.check_deadlines(Clock::now());
  for (int i = 0; i < 20; ++i) {
    INFO("connection " << i);
    CHECK((first[i]->state() == State::Stopped) == (i > 16));
  }
  CHECK(replies->got.empty());

  std::set<BackendConnectionPtr> kept(first.begin(), first.begin() + 16);
  std::size_t reused = 0;
  std::vector<BackendConnectionPtr> second;
  for (int i = 0; i < 20; ++i) {
    second.push_back(w.pool.lend(0, kDefault));
    reused += kept.count(second.back());
    CHECK(second.back() != first[16]);
    CHECK(second.back()->usable());
  }
  CHECK(reused == 16);
}

TEST_CASE("a dropped connection closes and is never lent again") {
  Worker w(topology({{"a", closed_port()}}));
  BackendConnectionPtr c = w.pool.lend(0, kDefault);
  w.pool.drop(c);
  CHECK(c->state() == State::Stopped);
  CHECK_FALSE(c->usable());
  BackendConnectionPtr next = w.pool.lend(0, kDefault);
  CHECK(next != c);
  CHECK(next->usable());
}

TEST_CASE(
    "a lent connection follows its shard through a reload; given back after its shard "
    "left the map, it closes") {
  std::uint16_t port_a = closed_port(), port_b = closed_port();
  Worker w(topology({{"a", port_a}, {"b", port_b}}));
  BackendConnectionPtr on_b = w.pool.lend(1, kDefault);
  BackendConnectionPtr on_a = w.pool.lend(0, kDefault);

  // b's address is now the first shard, named x; a is gone.
  w.pool.apply(*topology({{"x", port_b}}, 2));
  CHECK(on_b->target().shard_index == 0);
  CHECK(on_b->target().shard_name == "x");
  w.pool.give_back(on_b);
  CHECK(w.pool.lend(0, kDefault) == on_b);  // its address is still in the map: kept

  w.pool.give_back(on_a);  // its address left the map
  w.pool.check_deadlines(Clock::now());
  CHECK(on_a->state() == State::Stopped);
}

TEST_CASE("a shard marked down lends connections that fail at once; a refused one is not kept") {
  Worker w(topology({{"a", closed_port()}}));
  BackendConnectionPtr early = w.pool.lend(0, kDefault);  // before anything is known
  CHECK(early->usable());
  REQUIRE(w.run_until([&] { return w.pool.down_reason(0).has_value(); }));
  std::string reason = *w.pool.down_reason(0);
  INFO(reason);
  CHECK_THAT(reason, Catch::Contains("refused"));

  // The early one was refused too: a dedicated connection never reconnects.
  REQUIRE(w.run_until([&] { return early->state() == State::Down; }));
  CHECK_FALSE(early->usable());
  w.pool.give_back(early);
  w.pool.check_deadlines(Clock::now());
  CHECK(early->state() == State::Stopped);

  BackendConnectionPtr c = w.pool.lend(0, kDefault);
  CHECK(c != early);
  CHECK(c->state() == State::Down);
  CHECK(c->ejected());
  CHECK(c->down_reason() == reason);
  auto* replies = new Replies;
  santral::router::ReplySinkPtr sink(replies);
  auto errors_before = w.stats.shards["a"].errors;
  c->send("*1\r\n$5\r\nMULTI\r\n", sink, 3, 0);
  REQUIRE(replies->got.size() == 1);  // at once, without running the event loop
  CHECK(replies->got[0].first == 3);
  CHECK_THAT(replies->got[0].second, Catch::StartsWith("-ERR santral: shard 'a' (127.0.0.1:"));
  CHECK_THAT(replies->got[0].second, Catch::Contains(reason));
  CHECK(w.stats.shards["a"].errors == errors_before + 1);

  w.pool.give_back(c);
  BackendConnectionPtr next = w.pool.lend(0, kDefault);
  CHECK(next != c);
  CHECK(next->state() == State::Down);
}

// What a shard connection has sent, oldest first (router/backend/in_flight_requests.h): whose
// the next reply is, which request is overdue and by which setting, and who hears of a failure.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "router/backend/in_flight_requests.h"

using namespace santral::router;
namespace config = santral::config;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Sink : ReplySink {
  void deliver(std::uint64_t slot, std::uint32_t, std::string_view reply) override {
    got.emplace_back(slot, std::string(reply));
  }
  void timed(std::uint64_t, std::uint32_t, const ShardTiming& timing) override {
    shards.push_back(timing.shard);
  }
  std::vector<std::pair<std::uint64_t, std::string>> got;
  std::vector<std::size_t> shards;
};

const Clock::time_point t0{};

InFlightRequests::Request request(ReplySinkPtr sink, std::uint64_t slot, ReplyOwner owner,
                                  Clock::duration limit) {
  return {std::move(sink), slot, 0, owner, t0, t0 + limit};
}

}  // namespace

TEST_CASE("in-flight requests: the handshake goes ahead of what was queued, in its order") {
  InFlightRequests in_flight;
  boost::intrusive_ptr<Sink> sink(new Sink);
  in_flight.push_back(request(sink, 1, ReplyOwner::Client, 2s));
  CHECK_FALSE(in_flight.handshaking());
  in_flight.put_first({ReplyOwner::Handshake, ReplyOwner::Naming, ReplyOwner::ClientId}, t0, 2s);
  REQUIRE(in_flight.size() == 4);
  CHECK(in_flight.handshaking());
  CHECK(in_flight.take_front().owner == ReplyOwner::Handshake);
  CHECK(in_flight.take_front().owner == ReplyOwner::Naming);
  CHECK(in_flight.handshaking());  // CLIENT ID still unanswered
  CHECK(in_flight.take_front().owner == ReplyOwner::ClientId);
  CHECK(in_flight.take_front().slot == 1);
  CHECK(in_flight.empty());
}

TEST_CASE("in-flight requests: given up on, only clients' requests (and a MULTI) may still run") {
  InFlightRequests in_flight;
  in_flight.push_back(request(nullptr, 0, ReplyOwner::Probe, 2s));
  in_flight.push_back(request(nullptr, 0, ReplyOwner::WriteConcern, 2s));
  CHECK_FALSE(in_flight.carries_requests());
  in_flight.push_back(request(nullptr, 0, ReplyOwner::Silent, 2s));
  CHECK(in_flight.carries_requests());
}

TEST_CASE("in-flight requests: the oldest past its deadline names its limit and setting") {
  config::Timeouts timeouts;
  timeouts.request = 2000ms;
  timeouts.script = 60000ms;
  InFlightRequests in_flight;
  CHECK_FALSE(in_flight.overdue(t0 + 1h, timeouts));
  in_flight.push_back(request(nullptr, 0, ReplyOwner::Probe, 2000ms));
  in_flight.push_back(request(nullptr, 0, ReplyOwner::Client, 1ms));
  CHECK_FALSE(in_flight.overdue(t0 + 2000ms, timeouts));  // only the oldest counts
  auto probe = in_flight.overdue(t0 + 2001ms, timeouts);
  REQUIRE(probe);
  CHECK_FALSE(probe->client);  // the connection's own PING
  CHECK(probe->limit == 2000ms);
  CHECK(probe->setting == "timeouts.request_ms");

  InFlightRequests scripts;
  scripts.push_back(request(nullptr, 0, ReplyOwner::Client, 60000ms));
  auto script = scripts.overdue(t0 + 61s, timeouts);
  REQUIRE(script);
  CHECK(script->client);
  CHECK(script->setting == "timeouts.script_ms");
  InFlightRequests writes;
  writes.push_back(request(nullptr, 0, ReplyOwner::WriteConcern, 3s));
  CHECK(writes.overdue(t0 + 4s, timeouts)->client);  // the WAIT behind clients' writes
}

TEST_CASE("in-flight requests: a failure reaches each client's request, not the connection's") {
  ShardStats stats;
  InFlightRequests in_flight;
  boost::intrusive_ptr<Sink> sink(new Sink);
  in_flight.push_back(request(sink, 1, ReplyOwner::Client, 2s));
  in_flight.push_back(request(nullptr, 0, ReplyOwner::WriteConcern, 2s));
  in_flight.push_back(request(sink, 2, ReplyOwner::ClientWrite, 2s));
  in_flight.push_back(request(nullptr, 0, ReplyOwner::Silent, 2s));
  auto failed = in_flight.take();
  CHECK(in_flight.empty());
  REQUIRE(failed.size() == 4);
  failed.fail("-ERR lost\r\n", 3, stats);
  REQUIRE(sink->got.size() == 2);
  CHECK(sink->got[0] == std::make_pair(std::uint64_t{1}, std::string("-ERR lost\r\n")));
  CHECK(sink->got[1].first == 2);
  CHECK(sink->shards == std::vector<std::size_t>{3, 3});
  CHECK(stats.errors == 2);
}

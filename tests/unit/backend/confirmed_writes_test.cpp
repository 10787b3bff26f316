// Write concern on one shard connection (router/backend/confirmed_writes.h): one WAIT behind a
// batch of writes, the writes' replies held until it answers, NOREPLICAS short of the count.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "router/backend/confirmed_writes.h"
#include "router/metrics/stats.h"

using namespace santral::router;
namespace config = santral::config;
using namespace std::chrono_literals;

namespace {

class Replies final : public ReplySink {
 public:
  void deliver(std::uint64_t slot, std::uint32_t, std::string_view reply) override {
    got.emplace_back(slot, std::string(reply));
  }
  std::vector<std::pair<std::uint64_t, std::string>> got;
};

const std::string kSet = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
const std::string kGet = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
const std::string kMulti = "*1\r\n$5\r\nMULTI\r\n";
const std::string kExec = "*1\r\n$4\r\nEXEC\r\n";

}  // namespace

TEST_CASE("confirmed writes: one WAIT behind a batch asks for the most any write asked") {
  ConfirmedWrites writes(true);
  CHECK_FALSE(writes.wait_due());
  CHECK(writes.sent(kSet, {2, 20ms}));
  CHECK_FALSE(writes.sent(kGet, {3, 500ms}));  // a read is not held
  CHECK(writes.sent(kSet, {1, 50ms}));
  auto wait = writes.wait_due();
  REQUIRE(wait);
  CHECK(*wait == config::WriteConcern{2, 50ms});
  CHECK_FALSE(writes.wait_due());  // one WAIT per batch
  CHECK(writes.sent(kSet, {1, 10ms}));
  CHECK(writes.wait_due() == config::WriteConcern{1, 10ms});  // a new batch starts small
}

TEST_CASE("confirmed writes: nothing is held when off or when the write asks for no replica") {
  ConfirmedWrites off(false);
  CHECK_FALSE(off.sent(kSet, {1, 50ms}));
  CHECK_FALSE(off.wait_due());
  ConfirmedWrites on(true);
  CHECK_FALSE(on.sent(kSet, {0, 50ms}));
  CHECK_FALSE(on.wait_due());
}

TEST_CASE("confirmed writes: no WAIT inside a transaction; EXEC is confirmed as one write") {
  ConfirmedWrites writes(true);
  CHECK(writes.sent(kSet, {1, 50ms}));
  writes.sent_silent(kMulti);                 // a pinned transaction's MULTI
  CHECK_FALSE(writes.wait_due());             // the WAIT for the SET waits for EXEC
  CHECK_FALSE(writes.sent(kSet, {1, 50ms}));  // answers QUEUED
  CHECK_FALSE(writes.wait_due());
  CHECK(writes.sent(kExec, {2, 50ms}));
  CHECK(writes.wait_due() == config::WriteConcern{2, 50ms});  // the SET's and EXEC's
}

TEST_CASE("confirmed writes: WAIT's count delivers each held reply or NOREPLICAS in its place") {
  ConfirmedWrites writes(true);
  ShardStats stats;
  boost::intrusive_ptr<Replies> sink(new Replies);
  writes.sent(kSet, {1, 50ms});
  writes.sent(kSet, {2, 50ms});
  writes.sent(kSet, {2, 50ms});
  writes.wait_due();
  writes.answered(sink, 1, 0, "+OK\r\n", {1, 50ms});
  writes.answered(sink, 2, 0, "+OK\r\n", {2, 50ms});
  writes.answered(sink, 3, 0, "-ERR wrong\r\n", {2, 50ms});
  CHECK(sink->got.empty());  // held until WAIT answers
  CHECK(writes.held() == 3);
  writes.confirmed(":1\r\n", "s0", "127.0.0.1:7000", stats);
  REQUIRE(sink->got.size() == 3);
  CHECK(sink->got[0] == std::pair<std::uint64_t, std::string>{1, "+OK\r\n"});
  CHECK(sink->got[1].first == 2);
  CHECK(sink->got[1].second.starts_with("-NOREPLICAS"));
  CHECK(sink->got[1].second.find("s0") != std::string::npos);
  CHECK(sink->got[2] == std::pair<std::uint64_t, std::string>{3, "-ERR wrong\r\n"});  // it failed
  CHECK(stats.writes_unconfirmed == 1);
  CHECK(writes.held() == 0);
}

TEST_CASE("confirmed writes: a lost connection fails the held replies and starts anew") {
  ConfirmedWrites writes(true);
  ShardStats stats;
  boost::intrusive_ptr<Replies> sink(new Replies);
  writes.sent_silent(kMulti);
  writes.sent(kExec, {1, 50ms});
  writes.answered(sink, 4, 0, "*0\r\n", {1, 50ms});
  writes.sent_silent(kMulti);  // a transaction left open on the lost connection
  writes.fail("-ERR lost\r\n", stats);
  REQUIRE(sink->got.size() == 1);
  CHECK(sink->got[0] == std::pair<std::uint64_t, std::string>{4, "-ERR lost\r\n"});
  CHECK(stats.errors == 1);
  CHECK_FALSE(writes.wait_due());
  CHECK(writes.sent(kSet, {1, 50ms}));  // not inside the old connection's MULTI
  CHECK(writes.wait_due());
}

// route_blocking through a fake client: each call on a connection lent for it (from a real
// pool that never connects), ended by CLIENT UNBLOCK as if timed out; WAIT on every shard.
#include <catch2/catch.hpp>

#include <string>

#include "placement/shard_map.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

std::uint64_t sent_to(FakeWorkerServices& worker, std::size_t shard) {
  return worker.stats().shards[worker.shard_map().shard(shard).name].requests;
}

}  // namespace

TEST_CASE("BLPOP blocks on a connection lent to the key's shard, not the shared one") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  std::size_t shard = worker.shard_map().shard_for_key("queue");
  auto plan = test::run(client, {"BLPOP", "queue", "0"}, router::route_blocking);
  CHECK(plan.kind == router::RouteKind::Blocking);
  CHECK(client.blocking());
  CHECK(client.opened_slots() == 1);
  for (std::size_t s = 0; s < 4; ++s) {
    CHECK(sent_to(worker, s) == (s == shard ? 1 : 0));
    CHECK(client.requests_to(s) == 0);  // the client's shared connections carry nothing
  }

  // CLIENT UNBLOCK: answered as BLPOP times out, and the call is over.
  CHECK(client.unblock(false, protocol::ClientError::Unblocked));
  CHECK(client.answer(client.last_slot()) == "*-1\r\n");
  CHECK_FALSE(client.blocking());
  CHECK_FALSE(client.unblock(false, protocol::ClientError::Unblocked));
}

TEST_CASE("a RESP3 client's timed-out call answers null; CLIENT UNBLOCK ERROR an error") {
  FakeWorkerServices worker(test::kFourShards);
  SECTION("timeout") {
    FakeRequestContext client(worker);
    client.state().protocol = 3;
    test::run(client, {"BLPOP", "queue", "0"}, router::route_blocking);
    client.unblock(false, protocol::ClientError::Unblocked);
    CHECK(client.answer(client.last_slot()) == "_\r\n");
  }
  SECTION("error") {
    FakeRequestContext client(worker);
    test::run(client, {"BLPOP", "queue", "0"}, router::route_blocking);
    client.unblock(true, protocol::ClientError::Unblocked);
    CHECK(client.answer(client.last_slot())->starts_with("-UNBLOCKED"));
  }
}

TEST_CASE("a blocking call over keys on two shards is refused before anything is lent") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  std::string other = "b";
  for (int i = 0; map.shard_for_key(other) == map.shard_for_key("a"); ++i)
    other = "b" + std::to_string(i);
  test::run(client, {"BLPOP", "a", other, "0"}, router::route_blocking);
  REQUIRE(client.replies.size() == 1);
  CHECK(client.replies[0].front() == '-');
  CHECK_FALSE(client.blocking());
  for (std::size_t s = 0; s < 4; ++s) CHECK(sent_to(worker, s) == 0);
}

TEST_CASE("WAIT asks every shard and answers the fewest replicas any confirmed") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  test::run(client, {"WAIT", "1", "100"}, router::route_blocking);
  auto slot = client.last_slot();
  REQUIRE(client.slots().at(slot).fragments == 4);
  for (std::size_t s = 0; s < 4; ++s) CHECK(sent_to(worker, s) == 1);  // and a silent PING
  client.deliver(slot, 2, ":2\r\n");
  client.deliver(slot, 0, ":1\r\n");
  client.deliver(slot, 3, ":3\r\n");
  client.deliver(slot, 1, ":2\r\n");
  CHECK(client.answer(slot) == ":1\r\n");
}

TEST_CASE("WAIT answers a shard's error rather than a count") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  test::run(client, {"WAIT", "1", "100"}, router::route_blocking);
  auto slot = client.last_slot();
  client.deliver(slot, 0, ":1\r\n");
  client.deliver(slot, 1, "-ERR down\r\n");
  client.deliver(slot, 2, ":1\r\n");
  client.deliver(slot, 3, ":1\r\n");
  CHECK(client.answer(slot) == "-ERR down\r\n");
}

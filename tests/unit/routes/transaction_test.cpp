// MULTI/EXEC/DISCARD/WATCH through a fake client: what is refused and answered here, and a
// transaction held to the one shard its first key chose.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "placement/shard_map.h"
#include "router/routes/transaction.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using router::RouteKind;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

// What dispatch does for the kinds a transaction meets.
router::Plan send(FakeRequestContext& client, std::vector<std::string> args) {
  test::PlannedRequest request(client, std::move(args));
  switch (request.plan().kind) {
    case RouteKind::Transaction:
      router::route_transaction(request.routed());
      break;
    case RouteKind::Queued:
      router::route_queued(request.routed());
      break;
    default:
      FAIL("not a transaction's request");
  }
  return request.plan();
}

std::pair<std::string, std::string> split_keys(const placement::ShardMap& map) {
  std::string a = "a", b;
  for (int i = 0;; ++i) {
    b = "b" + std::to_string(i);
    if (map.shard_for_key(b) != map.shard_for_key(a)) return {a, b};
  }
}

bool is_error(const std::string& reply, std::string_view says) {
  return reply.front() == '-' && reply.find(says) != std::string::npos;
}

}  // namespace

TEST_CASE("EXEC and DISCARD without MULTI, and MULTI inside MULTI, are refused here") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  send(client, {"EXEC"});
  send(client, {"DISCARD"});
  send(client, {"MULTI"});
  CHECK(client.in_transaction());
  send(client, {"MULTI"});
  send(client, {"WATCH", "k"});
  REQUIRE(client.replies.size() == 5);
  CHECK(is_error(client.replies[0], "EXEC without MULTI"));
  CHECK(is_error(client.replies[1], "DISCARD without MULTI"));
  CHECK(client.replies[2] == "+OK\r\n");
  CHECK(is_error(client.replies[3], "MULTI calls can not be nested"));
  CHECK(is_error(client.replies[4], "WATCH inside MULTI is not allowed"));
  CHECK(client.opened_slots() == 0);  // nothing went to a shard
}

TEST_CASE("MULTI then EXEC with nothing queued answers an empty array, and ends it") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  send(client, {"MULTI"});
  send(client, {"EXEC"});
  REQUIRE(client.replies.size() == 2);
  CHECK(client.replies[1] == "*0\r\n");
  CHECK_FALSE(client.in_transaction());
}

TEST_CASE("a keyless command before any key is QUEUED here; DISCARD ends the transaction") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  send(client, {"MULTI"});
  send(client, {"TIME"});
  CHECK(client.transaction().queued() == 1);
  send(client, {"DISCARD"});
  REQUIRE(client.replies.size() == 3);
  CHECK(client.replies[1] == "+QUEUED\r\n");
  CHECK(client.replies[2] == "+OK\r\n");
  CHECK_FALSE(client.in_transaction());
  CHECK(client.opened_slots() == 0);
}

TEST_CASE("a key on another shard than the transaction's is refused, and EXEC aborts") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto [a, b] = split_keys(map);
  send(client, {"MULTI"});
  send(client, {"SET", a, "1"});  // chooses a's shard: sent there on a lent connection
  CHECK(client.transaction().holds_connection());
  CHECK(client.opened_slots() == 1);
  send(client, {"SET", b, "2"});
  REQUIRE(client.replies.size() == 2);  // +OK of MULTI, then the refusal
  const auto& refusal = client.replies[1];
  CHECK(refusal.front() == '-');
  CHECK(refusal.find(map.shard(map.shard_for_key(a)).name) != std::string::npos);
  CHECK(refusal.find(map.shard(map.shard_for_key(b)).name) != std::string::npos);
  CHECK(refusal.find(b) != std::string::npos);
  CHECK(client.opened_slots() == 1);  // the refused SET went nowhere

  send(client, {"EXEC"});
  REQUIRE(client.replies.size() == 3);
  CHECK(is_error(client.replies[2], "EXECABORT"));
  CHECK_FALSE(client.in_transaction());
  CHECK_FALSE(client.transaction().holds_connection());
}

TEST_CASE("a command that cannot run inside a one-shard transaction fails EXEC") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  auto [a, b] = split_keys(worker.shard_map());
  send(client, {"MULTI"});
  auto plan = send(client, {"MGET", a, b});
  CHECK(plan.has_error());
  REQUIRE(client.replies.size() == 2);
  CHECK(client.replies[1] == "-" + plan.error + "\r\n");
  send(client, {"EXEC"});
  CHECK(is_error(client.replies.back(), "EXECABORT"));
}

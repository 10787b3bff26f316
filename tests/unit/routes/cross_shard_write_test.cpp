// route_cross_shard_write through a fake client (`cross_shard_writes: allow`): each stage
// goes out once the one before has answered, to the shards of the keys it touches. The
// stages follow each other through the worker's io_context, which the test polls (no socket
// is ever opened: the fake's connections are never started).
#include <catch2/catch.hpp>

#include <string>

#include "placement/shard_map.h"
#include "protocol/resp_writer.h"
#include "router/routes/staged_writes.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

const std::string kAllow = test::kFourShards + "cross_shard_writes: allow\n";

std::pair<std::string, std::string> split_keys(const placement::ShardMap& map) {
  std::string a = "a", b;
  for (int i = 0;; ++i) {
    b = "b" + std::to_string(i);
    if (map.shard_for_key(b) != map.shard_for_key(a)) return {a, b};
  }
}

std::size_t bytes_of(std::vector<std::string_view> args) {
  std::string out;
  protocol::RespWriter(out).command(args);
  return out.size();
}

}  // namespace

TEST_CASE("RENAME across shards: DUMP and EXISTS, then RESTORE, then DEL, then OK") {
  FakeWorkerServices worker(kAllow);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto [a, b] = split_keys(map);
  std::size_t from = map.shard_for_key(a), to = map.shard_for_key(b);
  auto plan = test::run(client, {"RENAME", a, b}, router::route_cross_shard_write);
  REQUIRE(plan.kind == router::RouteKind::StagedWrite);
  auto slot = client.last_slot();
  CHECK(router::staged_write_in_flight(client.state().id));

  // Stage 0: what the source holds and when it expires; whether the destination exists.
  CHECK(client.requests_to(from) == 2);
  CHECK(client.bytes_to(from) == bytes_of({"DUMP", a}) + bytes_of({"PEXPIRETIME", a}));
  CHECK(client.requests_to(to) == 1);
  CHECK(client.bytes_to(to) == bytes_of({"EXISTS", b}));
  client.deliver(slot, 2, ":0\r\n");
  client.deliver(slot, 0, "$7\r\npayload\r\n");
  client.deliver(slot, 1, ":-1\r\n");  // no expiry
  CHECK(client.requests_to(to) == 1);  // the next stage waits for the loop's next turn
  worker.io().poll();
  worker.io().restart();

  // Stage 1: the value restored on the destination's shard.
  CHECK(client.requests_to(to) == 2);
  CHECK(client.bytes_to(to) ==
        bytes_of({"EXISTS", b}) + bytes_of({"RESTORE", b, "0", "payload", "REPLACE"}));
  client.deliver(slot, 3, "+OK\r\n");
  worker.io().poll();
  worker.io().restart();

  // Stage 2: the source deleted; then the client's answer.
  CHECK(client.requests_to(from) == 3);
  REQUIRE_FALSE(client.answer(slot));
  client.deliver(slot, 4, ":1\r\n");
  worker.io().poll();
  CHECK(client.answer(slot) == "+OK\r\n");
  CHECK_FALSE(router::staged_write_in_flight(client.state().id));
}

TEST_CASE("RENAME of a key that is not there answers Redis's error and writes nothing") {
  FakeWorkerServices worker(kAllow);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto [a, b] = split_keys(map);
  test::run(client, {"RENAME", a, b}, router::route_cross_shard_write);
  auto slot = client.last_slot();
  client.deliver(slot, 0, "$-1\r\n");
  client.deliver(slot, 1, ":-2\r\n");
  client.deliver(slot, 2, ":0\r\n");
  worker.io().poll();
  CHECK(client.answer(slot) == "-ERR no such key\r\n");
  CHECK(client.requests_to(map.shard_for_key(b)) == 1);  // the EXISTS alone
  CHECK(client.requests_to(map.shard_for_key(a)) == 2);
}

TEST_CASE("RENAMENX onto a key that exists answers 0 and writes nothing") {
  FakeWorkerServices worker(kAllow);
  FakeRequestContext client(worker);
  const auto& map = worker.shard_map();
  auto [a, b] = split_keys(map);
  test::run(client, {"RENAMENX", a, b}, router::route_cross_shard_write);
  auto slot = client.last_slot();
  client.deliver(slot, 0, "$7\r\npayload\r\n");
  client.deliver(slot, 1, ":-1\r\n");
  client.deliver(slot, 2, ":1\r\n");
  worker.io().poll();
  CHECK(client.answer(slot) == ":0\r\n");
  CHECK(client.requests_to(map.shard_for_key(b)) == 1);
}

// route_broadcast through a fake client: the shards it reaches, what it sends them, and the
// one answer merged from theirs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "placement/shard_map.h"
#include "protocol/resp_writer.h"
#include "router/merge/scan_cursor.h"
#include "router/routes/script_cache.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using router::RouteKind;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using test::PlannedRequest;

namespace {

std::string scan_reply(std::string_view cursor, std::vector<std::string_view> keys) {
  std::string out;
  protocol::RespWriter writer(out);
  writer.array_header(2);
  writer.bulk(cursor);
  writer.array_header(keys.size());
  for (auto key : keys) writer.bulk(key);
  return out;
}

}  // namespace

TEST_CASE("DBSIZE reaches every shard once, and the client gets the sum") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  PlannedRequest dbsize(client, {"DBSIZE"});
  REQUIRE(dbsize.plan().kind == RouteKind::Broadcast);
  router::route_broadcast(dbsize.routed());

  REQUIRE(client.opened_slots() == 1);
  auto slot = client.last_slot();
  CHECK(client.slots().at(slot).fragments == 4);
  for (std::size_t s = 0; s < 4; ++s) {
    CHECK(client.requests_to(s) == 1);
    CHECK(client.bytes_to(s) == dbsize.raw().size());  // the client's own DBSIZE
  }
  client.deliver(slot, 3, ":4\r\n");
  client.deliver(slot, 1, ":20\r\n");
  client.deliver(slot, 0, ":100\r\n");
  REQUIRE_FALSE(client.answer(slot));
  client.deliver(slot, 2, ":3000\r\n");
  CHECK(client.answer(slot) == ":3124\r\n");
}

TEST_CASE("SCRIPT LOAD teaches the worker the script; SCRIPT FLUSH makes it forget") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  std::string body = "return 42";
  std::string sha = router::ScriptCache::sha1_hex(body);
  test::run(client, {"SCRIPT", "LOAD", body}, router::route_broadcast);
  CHECK(worker.scripts().knows(sha));
  for (std::size_t s = 0; s < 4; ++s) CHECK(client.requests_to(s) == 1);

  test::run(client, {"SCRIPT", "FLUSH"}, router::route_broadcast);
  CHECK_FALSE(worker.scripts().knows(sha));
  for (std::size_t s = 0; s < 4; ++s) CHECK(client.requests_to(s) == 2);
}

TEST_CASE("SCAN visits one shard per call, and its cursor moves on to the next shard") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  auto plan = test::run(client, {"SCAN", "0", "COUNT", "10"}, router::route_broadcast);
  REQUIRE(plan.shards.size() == 4);
  std::size_t first = plan.shards.front();
  for (std::size_t s = 0; s < 4; ++s) CHECK(client.requests_to(s) == (s == first ? 1 : 0));

  // The first shard is done (its cursor 0): the client's cursor names the next shard.
  auto slot = client.last_slot();
  client.deliver(slot, 0, scan_reply("0", {"a", "b"}));
  auto answer = client.answer(slot);
  REQUIRE(answer);
  std::string cursor = *answer;
  auto start = cursor.find("\r\n", cursor.find('$')) + 2;
  cursor = cursor.substr(start, cursor.find("\r\n", start) - start);
  auto position = router::decode_scan_cursor(cursor, 4);
  REQUIRE(position);
  CHECK(position->shard == plan.shards[1]);
  CHECK(position->shard_cursor == 0);
  CHECK(answer->find("$1\r\na\r\n$1\r\nb\r\n") != std::string::npos);

  // That cursor sends the next call to that shard alone.
  test::run(client, {"SCAN", cursor}, router::route_broadcast);
  CHECK(client.requests_to(plan.shards[1]) == 1);
  CHECK(client.requests_to(first) == 1);
}

TEST_CASE("SCAN with a cursor Santral could not have returned is refused") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  test::run(client, {"SCAN", "not-a-cursor"}, router::route_broadcast);
  REQUIRE(client.replies.size() == 1);
  CHECK(client.replies[0].front() == '-');
  CHECK(client.opened_slots() == 0);
  for (std::size_t s = 0; s < 4; ++s) CHECK(client.requests_to(s) == 0);
}

TEST_CASE("INFO santral is answered here; INFO keyspace asks every shard for that section") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  test::run(client, {"INFO", "santral"}, router::route_broadcast);
  REQUIRE(client.replies.size() == 1);
  CHECK(client.replies[0].find("# Santral\r\n") != std::string::npos);
  CHECK(client.opened_slots() == 0);

  test::run(client, {"INFO", "KEYSPACE"}, router::route_broadcast);
  std::string info;
  std::string_view args[] = {"INFO", "keyspace"};
  protocol::RespWriter(info).command(args);
  for (std::size_t s = 0; s < 4; ++s) CHECK(client.bytes_to(s) == info.size());
  CHECK(client.slots().at(client.last_slot()).fragments == 4);
}

// route_single_shard and route_any through a fake client: what is forwarded, where, and how.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "placement/shard_map.h"
#include "router/routes/script_cache.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using router::RouteKind;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using test::PlannedRequest;

TEST_CASE("a GET goes once, as the client's bytes, to its key's shard") {
  FakeWorkerServices worker(test::kFourShards);
  std::set<std::size_t> reached;
  for (int i = 0; reached.size() < 4 && i < 1000; ++i) {
    FakeRequestContext client(worker);
    std::string key = "user:" + std::to_string(i);
    PlannedRequest get(client, {"GET", key});
    REQUIRE(get.plan().kind == RouteKind::SingleShard);
    router::route_single_shard(get.routed());

    REQUIRE(client.forwarded.size() == 1);
    const auto& sent = client.forwarded.front();
    CHECK(sent.shard == worker.shard_map().shard_for_key(key));
    CHECK(sent.bytes == get.raw());
    CHECK(client.opened_slots() == 1);
    CHECK(client.replies.empty());
    // The shard's reply is the client's.
    client.deliver(sent.slot, 0, "$5\r\nvalue\r\n");
    CHECK(client.answer(sent.slot) == "$5\r\nvalue\r\n");
    reached.insert(sent.shard);
  }
  CHECK(reached.size() == 4);  // every shard owns some key: the shard is the key's, not fixed
}

TEST_CASE("an inline request is re-encoded as multibulk before it is forwarded") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  PlannedRequest set(client, {"SET", "k", "v"}, PlannedRequest::Form::Inline);
  REQUIRE(set.raw().empty());
  router::route_single_shard(set.routed());
  REQUIRE(client.forwarded.size() == 1);
  CHECK(client.forwarded[0].bytes == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  CHECK(client.forwarded[0].shard == worker.shard_map().shard_for_key("k"));
}

TEST_CASE("EVAL teaches the worker its script; EVALSHA loads it on the shard once") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  std::string body = "return redis.call('GET', KEYS[1])";
  std::string sha = router::ScriptCache::sha1_hex(body);
  CHECK_FALSE(worker.scripts().knows(sha));
  test::run(client, {"EVAL", body, "1", "k"}, router::route_single_shard);
  CHECK(worker.scripts().knows(sha));
  REQUIRE(client.forwarded.size() == 1);

  std::size_t shard = worker.shard_map().shard_for_key("k");
  PlannedRequest evalsha(client, {"EVALSHA", sha, "1", "k"});
  router::route_single_shard(evalsha.routed());
  // Sent with the script's time limit (send_current), not forwarded plainly.
  CHECK(client.forwarded.size() == 1);
  REQUIRE(client.sent_current.size() == 1);
  CHECK(client.sent_current[0].shard == shard);
  CHECK(client.sent_current[0].bytes == evalsha.raw());
  CHECK(client.connection(shard).has_script(sha));
  auto queued = client.connection(shard).in_flight();  // the SCRIPT LOAD before it
  CHECK(queued == 1);

  test::run(client, {"EVALSHA", sha, "1", "k"}, router::route_single_shard);
  CHECK(client.sent_current.size() == 2);
  CHECK(client.connection(shard).in_flight() == queued);  // loaded already: no second LOAD
}

TEST_CASE("an EVALSHA of a script Santral never saw goes as it came") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  std::string sha(40, 'a');
  test::run(client, {"EVALSHA", sha, "1", "k"}, router::route_single_shard);
  REQUIRE(client.forwarded.size() == 1);
  CHECK(client.sent_current.empty());
  CHECK(client.forwarded[0].shard == worker.shard_map().shard_for_key("k"));
}

TEST_CASE("a keyless command with the same answer everywhere goes to one shard") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  auto plan = test::run(client, {"TIME"}, router::route_any);
  CHECK(plan.kind == RouteKind::AnyShard);
  REQUIRE(client.forwarded.size() == 1);
  // None is up (never connected): the first shard, rather than none.
  CHECK(client.forwarded[0].shard == 0);
}

// SANTRAL MAP PUSH and SANTRAL ROUTERS through a fake client and a fake server
// (tests/support/fake_control_plane.h): a router in a fleet, or alone.
#include <catch2/catch.hpp>

#include <string>

#include "router/runtime/control_plane.h"
#include "tests/support/fake_control_plane.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::bulk;
using test::FakeControlPlane;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using Result = router::ControlPlane::ReloadResult;

namespace {

const std::string kMapPushSyntax =
    "-ERR santral: syntax error; use SANTRAL MAP PUSH <config text> (santral map push FILE "
    "sends a file)\r\n";

router::RouterRecord record(const std::string& name, std::int64_t version) {
  router::RouterRecord r;
  r.name = name;
  r.listen = "10.0.0.1:6379";
  r.admin = "10.0.0.1:9121";
  r.map_version = version;
  r.salting_version = 2;
  r.lease = 7587;
  r.lease_ttl_s = 10;
  r.started = "2026-12-05T06:00:00Z";
  return r;
}

}  // namespace

TEST_CASE("SANTRAL MAP takes PUSH and one config text, nothing else") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  CHECK(test::ask_local(client, {"SANTRAL", "MAP", "PUSH"}) == kMapPushSyntax);
  CHECK(test::ask_local(client, {"SANTRAL", "MAP", "PULL", "shards: []"}) == kMapPushSyntax);
  CHECK(test::ask_local(client, {"SANTRAL", "MAP", "PUSH", "a", "b"}) == kMapPushSyntax);
  CHECK(server.map_pushes.empty());
  CHECK(client.opened_slots() == 0);
}

TEST_CASE("SANTRAL MAP PUSH proposes the text as it came, and answers once etcd has answered") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  const std::string text = test::kFourShards + "hash: fnv1a_64\n";
  test::run(client, {"SANTRAL", "MAP", "push", text}, router::run_local);
  test::run(client, {"SANTRAL", "MAP", "PUSH", "shards: ["}, router::run_local);
  REQUIRE(server.map_pushes.size() == 2);
  CHECK(server.map_pushes[0].text == text);
  CHECK(client.replies.empty());
  CHECK_FALSE(client.idle());

  // Messages on several lines are answered on one.
  server.answer_and_poll(server.map_pushes[0].done, Result{true, "map version 4\nshard0 moved"});
  CHECK(client.answer(1) == "+OK map version 4 shard0 moved\r\n");

  server.answer_and_poll(server.map_pushes[1].done,
                         Result{false, "ERR santral: the map was not proposed: version taken"});
  CHECK(client.answer(2) == "-ERR santral: the map was not proposed: version taken\r\n");
  CHECK(client.idle());
}

TEST_CASE("SANTRAL ROUTERS outside a fleet says so") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  CHECK(test::ask_local(client, {"SANTRAL", "ROUTERS"}) ==
        "-ERR santral: this router is not in a fleet (its config has no cluster:); edit its "
        "file and SANTRAL RELOAD instead\r\n");
}

TEST_CASE("SANTRAL ROUTERS answers one map per live router, a flat array under RESP2") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  server.fleet.emplace();
  CHECK(test::ask_local(client, {"SANTRAL", "ROUTERS"}) == "*0\r\n");

  server.fleet->routers.push_back(record("r1", 4));
  server.fleet->routers.push_back(record("r2", 3));
  server.fleet->routers.back().fence_user = "santral-7587";
  server.fleet->departed.push_back(record("gone", 1));  // not live: not listed
  std::string r1 = bulk("name") + bulk("r1") + bulk("listen") + bulk("10.0.0.1:6379") +
                   bulk("admin") + bulk("10.0.0.1:9121") + bulk("map_version") + ":4\r\n" +
                   bulk("salting_version") + ":2\r\n" + bulk("lease") + bulk("7587") +
                   bulk("lease_ttl_s") + ":10\r\n" + bulk("started") +
                   bulk("2026-12-05T06:00:00Z") + bulk("fence_user") + bulk("");
  auto resp2 = test::ask_local(client, {"SANTRAL", "ROUTERS"});
  CHECK(resp2.starts_with("*2\r\n*18\r\n" + r1 + "*18\r\n" + bulk("name") + bulk("r2")));
  CHECK(resp2.ends_with(bulk("fence_user") + bulk("santral-7587")));

  client.state().protocol = 3;
  auto resp3 = test::ask_local(client, {"SANTRAL", "ROUTERS"});
  CHECK(resp3.starts_with("*2\r\n%9\r\n" + r1 + "%9\r\n"));
}

// SANTRAL RESHARD through a fake client and a fake server (tests/support/fake_control_plane.h):
// what is asked of the server's thread, and how its answer reaches the client.
#include <catch2/catch.hpp>

#include <string>

#include "router/runtime/control_plane.h"
#include "tests/support/fake_control_plane.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeControlPlane;
using test::FakeRequestContext;
using test::FakeWorkerServices;
using Verb = router::ControlPlane::ReshardVerb;
using Answer = router::ControlPlane::ReshardAnswer;

namespace {

router::ReshardStatus moving_status() {
  router::ReshardStatus status;
  status.state = router::ReshardState::Moving;
  status.map_version = 7;
  router::UnitProgress unit;
  unit.unit.placement = "orders";
  unit.unit.what = "slots 0-99";
  unit.unit.from = "shard0";
  unit.unit.to = "shard3";
  unit.keys_estimated = 1200;
  unit.bytes_estimated = 64000;
  status.units.push_back(unit);
  status.keys_moved = 300;
  return status;
}

}  // namespace

TEST_CASE("SANTRAL RESHARD refuses an unknown verb without asking the server") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  CHECK(test::ask_local(client, {"SANTRAL", "RESHARD", "START"}) ==
        "-ERR santral: syntax error; use SANTRAL RESHARD PLAN|APPROVE|STATUS|ABORT\r\n");
  CHECK(server.reshards.empty());
  CHECK(client.opened_slots() == 0);
}

TEST_CASE("SANTRAL RESHARD asks the server with its verb, in any case, and answers later") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "RESHARD", "plan"}, router::run_local);
  test::run(client, {"SANTRAL", "RESHARD", "Approve"}, router::run_local);
  test::run(client, {"SANTRAL", "RESHARD", "STATUS"}, router::run_local);
  test::run(client, {"SANTRAL", "RESHARD", "abort"}, router::run_local);
  REQUIRE(server.reshards.size() == 4);
  CHECK(server.reshards[0].verb == Verb::Plan);
  CHECK(server.reshards[1].verb == Verb::Approve);
  CHECK(server.reshards[2].verb == Verb::Status);
  CHECK(server.reshards[3].verb == Verb::Abort);
  CHECK(client.replies.empty());  // each holds its slot until the server answers
  CHECK(client.opened_slots() == 4);
  CHECK_FALSE(client.idle());
}

TEST_CASE("SANTRAL RESHARD APPROVE and ABORT answer OK, or the server's error") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "RESHARD", "APPROVE"}, router::run_local);
  auto approve = client.last_slot();
  test::run(client, {"SANTRAL", "RESHARD", "ABORT"}, router::run_local);
  auto abort = client.last_slot();

  // The answer goes through the worker's io(): nothing reaches the client before it runs.
  server.reshards[1].done(Answer{"ERR santral: no move is planned or running (state idle)", {}});
  CHECK_FALSE(client.answer(abort));
  worker.io().restart();
  worker.io().poll();
  CHECK(client.answer(abort) == "-ERR santral: no move is planned or running (state idle)\r\n");

  server.answer_and_poll(server.reshards[0].done, Answer{"", moving_status()});
  CHECK(client.answer(approve) == "+OK\r\n");
  CHECK(client.idle());
}

TEST_CASE("SANTRAL RESHARD PLAN answers the state and the plan as one text") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "RESHARD", "PLAN"}, router::run_local);
  auto slot = client.last_slot();
  server.answer_and_poll(server.reshards[0].done, Answer{"", moving_status()});
  std::string text =
      "state: moving\n"
      "1 unit move to map version 7 (about 1200 keys, 64000 bytes, from sampling the "
      "sources):\n"
      "  orders: slots 0-99 from shard0 to shard3, ~1200 keys, ~64000 bytes\n";
  CHECK(client.answer(slot) == "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n");

  test::run(client, {"SANTRAL", "RESHARD", "PLAN"}, router::run_local);
  server.answer_and_poll(server.reshards[1].done, Answer{"", router::ReshardStatus{}});
  CHECK(client.answer(client.last_slot()) == "$26\r\nstate: idle\nnothing moves\n\r\n");
}

TEST_CASE("SANTRAL RESHARD STATUS answers its fields as a map, a flat array under RESP2") {
  FakeWorkerServices worker(test::kFourShards);
  FakeRequestContext client(worker);
  FakeControlPlane server(worker);
  test::run(client, {"SANTRAL", "RESHARD", "STATUS"}, router::run_local);
  auto resp2 = client.last_slot();
  client.state().protocol = 3;
  test::run(client, {"SANTRAL", "RESHARD", "STATUS"}, router::run_local);
  auto resp3 = client.last_slot();
  for (auto& asked : server.reshards)
    server.answer_and_poll(asked.done, Answer{"", moving_status()});

  auto fields = router::status_fields(moving_status());
  REQUIRE(fields.size() == 16);
  auto flat = client.answer(resp2);
  REQUIRE(flat);
  CHECK(
      flat->starts_with("*32\r\n$5\r\nstate\r\n$6\r\nmoving\r\n$11\r\nmap_version\r\n$1\r\n7\r\n"));
  CHECK(flat->find("$10\r\nkeys_moved\r\n$3\r\n300\r\n") != std::string::npos);
  auto map = client.answer(resp3);
  REQUIRE(map);
  CHECK(map->starts_with("%16\r\n$5\r\nstate\r\n$6\r\nmoving\r\n"));
  CHECK(map->substr(map->find("\r\n")) == flat->substr(flat->find("\r\n")));  // the same pairs
}

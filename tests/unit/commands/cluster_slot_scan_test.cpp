// CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT through a fake client. The SCANs a scan sends are
// held on the client's connections (each marked down with a failover wait, so that what is
// sent to it waits instead of failing), taken from there, and answered by the test: the scan
// is the sink each of them names.
#include <catch2/catch.hpp>

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "config/config.h"
#include "placement/topology.h"
#include "protocol/resp_writer.h"
#include "router/backend/backend_connection.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

const std::string kClusterEndpoint = test::kFourShards + "cluster_endpoint: true\n";

std::string scan_request(const std::string& cursor) {
  std::string bytes;
  std::string_view args[] = {"SCAN", cursor, "COUNT", "1000"};
  protocol::RespWriter(bytes).command(args);
  return bytes;
}

std::string scan_reply(const std::string& cursor, const std::vector<std::string>& keys) {
  std::string out;
  protocol::RespWriter w(out);
  w.array_header(2);
  w.bulk(cursor);
  w.array_header(keys.size());
  for (const auto& key : keys) w.bulk(key);
  return out;
}

// Every shard's connection holds what is sent to it until the test takes it.
void hold_every_shard(FakeRequestContext& client) {
  for (std::size_t s = 0; s < 4; ++s) {
    client.mark_down(s, "held by the test");
    client.connection(s).wait_while_down(std::chrono::seconds(60));
  }
}

// The one request waiting on `shard`'s connection (REQUIRE'd).
router::BackendConnection::Waiting take_one(FakeRequestContext& client, std::size_t shard) {
  auto waiting = client.connection(shard).take_waiting();
  REQUIRE(waiting.size() == 1);
  return std::move(waiting.front());
}

bool nothing_waiting(FakeRequestContext& client) {
  for (std::size_t s = 0; s < 4; ++s)
    if (client.connection(s).in_flight() != 0) return false;
  return true;
}

// Answers the SCAN waiting on `shard`, after checking it asks for `cursor`.
void answer_scan(FakeRequestContext& client, std::size_t shard, const std::string& cursor,
                 const std::string& reply) {
  INFO("shard " << shard << ", cursor " << cursor);
  auto call = take_one(client, shard);
  CHECK(call.request == scan_request(cursor));
  CHECK(call.fragment == shard);
  call.sink->deliver(call.slot, call.fragment, reply);
}

}  // namespace

TEST_CASE("CLUSTER COUNTKEYSINSLOT refuses a slot that is not an integer or out of range") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"CLUSTER", "COUNTKEYSINSLOT", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(test::ask_local(client, {"CLUSTER", "COUNTKEYSINSLOT", "-1"}) == "-ERR Invalid slot\r\n");
  CHECK(test::ask_local(client, {"CLUSTER", "COUNTKEYSINSLOT", "16384"}) ==
        "-ERR Invalid slot\r\n");
  CHECK(client.opened_slots() == 0);
  for (std::size_t s = 0; s < 4; ++s) CHECK(client.requests_to(s) == 0);
}

TEST_CASE("CLUSTER GETKEYSINSLOT refuses a bad slot or count") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  const std::string not_integer = "-ERR value is not an integer or out of range\r\n";
  const std::string invalid = "-ERR Invalid slot or number of keys\r\n";
  CHECK(test::ask_local(client, {"CLUSTER", "GETKEYSINSLOT", "x", "10"}) == not_integer);
  CHECK(test::ask_local(client, {"CLUSTER", "GETKEYSINSLOT", "1", "ten"}) == not_integer);
  CHECK(test::ask_local(client, {"CLUSTER", "GETKEYSINSLOT", "16384", "10"}) == invalid);
  CHECK(test::ask_local(client, {"CLUSTER", "GETKEYSINSLOT", "-1", "10"}) == invalid);
  CHECK(test::ask_local(client, {"CLUSTER", "GETKEYSINSLOT", "1", "-1"}) == invalid);
  CHECK(client.opened_slots() == 0);
}

TEST_CASE(
    "COUNTKEYSINSLOT SCANs every shard in turn, following cursors, counting the slot's keys") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  hold_every_shard(client);
  // "foo" and every key tagged {foo} are in slot 12182; "bar" is in 5061.
  auto plan = test::run(client, {"CLUSTER", "COUNTKEYSINSLOT", "12182"}, router::run_local);
  REQUIRE(plan.kind == router::RouteKind::Local);
  CHECK(client.replies.empty());
  REQUIRE(client.opened_slots() == 1);
  auto slot = client.last_slot();

  // One shard at a time: only shard0 is asked first.
  CHECK(client.connection(1).in_flight() == 0);
  answer_scan(client, 0, "0", scan_reply("17", {"foo", "bar", "{foo}.a"}));
  CHECK(client.connection(1).in_flight() == 0);
  answer_scan(client, 0, "17", scan_reply("0", {"{foo}.b"}));
  answer_scan(client, 1, "0", scan_reply("0", {}));
  answer_scan(client, 2, "0", scan_reply("0", {"bar", "baz"}));
  CHECK_FALSE(client.answer(slot));
  answer_scan(client, 3, "0", scan_reply("0", {"{foo}"}));  // its tag is "foo": it counts
  CHECK(client.answer(slot) == ":4\r\n");
  CHECK(nothing_waiting(client));
  CHECK(client.replies.empty());
}

TEST_CASE("GETKEYSINSLOT answers the slot's keys and stops asking once it has `count` of them") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  hold_every_shard(client);
  test::run(client, {"CLUSTER", "GETKEYSINSLOT", "12182", "3"}, router::run_local);
  auto slot = client.last_slot();
  answer_scan(client, 0, "0", scan_reply("0", {"foo", "bar"}));
  answer_scan(client, 1, "0", scan_reply("5", {"{foo}.a", "bar", "{foo}.b", "{foo}.c"}));
  CHECK(client.answer(slot) == "*3\r\n$3\r\nfoo\r\n$7\r\n{foo}.a\r\n$7\r\n{foo}.b\r\n");
  CHECK(nothing_waiting(client));  // neither shard1's next cursor nor shard2 is asked
}

TEST_CASE("GETKEYSINSLOT with fewer keys than `count` goes through every shard") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  hold_every_shard(client);
  test::run(client, {"CLUSTER", "GETKEYSINSLOT", "5061", "10"}, router::run_local);
  auto slot = client.last_slot();
  answer_scan(client, 0, "0", scan_reply("0", {"foo"}));
  answer_scan(client, 1, "0", scan_reply("0", {"bar"}));
  answer_scan(client, 2, "0", scan_reply("0", {}));
  answer_scan(client, 3, "0", scan_reply("0", {}));
  CHECK(client.answer(slot) == "*1\r\n$3\r\nbar\r\n");
}

TEST_CASE("GETKEYSINSLOT with a count of 0 answers an empty array without asking a shard") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  hold_every_shard(client);
  test::run(client, {"CLUSTER", "GETKEYSINSLOT", "12182", "0"}, router::run_local);
  CHECK(client.answer(client.last_slot()) == "*0\r\n");
  CHECK(nothing_waiting(client));
}

TEST_CASE("a slot scan answers a shard's error as it came, and a reply not shaped as SCAN's") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  hold_every_shard(client);

  SECTION("an error") {
    test::run(client, {"CLUSTER", "COUNTKEYSINSLOT", "0"}, router::run_local);
    auto slot = client.last_slot();
    answer_scan(client, 0, "0", scan_reply("0", {}));
    answer_scan(client, 1, "0", "-NOPERM no SCAN for you\r\n");
    CHECK(client.answer(slot) == "-NOPERM no SCAN for you\r\n");
    CHECK(nothing_waiting(client));
  }
  SECTION("not a cursor and keys") {
    test::run(client, {"CLUSTER", "COUNTKEYSINSLOT", "0"}, router::run_local);
    auto slot = client.last_slot();
    answer_scan(client, 0, "0", scan_reply("0", {}));
    answer_scan(client, 1, "0", "*1\r\n$1\r\n0\r\n");
    CHECK(client.answer(slot) ==
          "-ERR santral: shard 'shard1' sent an unexpected reply to SCAN\r\n");
    CHECK(nothing_waiting(client));
  }

  SECTION("a cursor and something that is not a page of keys") {
    test::run(client, {"CLUSTER", "COUNTKEYSINSLOT", "0"}, router::run_local);
    auto slot = client.last_slot();
    answer_scan(client, 0, "0", "*2\r\n$1\r\n0\r\n:7\r\n");
    CHECK(client.answer(slot) ==
          "-ERR santral: shard 'shard0' sent an unexpected reply to SCAN\r\n");
    CHECK(nothing_waiting(client));
  }
}

TEST_CASE("a slot scan that reaches a shard marked down answers the shard's down error") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  client.mark_down(0, "no route to host");  // no failover wait: fails at once
  test::run(client, {"CLUSTER", "COUNTKEYSINSLOT", "0"}, router::run_local);
  auto answer = client.answer(client.last_slot());
  REQUIRE(answer);
  CHECK(answer->front() == '-');
  CHECK(answer->find("shard0") != std::string::npos);
  CHECK(answer->find("no route to host") != std::string::npos);
}

TEST_CASE("a slot scan under a map that changed on the way answers TRYAGAIN") {
  FakeWorkerServices worker(kClusterEndpoint);
  FakeRequestContext client(worker);
  hold_every_shard(client);
  test::run(client, {"CLUSTER", "GETKEYSINSLOT", "12182", "10"}, router::run_local);
  auto slot = client.last_slot();
  answer_scan(client, 0, "0", scan_reply("0", {"foo"}));
  // A reload: the shards may be numbered otherwise now, the keys placed elsewhere.
  worker.serve(placement::make_topology(
      config::parse_config(test::kFourShards + "cluster_endpoint: true\nworkers: 1\n", "b.yaml"),
      2));
  answer_scan(client, 1, "0", scan_reply("0", {"{foo}a"}));
  auto answer = client.answer(slot);
  REQUIRE(answer);
  CHECK(
      answer->starts_with("-TRYAGAIN santral: the shard map changed during CLUSTER GETKEYSINSLOT"));
  CHECK(nothing_waiting(client));
}

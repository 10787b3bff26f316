// CLUSTER subcommands of the cluster endpoint, through a fake client: a router alone (no
// fleet) is one node that serves every slot.
#include <catch2/catch.hpp>

#include <string>

#include "router/commands/cluster_topology.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/local_answer.h"
#include "tests/support/planned_request.h"

using namespace santral;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

std::string bulk_text(const std::string& reply) {
  REQUIRE(reply.front() == '$');
  auto start = reply.find("\r\n") + 2;
  return reply.substr(start, reply.size() - start - 2);
}

}  // namespace

TEST_CASE("CLUSTER KEYSLOT answers Redis Cluster's slot, hash tags included") {
  FakeWorkerServices worker(test::kFourShards + "cluster_endpoint: true\n");
  FakeRequestContext client(worker);
  CHECK(test::ask_local(client, {"CLUSTER", "KEYSLOT", "foo"}) ==
        ":12182\r\n");  // as Redis answers
  CHECK(test::ask_local(client, {"CLUSTER", "KEYSLOT", "{foo}.bar"}) == ":12182\r\n");
  CHECK(test::ask_local(client, {"CLUSTER", "KEYSLOT", "bar"}) == ":5061\r\n");
}

TEST_CASE("a router alone is one node with every slot: INFO, SLOTS, NODES and MYID agree") {
  FakeWorkerServices worker(test::kFourShards + "cluster_endpoint: true\n");
  FakeRequestContext client(worker);
  auto info = bulk_text(test::ask_local(client, {"CLUSTER", "INFO"}));
  CHECK(info.find("cluster_state:ok\r\n") != std::string::npos);
  CHECK(info.find("cluster_slots_assigned:" + std::to_string(router::kClusterSlots)) !=
        std::string::npos);
  CHECK(info.find("cluster_known_nodes:1\r\n") != std::string::npos);

  auto slots = test::ask_local(client, {"CLUSTER", "SLOTS"});
  CHECK(slots.starts_with("*1\r\n*3\r\n:0\r\n:" + std::to_string(router::kClusterSlots - 1)));

  auto id = bulk_text(test::ask_local(client, {"CLUSTER", "MYID"}));
  CHECK(id.size() == 40);
  auto nodes = bulk_text(test::ask_local(client, {"CLUSTER", "NODES"}));
  CHECK(nodes.starts_with(id + " "));
  CHECK(nodes.find("myself,master") != std::string::npos);
  CHECK(std::count(nodes.begin(), nodes.end(), '\n') == 1);
}

// One router with cluster_endpoint: true, as a Redis Cluster client sees it: one node with
// every slot at its announce: address, CLUSTER INFO/NODES/SHARDS/MYID/KEYSLOT answered in
// Redis's shapes, and COUNTKEYSINSLOT/GETKEYSINSLOT from the shards' keys.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "tests/support/cluster.h"

using namespace santral::test;

TEST_CASE("the cluster endpoint of a router alone: one node at its announce address") {
  Cluster cluster(3, "cluster_endpoint: true\nannounce: 127.0.0.9:7777\n");
  auto client = cluster.client();
  auto slots = client.command({"CLUSTER", "SLOTS"});
  REQUIRE(slots.elements.size() == 1);
  const auto& range = slots.elements[0];
  CHECK(range.elements[0].integer == 0);
  CHECK(range.elements[1].integer == 16383);
  CHECK(range.elements[2].elements[0].str == "127.0.0.9");
  CHECK(range.elements[2].elements[1].integer == 7777);
  std::string id = range.elements[2].elements[2].str;
  CHECK(id.size() == 40);
  CHECK(client.command({"CLUSTER", "MYID"}).str == id);
  CHECK(client.command({"CLUSTER", "MYSHARDID"}).str.size() == 40);
  auto nodes = client.command({"CLUSTER", "NODES"}).str;
  CHECK(nodes == id + " 127.0.0.9:7777@17777 myself,master - 0 0 1 connected 0-16383\n");
  auto info = client.command({"CLUSTER", "INFO"}).str;
  CHECK(info.starts_with("cluster_state:ok\r\ncluster_slots_assigned:16384\r\n"));
  CHECK(info.find("cluster_known_nodes:1\r\n") != std::string::npos);
  auto shards = client.command({"CLUSTER", "SHARDS"});
  REQUIRE(shards.elements.size() == 1);
  CHECK(shards.elements[0].elements[0].str == "slots");
  CHECK(shards.elements[0].elements[3].elements[0].elements[1].str == id);
  CHECK(client.command({"INFO", "cluster"}).str.find("cluster_enabled:1") != std::string::npos);
  CHECK(client.command({"ASKING"}).is_ok());
  CHECK(client.command({"READONLY"}).is_ok());
  CHECK(client.command({"CLUSTER", "KEYSLOT", "somekey"}).integer == 11058);
  CHECK(client.command({"CLUSTER", "KEYSLOT", "foo{hash_tag}"}).integer == 2515);

  // Keys of one slot spread over the shards by Santral's own map (no tags in its hash_tag
  // sense would keep them together); COUNTKEYSINSLOT and GETKEYSINSLOT find them all.
  std::set<std::string> in_slot;
  long long slot = client.command({"CLUSTER", "KEYSLOT", "{a}"}).integer;
  for (int i = 0; i < 40; ++i) {
    std::string key = "{a}" + std::to_string(i);
    REQUIRE(client.command({"SET", key, "x"}).is_ok());
    REQUIRE(client.command({"SET", "other" + std::to_string(i), "y"}).is_ok());
    in_slot.insert(key);
  }
  for (int i = 0; i < 40; ++i)
    if (client.command({"CLUSTER", "KEYSLOT", "other" + std::to_string(i)}).integer == slot)
      in_slot.insert("other" + std::to_string(i));
  auto slot_text = std::to_string(slot);
  CHECK(client.command({"CLUSTER", "COUNTKEYSINSLOT", slot_text}).integer ==
        static_cast<long long>(in_slot.size()));
  auto some = client.command({"CLUSTER", "GETKEYSINSLOT", slot_text, "5"});
  CHECK(some.elements.size() == 5);
  for (const auto& key : some.elements) CHECK(in_slot.contains(key.str));
  auto all = client.command({"CLUSTER", "GETKEYSINSLOT", slot_text, "1000"});
  CHECK(all.elements.size() == in_slot.size());
  CHECK(client.command({"CLUSTER", "COUNTKEYSINSLOT", "16384"}).str == "ERR Invalid slot");
  CHECK(client.command({"CLUSTER", "GETKEYSINSLOT", "1", "-1"}).str ==
        "ERR Invalid slot or number of keys");
  CHECK(client.command({"CLUSTER", "COUNTKEYSINSLOT", "x"}).str ==
        "ERR value is not an integer or out of range");
  auto refused = client.command({"CLUSTER", "ADDSLOTS", "1"});
  CHECK(refused.str.find("cluster_endpoint") != std::string::npos);
}

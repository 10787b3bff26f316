// The routers as a Redis Cluster's nodes: contiguous slot ranges by name, stable ids.
#include <catch2/catch.hpp>

#include "router/commands/cluster_topology.h"

using namespace santral::router;

namespace {

RouterRecord router(std::string name, std::string announce = "") {
  RouterRecord r;
  r.name = std::move(name);
  r.listen = r.name;
  r.announce = announce.empty() ? r.listen : std::move(announce);
  return r;
}

}  // namespace

TEST_CASE("one router alone holds every slot") {
  auto nodes = cluster_nodes({}, router("127.0.0.1:6380", "10.0.0.5:7000"));
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].myself);
  CHECK(nodes[0].first_slot == 0);
  CHECK(nodes[0].last_slot == 16383);
  CHECK(nodes[0].host == "10.0.0.5");
  CHECK(nodes[0].port == 7000);
  CHECK(nodes[0].id.size() == 40);
  CHECK(nodes[0].id != nodes[0].shard_id);
}

TEST_CASE("a fleet splits the slots in contiguous ranges, the same on every router") {
  std::vector<RouterRecord> fleet = {router("c:1"), router("a:1"), router("b:1")};
  auto seen_by_b = cluster_nodes(fleet, router("b:1"));
  auto seen_by_c = cluster_nodes(fleet, router("c:1"));
  REQUIRE(seen_by_b.size() == 3);
  CHECK(seen_by_b[0].name == "a:1");
  CHECK(seen_by_b[0].first_slot == 0);
  CHECK(seen_by_b[0].last_slot == 5460);
  CHECK(seen_by_b[1].first_slot == 5461);
  CHECK(seen_by_b[1].last_slot == 10921);
  CHECK(seen_by_b[2].first_slot == 10922);
  CHECK(seen_by_b[2].last_slot == 16383);
  CHECK(seen_by_b[1].myself);
  CHECK(seen_by_c[2].myself);
  for (std::size_t i = 0; i < 3; ++i) CHECK(seen_by_b[i].id == seen_by_c[i].id);
  // A router the view does not list yet (its registration not read back) is still there.
  CHECK(cluster_nodes({router("a:1")}, router("b:1")).size() == 2);
}

TEST_CASE("CLUSTER KEYSLOT: Redis's CRC16 with {tags}") {
  CHECK(cluster_key_slot("foo") == 12182);
  CHECK(cluster_key_slot("somekey") == 11058);
  CHECK(cluster_key_slot("foo{hash_tag}") == 2515);
  CHECK(cluster_key_slot("{user1000}.following") == cluster_key_slot("user1000"));
  CHECK(cluster_key_slot("foo{}{bar}") == cluster_key_slot("foo{}{bar}"));
  CHECK(cluster_key_slot("{}x") != cluster_key_slot("x"));  // an empty tag hashes the whole key
}

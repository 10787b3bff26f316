#include "router/admin/placement_view.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "config/config.h"
#include "placement/topology.h"

using nlohmann::json;
using santral::router::placement_json;

namespace {

const char* kConfig = R"(
hash: murmur
distribution: ketama
shards:
  - {name: shard0, address: 127.0.0.1:7001}
  - {name: shard1, address: 127.0.0.1:7002}
  - {name: shard2, address: 127.0.0.1:7003, weight: 2}
  - {name: shard3, address: 127.0.0.1:7004}
namespaces:
  - name: sessions
    match: "session:{id}"
    strategy: hashed
    vnodes: 100
    shards: [shard1, shard2]
  - name: carts
    match: "cart:{user}"
    strategy: slots
    slots:
      - {shard: shard0, from: 0, to: 8191}
      - {shard: shard3, from: 8192, to: 16383}
  - name: customers
    match: "customer:{name}"
    strategy: range
    ranges:
      - {shard: shard0, to: "h"}
      - {shard: shard1, from: "h"}
  - name: orders
    match: "order:{seller}:{id}"
    strategy: directory
    groups: {seller42: shard1}
    fallback: {strategy: hashed, shards: [shard2, shard3]}
  - name: tenants
    match: "tenant:{tenant}:{key}"
    strategy: zone
    zones: {eu: [shard0, shard1], us: [shard2, shard3]}
    groups: {acme: eu}
    default_zone: us
)";

// The shard the drawn ring gives a hash: the first arc ending at or after it, else the first.
std::size_t shard_on(const json& ring, std::uint32_t hash) {
  for (const auto& arc : ring["arcs"])
    if (arc[0].get<std::uint32_t>() >= hash) return arc[1].get<std::size_t>();
  return ring["arcs"][0][1].get<std::size_t>();
}

}  // namespace

TEST_CASE("/placement draws every namespace's table as the shard map places keys") {
  auto topology = santral::placement::make_topology(
      santral::config::parse_config(kConfig, "placement.yaml"), 3);
  json placement = placement_json(*topology);
  const auto& map = *topology->map;
  const auto& config = *topology->config;
  CHECK(placement["config_version"] == 3);
  CHECK(placement["shards"] == json({"shard0", "shard1", "shard2", "shard3"}));
  const auto& namespaces = placement["namespaces"];
  REQUIRE(namespaces.size() == 5);

  SECTION("a hashed namespace's ring: arcs in order, every key where the map puts it") {
    const auto& sessions = namespaces[0];
    CHECK(sessions["strategy"] == "hashed");
    CHECK(sessions["shards"] == json({1, 2}));
    CHECK(sessions["ring"]["points"] == 300);  // 100 per unit of weight, shard2 weighs 2
    std::uint32_t last = 0;
    for (const auto& arc : sessions["ring"]["arcs"]) {
      CHECK(arc[0].get<std::uint32_t>() >= last);
      last = arc[0].get<std::uint32_t>();
    }
    for (int i = 0; i < 2000; ++i) {
      std::string id = "s" + std::to_string(i);
      auto hash = config.namespaces[0].hashed.hash(id);
      CHECK(map.shard_for_key("session:" + id) == shard_on(sessions["ring"], hash));
    }
  }
  SECTION("the default ketama ring, likewise") {
    const auto& ring = placement["default"]["ring"];
    CHECK(placement["default"]["distribution"] == "ketama");
    for (int i = 0; i < 2000; ++i) {
      std::string key = "post:" + std::to_string(i);
      CHECK(map.shard_for_key(key) == shard_on(ring, config.hash(key)));
    }
  }
  SECTION("slots, ranges, a directory and zones as configured") {
    CHECK(namespaces[1]["slot_ranges"] ==
          json::parse(R"([{"from":0,"to":8191,"shard":0},{"from":8192,"to":16383,"shard":3}])"));
    CHECK(namespaces[2]["order"] == "lexical");
    CHECK(namespaces[2]["ranges"] ==
          json::parse(R"([{"from":null,"to":"h","shard":0},{"from":"h","to":null,"shard":1}])"));
    CHECK(namespaces[3]["groups"] == json::parse(R"([{"group":"seller42","shard":1}])"));
    CHECK(namespaces[3]["fallback"] == "hashed");
    CHECK(namespaces[3]["ring"]["points"] == 480);  // shard2 (weight 2) and shard3, 160 each
    CHECK(namespaces[4]["default_zone"] == "us");
    CHECK(namespaces[4]["groups"] == json::parse(R"([{"group":"acme","zone":"eu"}])"));
    REQUIRE(namespaces[4]["zones"].size() == 2);
    CHECK(namespaces[4]["zones"][0]["name"] == "eu");
    CHECK(namespaces[4]["zones"][0]["shards"] == json({0, 1}));
    CHECK(namespaces[4]["zones"][1]["ring"]["points"] == 480);
  }
}

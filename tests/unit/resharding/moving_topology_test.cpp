// moving_topology: the topology a move serves with, built from two maps in memory.
#include <catch2/catch.hpp>

#include <string>

#include "placement/topology.h"
#include "router/resharding/moving_topology.h"

using namespace santral;

namespace {

placement::TopologyPtr topology(const std::string& yaml, std::uint64_t version = 1) {
  return placement::make_topology(config::parse_config(yaml, "test.yaml"), version);
}

const std::string kThree =
    "shards:\n"
    "  - {name: shard0, address: 127.0.0.1:7000}\n"
    "  - {name: shard1, address: 127.0.0.1:7001}\n"
    "  - {name: shard2, address: 127.0.0.1:7002}\n";

// Grows: shard3 joins.
const std::string kFour = kThree + "  - {name: shard3, address: 127.0.0.1:7003}\n";

// Shrinks: shard2 leaves.
const std::string kTwo =
    "shards:\n"
    "  - {name: shard0, address: 127.0.0.1:7000}\n"
    "  - {name: shard1, address: 127.0.0.1:7001}\n";

std::size_t index_by_address(const placement::ShardMap& map, const std::string& address) {
  for (std::size_t i = 0; i < map.shards().size(); ++i)
    if (map.shards()[i].address.text() == address) return i;
  FAIL("no shard at " << address);
  return 0;
}

}  // namespace

TEST_CASE("moving_topology serves the destination map with the move from the origin") {
  auto from = topology(kThree);
  auto to = topology(kFour);
  auto moving = router::moving_topology(*from, *to, 42, 7);

  CHECK(moving->version == 42);
  REQUIRE(moving->move);
  CHECK(moving->move->epoch == 7);
  CHECK(moving->move->from == from->map);
  // No shard only `from` has: the destination's shards, none draining.
  REQUIRE(moving->map->shards().size() == 4);
  for (const auto& shard : moving->map->shards()) CHECK_FALSE(shard.draining);
  // from's shard i is the same server in the moving map.
  REQUIRE(moving->move->from_shard.size() == 3);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(moving->move->from_shard[i] ==
          index_by_address(*moving->map, from->map->shards()[i].address.text()));

  int moved = 0, stayed = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string key = "key:" + std::to_string(i);
    std::size_t owner = moving->map->shard_for_key(key);
    // The moving map places keys as the destination does.
    REQUIRE(owner == to->map->shard_for_key(key));
    std::size_t was = from->map->shard_for_key(key);
    auto source = moving->move->source_of(key, owner);
    if (from->map->shards()[was].address.text() == moving->map->shards()[owner].address.text()) {
      CHECK_FALSE(source.has_value());
      ++stayed;
    } else {
      REQUIRE(source.has_value());
      CHECK(moving->map->shards()[*source].address.text() ==
            from->map->shards()[was].address.text());
      ++moved;
    }
  }
  // A fourth shard takes some keys and leaves most where they are.
  CHECK(moved > 0);
  CHECK(stayed > moved);
}

TEST_CASE("moving_topology appends the shards only the origin has, draining") {
  auto from = topology(kThree);
  auto to = topology(kTwo);
  auto moving = router::moving_topology(*from, *to, 5, 1);

  REQUIRE(moving->map->shards().size() == 3);
  const auto& leaving = moving->map->shards()[2];
  CHECK(leaving.address.text() == "127.0.0.1:7002");
  CHECK(leaving.name == "shard2");
  CHECK(leaving.draining);
  CHECK(moving->config->shards.size() == 3);
  CHECK(moving->config->shards[2].draining);
  // The draining shard is the old owner of what it held, and the map places nothing on it.
  CHECK(moving->move->from_shard == std::vector<std::size_t>{0, 1, 2});

  int from_leaving = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string key = "k" + std::to_string(i);
    std::size_t owner = moving->map->shard_for_key(key);
    REQUIRE(owner < 2);
    REQUIRE(owner == to->map->shard_for_key(key));
    auto source = moving->move->source_of(key, owner);
    if (from->map->shard_for_key(key) == 2) {
      REQUIRE(source.has_value());
      CHECK(*source == 2);
      ++from_leaving;
    } else if (from->map->shard_for_key(key) == owner) {
      CHECK_FALSE(source.has_value());
    }
  }
  CHECK(from_leaving > 0);
}

TEST_CASE("moving_topology renames a leaving shard whose name the destination took") {
  // shard1 is renamed onto a new server; the old server keeps its name in `from`.
  auto from = topology(kTwo);
  auto to = topology(
      "shards:\n"
      "  - {name: shard0, address: 127.0.0.1:7000}\n"
      "  - {name: shard1, address: 127.0.0.1:7009}\n");
  auto moving = router::moving_topology(*from, *to, 2, 3);
  REQUIRE(moving->map->shards().size() == 3);
  CHECK(moving->map->shards()[2].address.text() == "127.0.0.1:7001");
  CHECK(moving->map->shards()[2].name == "shard1-leaving");
  CHECK(moving->map->shards()[2].draining);
  CHECK(moving->move->from_shard == std::vector<std::size_t>{0, 2});
}

TEST_CASE("moving_topology keeps the names salted counters already have") {
  auto from = topology(kThree);
  auto to = topology(kFour);
  SECTION("none set: the origin's map names them") {
    auto moving = router::moving_topology(*from, *to, 2, 1);
    CHECK(moving->salt_naming == from->map);
    CHECK(&moving->naming_map() == from->map.get());
  }
  SECTION("an earlier naming map stays") {
    auto older = topology(kTwo);
    auto named = std::make_shared<placement::Topology>(*from);
    named->salt_naming = older->map;
    auto moving = router::moving_topology(*named, *to, 2, 1);
    CHECK(moving->salt_naming == older->map);
  }
}

TEST_CASE("moving_topology the other way round (an abort) moves keys back to the origin") {
  auto from = topology(kThree);
  auto to = topology(kFour);
  auto back = router::moving_topology(*to, *from, 9, 2);
  // Back on three shards, plus shard3 draining.
  REQUIRE(back->map->shards().size() == 4);
  CHECK(back->map->shards()[3].address.text() == "127.0.0.1:7003");
  CHECK(back->map->shards()[3].draining);
  CHECK(back->move->epoch == 2);
  for (int i = 0; i < 1000; ++i) {
    std::string key = "x" + std::to_string(i);
    std::size_t owner = back->map->shard_for_key(key);
    REQUIRE(owner == from->map->shard_for_key(key));
    auto source = back->move->source_of(key, owner);
    if (to->map->shard_for_key(key) == 3) {
      REQUIRE(source.has_value());
      CHECK(*source == 3);
    }
  }
}

// placement/namespace/hash_ring.cpp: a hashed namespace's ring of shards.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "config/hashkit/ring_node.h"
#include "placement/namespace/hash_ring.h"

using namespace santral::placement;

TEST_CASE("hash rings get vnodes points per unit of weight") {
  using santral::hashkit::RingNode;
  std::vector<HashRing::Member> members = {{RingNode{"a", 1}, 0}, {RingNode{"b", 3}, 5}};
  HashRing ring(members, 10);
  CHECK(ring.point_count() == 40);
  std::set<std::size_t> seen;
  for (std::uint32_t h = 0; h < 4000; ++h) seen.insert(ring.locate(h * 1073741u));
  CHECK(seen == std::set<std::size_t>{0, 5});
  HashRing reordered(std::vector<HashRing::Member>{members[1], members[0]}, 10);
  for (std::uint32_t h = 0; h < 4000; ++h)
    REQUIRE(ring.locate(h * 1073741u) == reordered.locate(h * 1073741u));
}

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "router/merge/gathered/sorted_set_algebra.h"

using namespace santral::router;

TEST_CASE("ZUNION and ZINTER aggregate as Redis, inf - inf is 0, ties sort by member") {
  std::vector<ZsetSource> sources(2);
  sources[0].members = {{"a", 1}, {"b", INFINITY}, {"c", 2}};
  sources[1].members = {{"b", -INFINITY}, {"a", 1}};
  auto sum = zset_union(sources, Aggregate::Sum);
  REQUIRE(sum.size() == 3);
  CHECK(sum[0].member == "b");
  CHECK(sum[0].score == 0);
  CHECK(sum[1].member == "a");
  CHECK(sum[1].score == 2);
  CHECK(sum[2].member == "c");
  auto min = zset_inter(sources, Aggregate::Min);
  REQUIRE(min.size() == 2);
  CHECK(min[0].member == "b");
  CHECK(min[0].score == -INFINITY);
  // weight 0 times inf is NaN: Redis makes it 0.
  sources[0].weight = 0;
  auto zero = zset_union(sources, Aggregate::Max);
  CHECK(zero[0].member == "b");
  CHECK(zero[0].score == 0);
  CHECK(zset_inter_card(sources, 0) == 2);
  CHECK(zset_inter_card(sources, 1) == 1);
  CHECK(zset_diff(sources).size() == 1);
}

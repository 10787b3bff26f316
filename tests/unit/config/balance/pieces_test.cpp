#include <catch2/catch.hpp>

#include <vector>

#include "config/balance/pieces.h"

using namespace santral::balance;

namespace {

Unit halves(std::string name, std::size_t shard, double load) {
  return {name, shard,
          load, 100,
          0,    {{name + "/a", 0, load / 2, 50, 0, {}}, {name + "/b", 0, load / 2, 50, 0, {}}}};
}

}  // namespace

TEST_CASE("the indivisible load is the heaviest piece no split can cut") {
  CHECK(indivisible_load(Unit{"whole", 0, 7, 1, 0, {}}) == 7);
  CHECK(indivisible_load(halves("r", 0, 10)) == 5);
  Unit nested{"n", 0, 10, 0, 0, {halves("n/a", 0, 6), {"n/b", 0, 4, 0, 0, {}}}};
  CHECK(indivisible_load(nested) == 4);  // n/a's halves are 3, n/b is 4
}

TEST_CASE("a jumbo is a unit over the cap that cannot be cut under it") {
  std::vector<Jumbo> jumbos;
  find_jumbos(Unit{"big", 2, 50, 9, 0, {}}, 2, 30, 25, jumbos);
  find_jumbos(Unit{"small", 1, 10, 1, 0, {}}, 1, 30, 25, jumbos);
  find_jumbos(halves("splittable", 0, 50), 0, 30, 25, jumbos);  // halves of 25 fit
  Unit lumpy{"lumpy", 3, 60,
             0,       0, {{"lumpy/old", 0, 20, 0, 0, {}}, {"lumpy/new", 0, 40, 0, 0, {}}}};
  find_jumbos(lumpy, 3, 30, 25, jumbos);
  REQUIRE(jumbos.size() == 2);
  CHECK(jumbos[0].unit == "big");
  CHECK(jumbos[0].shard == 2);
  CHECK(jumbos[0].ratio == Approx(2.0));
  CHECK(jumbos[1].unit == "lumpy/new");  // the child that stays too big, on its unit's shard
  CHECK(jumbos[1].shard == 3);
}

TEST_CASE("cutting to a ceiling splits only what is heavier, down the levels") {
  std::vector<Unit> units{
      halves("light", 0, 8), Unit{"stone", 1, 40, 1, 0, {}},
      Unit{"deep", 2, 40, 0, 0, {halves("deep/a", 0, 20), halves("deep/b", 0, 20)}}};
  std::vector<Split> splits;
  auto pieces = cut_to_ceiling(units, 15, splits);
  std::vector<std::string> names;
  for (const auto& p : pieces) names.push_back(p.unit->name);
  CHECK(names ==
        std::vector<std::string>{"light", "stone", "deep/a/a", "deep/a/b", "deep/b/a", "deep/b/b"});
  REQUIRE(splits.size() == 3);
  CHECK(splits[0].unit == "deep");
  CHECK(splits[0].pieces == 2);
  CHECK(splits[1].unit == "deep/a");
  CHECK(pieces[2].shard == 2);
  CHECK(pieces[2].splits == std::vector<std::size_t>{0, 1});  // outermost first
  CHECK(pieces[5].splits == std::vector<std::size_t>{0, 2});
}

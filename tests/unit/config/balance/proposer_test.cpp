#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/balance/proposer.h"

using namespace santral::balance;

namespace {

// A unit whose keys are its load, as in the seed lesson (a seller's volume is both).
Unit group(std::string name, std::size_t shard, double load) {
  return {std::move(name), shard, load, static_cast<std::uint64_t>(load), 0, {}};
}

// A group that can be split into `pieces` equal children.
Unit splittable(std::string name, std::size_t shard, double load, int pieces) {
  Unit u = group(name, shard, load);
  for (int i = 0; i < pieces; ++i)
    u.children.push_back(group(name + "/" + std::to_string(i), 0, load / pieces));
  return u;
}

std::vector<std::string> moved_units(const Proposal& proposal) {
  std::vector<std::string> names;
  for (const auto& m : proposal.moves) names.push_back(m.unit);
  return names;
}

}  // namespace

TEST_CASE("whole units move from the busiest shard until it is under the target") {
  // mean 80/3, a shard may carry 32; shard0 must shed 28 and only b (20) and c (10) fit elsewhere.
  std::vector<Unit> units{group("a", 0, 30), group("b", 0, 20), group("c", 0, 10),
                          group("d", 1, 10), group("e", 2, 10)};
  auto proposal = propose_balance(units, {3, 1.2});
  REQUIRE(proposal.error.empty());
  CHECK(proposal.ratio_before == Approx(60 / (80.0 / 3)));
  CHECK(moved_units(proposal) == std::vector<std::string>{"b", "c"});
  CHECK(proposal.moves[0].from == 0);
  CHECK(proposal.moves[0].to == 1);
  CHECK(proposal.moves[1].to == 2);
  CHECK(proposal.loads_after == std::vector<double>{30, 30, 20});
  CHECK(proposal.ratio_after == Approx(30 / (80.0 / 3)));
  CHECK(proposal.target_met);
  CHECK(proposal.keys_moved == 30);
  CHECK(proposal.moved_fraction() == Approx(30.0 / 80));
  CHECK(proposal.splits.empty());
  CHECK(proposal.jumbos.empty());
  CHECK(proposal.units_after == 5);
}

TEST_CASE("a plan already under the target moves nothing") {
  std::vector<Unit> units{group("a", 0, 11), group("b", 1, 10)};
  auto proposal = propose_balance(units, {2, 1.2});
  CHECK(proposal.moves.empty());
  CHECK(proposal.target_met);
  CHECK(proposal.ratio_after == proposal.ratio_before);
}

TEST_CASE("of two units that shed the excess, the one with fewer keys moves") {
  std::vector<Unit> units{
      {"hot", 0, 20, 10, 0, {}}, {"cold", 0, 20, 1000, 0, {}}, {"x", 1, 10, 10, 0, {}}};
  auto proposal = propose_balance(units, {2, 1.2});
  CHECK(moved_units(proposal) == std::vector<std::string>{"hot"});
  CHECK(proposal.keys_moved == 10);
  CHECK(proposal.ratio_after == Approx(1.2));
}

TEST_CASE("several cheap units move rather than one that costs many keys") {
  // shard0 sheds 4.4: 'heavy' would do it alone but holds 600 keys; three of the small ones hold 6.
  std::vector<Unit> units{{"heavy", 0, 6, 600, 0, {}}, group("s1", 0, 2), group("s2", 0, 2),
                          group("s3", 0, 2),           group("s4", 0, 2), group("x", 1, 2)};
  auto proposal = propose_balance(units, {2, 1.2});
  CHECK(moved_units(proposal) == std::vector<std::string>{"s1", "s2", "s3"});
  CHECK(proposal.keys_moved == 6);
  CHECK(proposal.ratio_after == Approx(1.0));
}

TEST_CASE("a jumbo unit is reported, not split, and bounds the ratio") {
  // mean 22.5, a shard may carry 27: 'big' (50) cannot be placed under it and has no children.
  std::vector<Unit> units{group("big", 0, 50), group("s1", 0, 5),  group("s2", 0, 5),
                          group("t1", 1, 10),  group("t2", 2, 10), group("t3", 3, 10)};
  auto proposal = propose_balance(units, {4, 1.2});
  REQUIRE(proposal.jumbos.size() == 1);
  CHECK(proposal.jumbos[0].unit == "big");
  CHECK(proposal.jumbos[0].shard == 0);
  CHECK(proposal.jumbos[0].ratio == Approx(50 / 22.5));
  CHECK(proposal.splits.empty());
  // The best any proposal can do is 'big' alone on its shard: the small units leave it.
  CHECK(moved_units(proposal) == std::vector<std::string>{"s1", "s2"});
  CHECK(proposal.ratio_after == Approx(50 / 22.5));
  CHECK(proposal.ratio_floor == Approx(50 / 22.5));
  CHECK_FALSE(proposal.target_met);
  CHECK(proposal.units_after == 6);
}

TEST_CASE("a unit too heavy for any shard is split into its children and one moves") {
  // mean 25, a shard may carry 30; 'seller' (40) must be split, then one quarter sheds the excess.
  std::vector<Unit> units{splittable("seller", 0, 40, 4), group("a", 1, 20), group("b", 2, 20),
                          group("c", 3, 20)};
  auto proposal = propose_balance(units, {4, 1.2});
  CHECK(proposal.jumbos.empty());
  REQUIRE(proposal.splits.size() == 1);
  CHECK(proposal.splits[0].unit == "seller");
  CHECK(proposal.splits[0].pieces == 4);
  CHECK(proposal.splits[0].shards_after == std::vector<std::size_t>{0, 1});
  CHECK(moved_units(proposal) == std::vector<std::string>{"seller/0"});
  CHECK(proposal.ratio_after == Approx(1.2));
  CHECK(proposal.target_met);
  CHECK(proposal.units_before == 4);
  CHECK(proposal.units_after == 7);
  CHECK(proposal.ratio_floor == Approx(1.0));

  // The same unit offered whole is a jumbo: the target cannot be met.
  units[0].children.clear();
  auto whole = propose_balance(units, {4, 1.2});
  CHECK(whole.jumbos.size() == 1);
  CHECK(whole.moves.empty());
  CHECK(whole.ratio_after == Approx(1.6));
  CHECK_FALSE(whole.target_met);
}

TEST_CASE("pieces of a split unit go where its other pieces went, when there is room") {
  // mean 25, a shard may carry 30; shard3 (19) is the least loaded and takes the first piece,
  // then the second too, although shard1 (20) has become the least loaded.
  std::vector<Unit> units{splittable("seller", 0, 40, 8), group("a", 1, 20), group("b", 2, 21),
                          group("c", 3, 19)};
  auto proposal = propose_balance(units, {4, 1.2});
  REQUIRE(proposal.moves.size() == 2);
  CHECK(proposal.moves[0].to == 3);
  CHECK(proposal.moves[1].to == 3);
  CHECK(proposal.splits[0].shards_after == std::vector<std::size_t>{0, 3});
  CHECK(proposal.target_met);
}

TEST_CASE("a unit that fits no shard whole is split when nothing else can move") {
  // mean 20, a shard may carry 24: neither 14 fits on shard1 (12), half of 'a' does.
  std::vector<Unit> units{splittable("a", 0, 14, 2), group("b", 0, 14), group("c", 1, 12)};
  auto proposal = propose_balance(units, {2, 1.2});
  REQUIRE(proposal.splits.size() == 1);
  CHECK(proposal.splits[0].unit == "a");
  CHECK(proposal.splits[0].reason == "no shard had room for it whole");
  CHECK(moved_units(proposal) == std::vector<std::string>{"a/0"});
  CHECK(proposal.loads_after == std::vector<double>{21, 19});
  CHECK(proposal.target_met);
}

TEST_CASE("a target no placement can meet is reported as not met") {
  // Two equal units on three shards: the busiest carries 1.5 x the mean whatever moves.
  std::vector<Unit> units{group("a", 0, 10), group("b", 0, 10)};
  auto proposal = propose_balance(units, {3, 1.2});
  CHECK(proposal.jumbos.size() == 2);
  CHECK(moved_units(proposal) == std::vector<std::string>{"a"});
  CHECK(proposal.ratio_after == Approx(1.5));
  CHECK(proposal.ratio_floor == Approx(1.5));
  CHECK_FALSE(proposal.target_met);
}

TEST_CASE("invalid input is an error, not a plan") {
  std::vector<Unit> units{group("a", 0, 10), group("b", 1, 10)};
  CHECK_THAT(propose_balance(units, {2, 0.9}).error, Catch::Contains("below 1"));
  CHECK_THAT(propose_balance(units, {0, 1.2}).error, Catch::Contains("at least one shard"));
  CHECK_THAT(propose_balance(units, {1, 1.2}).error, Catch::Contains("unit 'b' is on shard 1"));
  std::vector<Unit> bad_children{splittable("c", 0, 10, 2)};
  bad_children[0].children[1].load = 1;
  CHECK_THAT(propose_balance(bad_children, {2, 1.2}).error,
             Catch::Contains("children's add up to 6"));
  std::vector<Unit> negative{{"n", 0, -1, 0, 0, {}}};
  CHECK_THAT(propose_balance(negative, {2, 1.2}).error, Catch::Contains("unit 'n' has load -1"));
  CHECK(propose_balance(units, {2, 1.0}).error.empty());  // perfect balance is a valid target
}

TEST_CASE("a pinned unit counts on its shard but never moves") {
  // shard0 carries a ring's share (pinned, 40, in few keys: the cheapest to move, were it
  // movable) and a group (20): only the group may go.
  Unit ring = group("ring on s0", 0, 40);
  ring.keys = 5;
  ring.pinned = true;
  std::vector<Unit> units{ring, group("g", 0, 20), group("h", 1, 10)};
  auto proposal = propose_balance(units, {2, 1.2});
  REQUIRE(proposal.error.empty());
  CHECK(moved_units(proposal) == std::vector<std::string>{"g"});
  CHECK(proposal.loads_after == std::vector<double>{40, 30});
  CHECK(proposal.target_met);  // 40 over a mean of 35
}

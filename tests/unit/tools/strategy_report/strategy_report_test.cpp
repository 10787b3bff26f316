#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "config/balance/proposer.h"
#include "placement/shard_map.h"
#include "placement/whatif/group_balance.h"
#include "placement/whatif/grow.h"
#include "placement/whatif/metrics.h"
#include "placement/whatif/replay.h"
#include "placement/whatif/trace.h"
#include "tools/strategy_report/lesson_model.h"
#include "tools/strategy_report/lesson_rebalance.h"

using namespace santral;
using namespace santral::strategy_report;
using namespace santral::whatif;

namespace {

config::Config shards(std::size_t count) {
  config::Config c;
  c.hash_name = "murmur";
  c.hash = hashkit::murmur;
  c.hash_tag = "{}";
  for (std::size_t i = 0; i < count; ++i) {
    config::ShardConfig s;
    s.name = "shard" + std::to_string(i);
    s.ring_name = s.name;
    s.address = {"127.0.0.1", static_cast<std::uint16_t>(7000 + i)};
    c.shards.push_back(s);
  }
  return c;
}

// "item:{n}" in numeric ranges [-inf, 10) -> shard0, [10, +inf) -> shard1.
config::Config two_ranges() {
  auto c = shards(2);
  config::NamespaceConfig ns;
  ns.name = "items";
  ns.match = "item:{n}";
  ns.shard_key = "n";
  ns.strategy = config::Strategy::Range;
  ns.order = config::RangeOrder::Numeric;
  ns.ranges = {{std::nullopt, "10", 0}, {"10", std::nullopt, 1}};
  c.namespaces.push_back(ns);
  return c;
}

}  // namespace

TEST_CASE("hot-spot ratio is the busiest shard's load over the mean") {
  std::vector<std::uint64_t> all_on_one{0, 0, 0, 0, 0, 0, 0, 80};
  CHECK(hot_spot_ratio(all_on_one) == Approx(8.0));
  std::vector<std::uint64_t> even{5, 5, 5, 5};
  CHECK(hot_spot_ratio(even) == Approx(1.0));
  std::vector<std::uint64_t> skewed{30, 10, 10, 10};  // mean 15
  CHECK(hot_spot_ratio(skewed) == Approx(2.0));
  std::vector<std::size_t> last_two{2, 3};  // only over the namespace's shards
  CHECK(hot_spot_ratio(skewed, last_two) == Approx(1.0));
  CHECK(hot_spot_ratio(std::vector<std::uint64_t>{0, 0}) == 0.0);
  std::vector<std::uint64_t> by_weight{20, 10, 10};
  std::vector<std::size_t> all{0, 1, 2};
  std::vector<std::uint32_t> weights{2, 1, 1};  // shard 0 is meant to carry half
  CHECK(hot_spot_ratio(by_weight, all, weights) == Approx(1.0));
  std::vector<std::uint32_t> even_weights{1, 1, 1};
  CHECK(hot_spot_ratio(by_weight, all, even_weights) == Approx(1.5));
}

TEST_CASE("store touches: a table lookup costs one more") {
  CHECK(store_touches(config::Strategy::Directory) == 2);
  CHECK(store_touches(config::Strategy::Zone) == 2);
  CHECK(store_touches(config::Strategy::Range) == 1);
  CHECK(store_touches(config::Strategy::Hashed) == 1);
  CHECK(store_touches(std::nullopt) == 1);
}

TEST_CASE("a scan reads every key of each shard it visits") {
  std::vector<std::uint64_t> keys{100, 20, 3};
  std::vector<std::size_t> touched{0, 2};
  auto cost = scan_cost(touched, keys);
  CHECK(cost.shards == 2);
  CHECK(cost.keys == 103);
}

TEST_CASE("the trace format: a key and an optional count") {
  std::istringstream in("# comment\nitem:1 5\n\nitem:2\nitem:3\t0\n");
  auto trace = parse_trace(in, "t.txt");
  REQUIRE(trace.size() == 3);
  CHECK(trace.key(0) == "item:1");
  CHECK(trace.count(0) == 5);
  CHECK(trace.key(1) == "item:2");
  CHECK(trace.count(1) == 1);
  CHECK(trace.count(2) == 0);
  CHECK(trace.total_count() == 6);
  std::istringstream bad("item:1 many\n");
  CHECK_THROWS_WITH(parse_trace(bad, "t.txt"), Catch::Contains("t.txt:1"));
}

TEST_CASE("greedy assignment puts the heaviest group alone and balances the rest") {
  std::vector<std::uint64_t> loads{10, 4, 3, 3};
  auto placed = greedy_assign(loads, 2);
  CHECK(placed == std::vector<std::size_t>{0, 1, 1, 1});
}

TEST_CASE("the lesson's rebalancer moves the heaviest group that fits, busiest to least busy") {
  std::vector<double> weights{5, 3, 2, 2};  // shard0: 10, shard1: 2; target 1.0
  auto moved = lesson_rebalance(weights, {0, 0, 0, 1}, 2, 1.0);
  // 5 leaves shard1 (7) below shard0 as it was (10), so it moves though it overshoots; then
  // shard1 is the busiest and neither of its groups leaves shard0 (5) below 7.
  CHECK(moved.shard == std::vector<std::size_t>{1, 0, 0, 1});
  CHECK(moved.moves == 1);
  CHECK(moved.moved == Approx(5));
  CHECK(moved.ratio == Approx(7.0 / 6));
}

TEST_CASE("the lesson's rebalancing figures, recomputed") {
  auto lesson = run_lesson_rebalance();
  CHECK(lesson.untouched == Approx(1.904).margin(0.0005));
  CHECK(lesson.whole.ratio == Approx(1.549).margin(0.0005));
  CHECK(lesson.whole.moved == Approx(0.0443).margin(0.00005));
  CHECK(lesson.whole.moves == 468);
  CHECK(lesson.days.ratio == Approx(1.181).margin(0.0005));
  CHECK(lesson.days.moved == Approx(0.0904).margin(0.00005));
  CHECK(lesson.days.moves == 14);
  CHECK(lesson.day_shards == 8);
  CHECK(lesson.rows_after == 4029);
}

TEST_CASE("the balancer on the lesson's grown seller: its floor whole, the target split") {
  auto before = zipf_shares(LessonModel::kSellers, LessonModel::kExponent);
  auto after = zipf_shares(LessonModel::kSellers, LessonModel::kExponent, RebalanceModel::kGrowth);
  CHECK(after[0] == Approx(0.1937).margin(0.00005));
  auto placed = greedy_assign(std::span<const double>(before), RebalanceModel::kShards);
  const balance::Goal goal{RebalanceModel::kShards, RebalanceModel::kTarget};

  auto whole_units = seller_units(after, placed, false);
  auto whole = balance::propose_balance(whole_units, goal);
  REQUIRE(whole.jumbos.size() == 1);
  CHECK(whole.jumbos[0].unit == "0");
  CHECK(whole.ratio_after == Approx(1.549).margin(0.0005));
  CHECK(whole.moved_fraction() == Approx(0.0443).margin(0.00005));
  CHECK(whole.moves.size() == 468);

  auto day_units = seller_units(after, placed, true);
  auto days = balance::propose_balance(day_units, goal);
  CHECK(days.target_met);
  REQUIRE(days.splits.size() == 1);  // only the grown seller, though every one could be
  CHECK(days.splits[0].unit == "0");
  CHECK(days.units_after == 4029);
  CHECK(days.moved_fraction() < 0.0904);  // the lesson's, for 1.181
  CHECK(days.splits[0].shards_after.size() < 8);
}

TEST_CASE("a new directory shard takes groups up to the mean load") {
  std::vector<std::uint64_t> groups{6, 3, 3, 2, 1, 1};  // 16 in all
  std::vector<std::size_t> group_shard{0, 0, 1, 1, 1, 0};
  std::vector<std::uint64_t> loads{10, 6, 0};  // the new shard is 2; mean 5
  auto moves = fill_new_shard(groups, group_shard, loads, 2);
  // From shard 0 (busiest): 6 does not fit (> 5), 3 does; then 1 from shard 0 (7 vs 4), then
  // shard 0 and 1 tie at 6: 1 from shard 1.
  CHECK(moves == 3);
  CHECK(loads == std::vector<std::uint64_t>{6, 5, 5});
  CHECK(group_shard == std::vector<std::size_t>{0, 2, 1, 1, 2, 2});
}

TEST_CASE("a new directory shard never takes a shard below the mean") {
  std::vector<std::uint64_t> groups{5, 1, 1, 1};
  std::vector<std::size_t> group_shard{0, 1, 1, 1};
  std::vector<std::uint64_t> loads{5, 3, 0};  // mean 2: the 5 is bigger than shard 0's excess
  CHECK(fill_new_shard(groups, group_shard, loads, 2) == 1);
  CHECK(loads == std::vector<std::uint64_t>{5, 2, 1});
  CHECK(group_shard == std::vector<std::size_t>{0, 2, 1, 1});
}

TEST_CASE("keys moved: a range split moves only the upper part of the busiest range") {
  auto config = two_ranges();
  placement::ShardMap map(config);
  Trace trace;
  for (int n : {1, 2, 3}) trace.add("item:" + std::to_string(n), 1);         // shard0: 3
  for (int n : {10, 11, 12, 13}) trace.add("item:" + std::to_string(n), 5);  // shard1: 20
  auto before = replay(map, trace);
  CHECK(hot_spot_ratio(shard_loads(before, trace)) == Approx(20.0 / 11.5));
  auto grown = with_added_shard(config, map, trace, before);
  REQUIRE(grown.namespaces[0].ranges.size() == 3);
  CHECK(grown.namespaces[0].ranges[1].to == "12");  // median access of [10, +inf)
  placement::ShardMap grown_map(grown);
  auto after = replay(grown_map, trace);
  CHECK(moved_share(before, after) == Approx(2.0 / 7));
  CHECK(after.shard[6] == 2);
  CHECK(after.shard[0] == 0);
}

TEST_CASE("keys moved: a hashed namespace gains a ring member and moves about 1/(n+1)") {
  auto config = shards(4);
  config::NamespaceConfig ns;
  ns.name = "all";
  ns.match = "k:{id}";
  ns.strategy = config::Strategy::Hashed;
  ns.hashed.shards = {0, 1, 2, 3};
  config.namespaces.push_back(ns);
  placement::ShardMap map(config);
  Trace trace;
  for (int i = 0; i < 20000; ++i) trace.add("k:" + std::to_string(i), 1);
  auto before = replay(map, trace);
  placement::ShardMap grown_map(with_added_shard(config, map, trace, before));
  auto after = replay(grown_map, trace);
  CHECK(moved_share(before, after) == Approx(0.2).margin(0.04));
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (after.shard[i] != before.shard[i]) REQUIRE(after.shard[i] == 4);  // only to the new one
}

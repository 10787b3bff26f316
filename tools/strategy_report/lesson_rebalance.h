#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "config/balance/unit.h"

namespace santral::strategy_report {

// The seed lesson's rebalancing experiment (bolum/dengele.mjs): the directory of 4,000 sellers
// is placed by greedy_assign over the D1 shares, then the largest seller's volume triples.
struct RebalanceModel {
  static constexpr std::size_t kShards = 8;  // P
  static constexpr double kTarget = 1.20;    // HEDEF
  static constexpr double kGrowth = 3;       // KAT: paylar(0.9, 3), 7.41% -> 19.37%
};

// The lesson's own rebalancer (enAzTasima): while the ratio is above `target`, move from the
// busiest shard to the least busy one the heaviest group of the busiest that leaves the least
// busy lighter than the busiest was; stop when no group does. `shard` is each group's shard.
struct LessonMoves {
  std::vector<std::size_t> shard;  // per group, after the moves
  double ratio = 0;
  double moved = 0;  // the moved groups' weight: the share of the keys moved
  std::size_t moves = 0;
};
LessonMoves lesson_rebalance(std::span<const double> weights, std::vector<std::size_t> shard,
                             std::size_t shards, double target);

// The lesson's three directory rows after the growth, by its own rebalancer.
struct LessonRebalance {
  double untouched = 0;        // the ratio if nothing moves
  LessonMoves whole;           // groups are sellers
  LessonMoves days;            // the grown seller as its kReportDays seller-day groups
  std::size_t day_shards = 0;  // the shards those groups end on: its period report's fan-out
  std::size_t rows_after = 0;  // directory rows with the seller-day groups
};
LessonRebalance run_lesson_rebalance();

// Sellers as balancer units on the shards of `placement`: load, their share of the accesses
// (the D3 window's shipments); keys, their share of the stored shipments (kRetentionDays days).
// With `days`, each seller can be split into its kReportDays seller-day groups ("{seller}/{day}").
std::vector<balance::Unit> seller_units(std::span<const double> shares,
                                        std::span<const std::size_t> placement, bool days);

}  // namespace santral::strategy_report

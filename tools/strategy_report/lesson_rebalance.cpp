#include "tools/strategy_report/lesson_rebalance.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "placement/whatif/group_balance.h"
#include "tools/strategy_report/lesson_model.h"

namespace santral::strategy_report {

using namespace whatif;  // the what-if replay (placement/whatif/) this tool reports on
namespace {

// The lesson's oran(): the busiest shard over the mean.
double ratio(std::span<const double> loads) {
  double total = std::accumulate(loads.begin(), loads.end(), 0.0);
  return *std::max_element(loads.begin(), loads.end()) /
         (total / static_cast<double>(loads.size()));
}

}  // namespace

LessonMoves lesson_rebalance(std::span<const double> weights, std::vector<std::size_t> shard,
                             std::size_t shards, double target) {
  std::vector<double> load(shards, 0.0);
  for (std::size_t g = 0; g < weights.size(); ++g) load[shard[g]] += weights[g];
  LessonMoves out;
  while (ratio(load) > target) {
    std::size_t busiest = 0, least = 0;
    for (std::size_t s = 1; s < shards; ++s) {
      if (load[s] > load[busiest]) busiest = s;
      if (load[s] < load[least]) least = s;
    }
    std::optional<std::size_t> pick;
    for (std::size_t g = 0; g < weights.size(); ++g) {
      if (shard[g] != busiest || !(load[least] + weights[g] < load[busiest])) continue;
      if (!pick || weights[g] > weights[*pick]) pick = g;
    }
    if (!pick) break;
    shard[*pick] = least;
    load[busiest] -= weights[*pick];
    load[least] += weights[*pick];
    out.moved += weights[*pick];
    ++out.moves;
  }
  out.ratio = ratio(load);
  out.shard = std::move(shard);
  return out;
}

LessonRebalance run_lesson_rebalance() {
  using M = LessonModel;
  using R = RebalanceModel;
  auto before = zipf_shares(M::kSellers, M::kExponent);
  auto after = zipf_shares(M::kSellers, M::kExponent, R::kGrowth);
  auto placed = greedy_assign(std::span<const double>(before), R::kShards);
  LessonRebalance out;
  std::vector<double> load(R::kShards, 0.0);
  for (std::size_t s = 0; s < after.size(); ++s) load[placed[s]] += after[s];
  out.untouched = ratio(load);
  out.whole = lesson_rebalance(after, placed, R::kShards, R::kTarget);

  // gBol: the grown seller's day groups first, then the other sellers, in their shards.
  std::vector<double> weights(M::kReportDays, after[0] / M::kReportDays);
  std::vector<std::size_t> shard(M::kReportDays, placed[0]);
  weights.insert(weights.end(), after.begin() + 1, after.end());
  shard.insert(shard.end(), placed.begin() + 1, placed.end());
  out.days = lesson_rebalance(weights, shard, R::kShards, R::kTarget);
  std::set<std::size_t> day_shards(out.days.shard.begin(), out.days.shard.begin() + M::kReportDays);
  out.day_shards = day_shards.size();
  out.rows_after = weights.size();
  return out;
}

std::vector<balance::Unit> seller_units(std::span<const double> shares,
                                        std::span<const std::size_t> placement, bool days) {
  using M = LessonModel;
  const double accesses = double{M::kActiveDays} * M::kDaily;
  const double stored = double{M::kRetentionDays} * M::kDaily;
  std::vector<balance::Unit> units;
  units.reserve(shares.size());
  for (std::size_t s = 0; s < shares.size(); ++s) {
    balance::Unit seller{std::to_string(s),
                         placement[s],
                         shares[s] * accesses,
                         static_cast<std::uint64_t>(std::llround(shares[s] * stored)),
                         0,
                         {}};
    if (days) {
      for (std::uint32_t d = 0; d < M::kReportDays; ++d) {
        // Whole keys per day, the remainder on the last, so the days add up to the seller.
        std::uint64_t keys = seller.keys / M::kReportDays;
        if (d + 1 == M::kReportDays) keys = seller.keys - keys * (M::kReportDays - 1);
        seller.children.push_back(
            {fmt::format("{}/{}", s, d), 0, seller.load / M::kReportDays, keys, 0, {}});
      }
    }
    units.push_back(std::move(seller));
  }
  return units;
}

}  // namespace santral::strategy_report

#include "tools/strategy_report/rebalance_report.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "config/balance/proposer.h"
#include "placement/whatif/group_balance.h"
#include "tools/strategy_report/lesson_model.h"
#include "tools/strategy_report/lesson_rebalance.h"
#include "tools/strategy_report/table.h"

namespace santral::strategy_report {

using namespace whatif;  // the what-if replay (placement/whatif/) this tool reports on
namespace {

using M = LessonModel;
using R = RebalanceModel;

std::string percent(double share) {
  return fmt::format("{:.2f}%", share * 100);
}

std::string seller_name(const std::string& unit) {
  return "seller " + unit;
}

// The fan-out of the grown seller's period report: every shard holding one of its pieces.
std::size_t report_shards(const balance::Proposal& proposal) {
  for (const auto& split : proposal.splits)
    if (split.unit == "0") return split.shards_after.size();
  return 1;
}

std::vector<std::string> santral_row(std::string label, const balance::Proposal& proposal,
                                     const std::array<const char*, 5>& lesson) {
  return {std::move(label),
          fmt::format("{:.3f}", proposal.ratio_after),
          lesson[0],
          percent(proposal.moved_fraction()),
          lesson[1],
          std::to_string(proposal.moves.size()),
          lesson[2],
          std::to_string(proposal.splits.size()),
          std::to_string(report_shards(proposal)),
          lesson[3],
          with_commas(proposal.units_after),
          lesson[4]};
}

// A directory of sellers with `shares`, placed by the lesson's first assignment over `placed_by`.
std::vector<balance::Unit> directory(const std::vector<double>& shares,
                                     const std::vector<double>& placed_by, bool days) {
  auto placed = greedy_assign(std::span<const double>(placed_by), R::kShards);
  return seller_units(shares, placed, days);
}

// In the lesson's model a seller's keys are its load, so a proposal that brings the busiest shard
// down to `ratio` x mean moves at least the difference: no proposal can do it with fewer keys.
double fewest_keys(const balance::Proposal& proposal, double ratio) {
  const auto& loads = proposal.loads_before;
  double total = std::accumulate(loads.begin(), loads.end(), 0.0);
  double busiest = *std::max_element(loads.begin(), loads.end());
  return std::max(0.0, busiest - ratio * total / static_cast<double>(loads.size())) / total;
}

void print_floors(bool markdown, std::ostream& out) {
  Table table({"Zipf exponent", "largest seller", "floor, sellers whole", "lesson",
               "balancer, sellers whole", "floor, seller-days", "balancer, seller-days",
               "keys moved", "moves"});
  constexpr std::array<std::pair<double, const char*>, 3> kLesson{
      {{0.9, "1.00"}, {1.1, "1.29"}, {1.3, "2.19"}}};
  for (auto [exponent, lesson] : kLesson) {
    auto shares = zipf_shares(M::kSellers, exponent);
    auto whole = directory(shares, shares, false);
    auto days = directory(shares, shares, true);
    auto by_seller = balance::propose_balance(whole, {R::kShards, R::kTarget});
    auto by_day = balance::propose_balance(days, {R::kShards, R::kTarget});
    table.add({fmt::format("{:.1f}", exponent), percent(shares[0]),
               fmt::format("{:.2f}", by_seller.ratio_floor), lesson,
               fmt::format("{:.2f}", by_seller.ratio_after),
               fmt::format("{:.2f}", by_day.ratio_floor), fmt::format("{:.2f}", by_day.ratio_after),
               percent(by_day.moved_fraction()), std::to_string(by_day.moves.size())});
  }
  out << "Floor: the largest seller kept whole bounds the ratio (the directory as first placed, "
         "no growth; target "
      << fmt::format("{:.2f}", R::kTarget) << ").\n"
      << (markdown ? table.markdown() : table.text());
}

}  // namespace

void print_rebalance_report(bool markdown, std::ostream& out) {
  auto before = zipf_shares(M::kSellers, M::kExponent);
  auto after = zipf_shares(M::kSellers, M::kExponent, R::kGrowth);
  auto lesson = run_lesson_rebalance();
  auto whole_units = directory(after, before, false);
  auto day_units = directory(after, before, true);
  const balance::Goal goal{R::kShards, R::kTarget};
  auto whole = balance::propose_balance(whole_units, goal);
  auto days = balance::propose_balance(day_units, goal);

  out << fmt::format(
      "Rebalancing (the lesson's bolum/dengele.mjs): {} shards, target ratio {:.2f}; the "
      "directory placed for D1, then the largest seller grows from {} to {} of the accesses "
      "(lesson 7.41% -> 19.37%). A seller's keys are its share of the volume, as in the lesson. "
      "\"lesson's rebalancer\" is its enAzTasima recomputed; \"balancer\" is Santral's "
      "(config/balance/proposer.h) on the same units.\n",
      R::kShards, R::kTarget, percent(before[0]), percent(after[0]));
  Table table({"directory plan", "ratio", "lesson", "keys moved", "lesson", "moves", "lesson",
               "splits", "hot seller's report shards", "lesson", "directory rows", "lesson"});
  table.add({"left alone", fmt::format("{:.3f}", lesson.untouched), "1.904", percent(0), "-", "0",
             "-", "0", "1", "1", with_commas(M::kSellers), "4,000"});
  table.add({"lesson's rebalancer, sellers whole", fmt::format("{:.3f}", lesson.whole.ratio),
             "1.549", percent(lesson.whole.moved), "4.43%", std::to_string(lesson.whole.moves),
             "468", "0", "1", "1", with_commas(M::kSellers), "4,000"});
  table.add(santral_row("balancer, sellers whole", whole, {"1.549", "4.43%", "468", "1", "4,000"}));
  table.add({"lesson's rebalancer, hot seller as seller-days",
             fmt::format("{:.3f}", lesson.days.ratio), "1.181", percent(lesson.days.moved), "9.04%",
             std::to_string(lesson.days.moves), "14", "1", std::to_string(lesson.day_shards), "8",
             with_commas(lesson.rows_after), "4,029"});
  table.add(santral_row("balancer, every seller splittable into seller-days", days,
                        {"1.181", "9.04%", "14", "8", "4,029"}));
  out << (markdown ? table.markdown() : table.text());

  const double total_load =
      std::accumulate(whole.loads_before.begin(), whole.loads_before.end(), 0.0);
  for (const auto& jumbo : whole.jumbos)
    out << fmt::format(
        "balancer, sellers whole: jumbo {} on shard{}: {} of the load, {:.3f} x the mean alone, "
        "over the target; reported, not split (no seller-day groups were offered); the best it "
        "can do is leave it alone on its shard.\n",
        seller_name(jumbo.unit), jumbo.shard, percent(jumbo.load / total_load), jumbo.ratio);
  auto day_moves = static_cast<std::size_t>(
      std::count_if(days.moves.begin(), days.moves.end(),
                    [](const balance::Move& m) { return m.unit.find('/') != std::string::npos; }));
  for (const auto& split : days.splits)
    out << fmt::format(
        "balancer, seller-days: split {} on shard{} ({}) into {} seller-day groups, now on {} "
        "shards; {} of them move, and {} whole sellers; no other seller was split.\n",
        seller_name(split.unit), split.shard, split.reason, split.pieces, split.shards_after.size(),
        day_moves, days.moves.size() - day_moves);
  out << fmt::format(
      "Fewest keys any plan can move here (a seller's keys are its load): {} to reach {:.3f}, {} "
      "to reach {:.2f}, {} to reach the lesson's {:.3f}. The lesson's rebalancer overshoots the "
      "target with its last seller-day group; the balancer stops at the target, and puts the "
      "hot seller's moved days on as few shards as have room for them.\n\n",
      percent(fewest_keys(whole, whole.ratio_after)), whole.ratio_after,
      percent(fewest_keys(days, R::kTarget)), R::kTarget,
      percent(fewest_keys(days, lesson.days.ratio)), lesson.days.ratio);
  print_floors(markdown, out);
}

}  // namespace santral::strategy_report

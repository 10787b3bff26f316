#include "config/balance/proposer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "config/balance/pieces.h"

namespace santral::balance {
namespace {

// Pieces whose load per key is within 1% of the best shed load as cheaply as the best.
constexpr double kDensitySlack = 0.01;
// Relative to the total load: sums of doubles that differ by less are equal.
constexpr double kLoadSlack = 1e-9;
// Children's loads must add up to their unit's within this share of it.
constexpr double kChildrenSlack = 1e-3;

std::string unit_error(const Unit& unit, std::size_t shards, bool child) {
  if (!std::isfinite(unit.load) || unit.load < 0)
    return fmt::format("unit '{}' has load {}: expected a finite load of at least 0", unit.name,
                       unit.load);
  if (!child && unit.shard >= shards)
    return fmt::format("unit '{}' is on shard {}, but there are {} shards", unit.name, unit.shard,
                       shards);
  if (unit.children.empty()) return {};
  double sum = 0;
  for (const auto& c : unit.children) {
    if (auto error = unit_error(c, shards, true); !error.empty()) return error;
    sum += c.load;
  }
  if (std::abs(sum - unit.load) > kChildrenSlack * unit.load)
    return fmt::format("unit '{}' has load {}, but its children's add up to {}", unit.name,
                       unit.load, sum);
  return {};
}

std::string input_error(std::span<const Unit> units, const Goal& goal) {
  if (goal.shards == 0) return "a plan needs at least one shard";
  if (!(goal.target_ratio >= 1))
    return fmt::format(
        "target ratio {} is below 1: the busiest shard always carries at least the mean",
        goal.target_ratio);
  for (const auto& unit : units)
    if (auto error = unit_error(unit, goal.shards, false); !error.empty()) return error;
  return {};
}

double ratio(const std::vector<double>& loads) {
  double total = std::accumulate(loads.begin(), loads.end(), 0.0);
  if (total <= 0) return 0;
  return *std::max_element(loads.begin(), loads.end()) /
         (total / static_cast<double>(loads.size()));
}

// The pieces on their shards while moves are chosen.
class Placement {
 public:
  Placement(std::vector<Piece> pieces, std::vector<double> loads, double ceiling, double slack,
            std::vector<Split>& splits)
      : pieces_(std::move(pieces)),
        loads_(std::move(loads)),
        ceiling_(ceiling),
        slack_(slack),
        splits_(splits) {}

  // Moves pieces off shards above the ceiling until none is, or nothing more can move.
  void shed(std::vector<Move>& moves) {
    for (;;) {
      auto from =
          static_cast<std::size_t>(std::max_element(loads_.begin(), loads_.end()) - loads_.begin());
      double excess = loads_[from] - ceiling_;
      if (excess <= slack_) return;
      if (auto move = cheapest_move(from, excess)) {
        Piece& piece = pieces_[move->piece];
        const Unit& unit = *piece.unit;
        moves.push_back({unit.name, from, move->to, unit.load, unit.keys, unit.bytes});
        loads_[from] -= unit.load;
        loads_[move->to] += unit.load;
        piece.shard = move->to;
        continue;
      }
      auto splittable = heaviest_splittable(from);
      if (!splittable) return;
      split_piece(pieces_, *splittable, "no shard had room for it whole", splits_);
    }
  }

  const std::vector<Piece>& pieces() const { return pieces_; }
  const std::vector<double>& loads() const { return loads_; }

 private:
  struct Choice {
    std::size_t piece;
    std::size_t to;
  };

  // Per split, the shards holding one of its pieces.
  std::vector<std::vector<bool>> split_shards() const {
    std::vector<std::vector<bool>> on(splits_.size(), std::vector<bool>(loads_.size()));
    for (const auto& p : pieces_)
      if (!p.splits.empty()) on[p.splits.back()][p.shard] = true;
    return on;
  }

  std::optional<std::size_t> destination(const Piece& piece, std::size_t from,
                                         const std::vector<std::vector<bool>>& split_on) const {
    std::optional<std::size_t> best;
    bool best_sibling = false;
    for (std::size_t to = 0; to < loads_.size(); ++to) {
      if (to == from || loads_[to] + piece.unit->load > ceiling_ + slack_) continue;
      bool sibling = !piece.splits.empty() && split_on[piece.splits.back()][to];
      if (!best || (sibling && !best_sibling) ||
          (sibling == best_sibling && loads_[to] < loads_[*best])) {
        best = to;
        best_sibling = sibling;
      }
    }
    return best;
  }

  static double density(const Unit& u) {
    return u.keys == 0 ? std::numeric_limits<double>::infinity()
                       : u.load / static_cast<double>(u.keys);
  }

  std::optional<Choice> cheapest_move(std::size_t from, double excess) const {
    auto split_on = split_shards();
    std::vector<Choice> fits;
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      const Piece& p = pieces_[i];
      if (p.shard != from || p.unit->load <= 0 || p.unit->pinned) continue;
      if (auto to = destination(p, from, split_on)) fits.push_back({i, *to});
    }
    auto unit = [&](const Choice& c) -> const Unit& { return *pieces_[c.piece].unit; };
    std::optional<Choice> covering;  // sheds the whole excess alone, for the fewest keys
    double best_density = 0;
    for (const auto& c : fits) {
      const Unit& u = unit(c);
      if (u.load >= excess - slack_) {
        if (!covering ||
            std::tie(u.keys, u.bytes, u.load) <
                std::tie(unit(*covering).keys, unit(*covering).bytes, unit(*covering).load))
          covering = c;
      } else {
        best_density = std::max(best_density, density(u));
      }
    }
    std::optional<Choice> densest;  // the heaviest of the pieces that shed load most cheaply
    for (const auto& c : fits) {
      const Unit& u = unit(c);
      if (u.load >= excess - slack_ || density(u) < best_density * (1 - kDensitySlack)) continue;
      if (!densest || u.load > unit(*densest).load) densest = c;
    }
    if (!densest) return covering;
    if (covering &&
        static_cast<double>(unit(*covering).keys) <= excess / best_density * (1 + kDensitySlack))
      return covering;
    return densest;
  }

  std::optional<std::size_t> heaviest_splittable(std::size_t from) const {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      const Piece& p = pieces_[i];
      if (p.shard != from || p.unit->children.empty()) continue;
      if (!best || p.unit->load > pieces_[*best].unit->load) best = i;
    }
    return best;
  }

  std::vector<Piece> pieces_;
  std::vector<double> loads_;
  double ceiling_;
  double slack_;
  std::vector<Split>& splits_;
};

}  // namespace

Proposal propose_balance(std::span<const Unit> units, const Goal& goal) {
  Proposal proposal;
  proposal.error = input_error(units, goal);
  if (!proposal.error.empty()) return proposal;
  proposal.loads_before.assign(goal.shards, 0);
  for (const auto& unit : units) {
    proposal.loads_before[unit.shard] += unit.load;
    proposal.keys_total += unit.keys;
    proposal.bytes_total += unit.bytes;
  }
  proposal.units_before = units.size();
  proposal.ratio_before = ratio(proposal.loads_before);
  const double total =
      std::accumulate(proposal.loads_before.begin(), proposal.loads_before.end(), 0.0);
  const double mean = total / static_cast<double>(goal.shards);
  const double slack = kLoadSlack * total;
  const double cap = goal.target_ratio * mean;

  double ceiling = cap;
  for (const auto& unit : units) {
    find_jumbos(unit, unit.shard, cap + slack, mean, proposal.jumbos);
    if (mean > 0)
      proposal.ratio_floor = std::max(proposal.ratio_floor, indivisible_load(unit) / mean);
  }
  for (const auto& jumbo : proposal.jumbos) ceiling = std::max(ceiling, jumbo.load);

  Placement placement(cut_to_ceiling(units, ceiling + slack, proposal.splits),
                      proposal.loads_before, ceiling, slack, proposal.splits);
  placement.shed(proposal.moves);

  for (const auto& move : proposal.moves) {
    proposal.keys_moved += move.keys;
    proposal.bytes_moved += move.bytes;
  }
  for (const auto& piece : placement.pieces())
    for (auto s : piece.splits) proposal.splits[s].shards_after.push_back(piece.shard);
  for (auto& split : proposal.splits) {
    std::sort(split.shards_after.begin(), split.shards_after.end());
    split.shards_after.erase(std::unique(split.shards_after.begin(), split.shards_after.end()),
                             split.shards_after.end());
  }
  proposal.loads_after = placement.loads();
  proposal.ratio_after = ratio(proposal.loads_after);
  proposal.target_met = proposal.ratio_after <= goal.target_ratio * (1 + kLoadSlack);
  proposal.units_after = placement.pieces().size();
  return proposal;
}

}  // namespace santral::balance

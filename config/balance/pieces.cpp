#include "config/balance/pieces.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace santral::balance {

double indivisible_load(const Unit& unit) {
  if (unit.children.empty()) return unit.load;
  double heaviest = 0;
  for (const auto& child : unit.children) heaviest = std::max(heaviest, indivisible_load(child));
  return heaviest;
}

void find_jumbos(const Unit& unit, std::size_t shard, double cap, double mean,
                 std::vector<Jumbo>& out) {
  if (unit.load <= cap) return;
  if (unit.children.empty()) {
    out.push_back({unit.name, shard, unit.load, unit.keys, mean > 0 ? unit.load / mean : 0});
    return;
  }
  for (const auto& child : unit.children) find_jumbos(child, shard, cap, mean, out);
}

void split_piece(std::vector<Piece>& pieces, std::size_t i, std::string reason,
                 std::vector<Split>& splits) {
  Piece whole = pieces[i];
  const Unit& unit = *whole.unit;
  splits.push_back(
      {unit.name, whole.shard, unit.load, unit.children.size(), std::move(reason), {}});
  whole.splits.push_back(splits.size() - 1);
  std::vector<Piece> children;
  for (const auto& child : unit.children) children.push_back({&child, whole.shard, whole.splits});
  pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(i));
  pieces.insert(pieces.begin() + static_cast<std::ptrdiff_t>(i),
                std::make_move_iterator(children.begin()), std::make_move_iterator(children.end()));
}

std::vector<Piece> cut_to_ceiling(std::span<const Unit> units, double ceiling,
                                  std::vector<Split>& splits) {
  std::vector<Piece> pieces;
  pieces.reserve(units.size());
  for (const auto& unit : units) pieces.push_back({&unit, unit.shard, {}});
  for (std::size_t i = 0; i < pieces.size();) {
    const Unit& unit = *pieces[i].unit;
    if (unit.load > ceiling && !unit.children.empty())
      split_piece(pieces, i, "heavier than a shard may carry: target ratio x mean", splits);
    else
      ++i;  // a split piece's first child now sits at i and is looked at next
  }
  return pieces;
}

}  // namespace santral::balance

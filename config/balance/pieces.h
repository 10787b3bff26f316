#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "config/balance/proposal.h"
#include "config/balance/unit.h"

namespace santral::balance {

// A unit as the proposer places it: one of the input units, or a child of a unit it split.
struct Piece {
  const Unit* unit = nullptr;
  std::size_t shard = 0;
  std::vector<std::size_t>
      splits;  // indexes in the proposal's splits it came from, outermost first
};

// The heaviest piece no split can cut `unit` below: its own load without children, else the
// heaviest of its children's.
double indivisible_load(const Unit& unit);

// The units (or children) heavier than `cap` that cannot be cut under it, as jumbos on `shard`.
void find_jumbos(const Unit& unit, std::size_t shard, double cap, double mean,
                 std::vector<Jumbo>& out);

// Replaces pieces[i] by its unit's children, in its place and on its shard, and records why.
void split_piece(std::vector<Piece>& pieces, std::size_t i, std::string reason,
                 std::vector<Split>& splits);

// One piece per unit; every piece heavier than `ceiling` that has children is split, and so on
// down while a child still is.
std::vector<Piece> cut_to_ceiling(std::span<const Unit> units, double ceiling,
                                  std::vector<Split>& splits);

}  // namespace santral::balance

#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace santral::balance {

// One unit (or piece of a split unit) going from one shard to another, in the order proposed.
struct Move {
  std::string unit;
  std::size_t from = 0;
  std::size_t to = 0;
  double load = 0;
  std::uint64_t keys = 0;
  std::uint64_t bytes = 0;
};

// A unit replaced by its children. Splitting moves no data: the pieces start on the unit's shard
// (a directory gains rows, a range table a boundary); some of them may then move.
struct Split {
  std::string unit;
  std::size_t shard = 0;
  double load = 0;
  std::size_t pieces = 0;
  std::string reason;
  std::vector<std::size_t> shards_after;  // where its pieces are once the proposal has run
};

// A unit heavier than a shard may carry (target ratio x mean) that has no children: it is
// reported, never split, and bounds the ratio any proposal can reach (the lesson's "jumbo" seller).
struct Jumbo {
  std::string unit;
  std::size_t shard = 0;
  double load = 0;
  std::uint64_t keys = 0;
  double ratio = 0;  // its load over the mean: the best ratio while it stays whole
};

// What the balancer proposes. Nothing is applied: an operator approves it like any planned move.
struct Proposal {
  std::string error;  // the input is invalid (and nothing else is set), or empty
  std::vector<Move> moves;
  std::vector<Split> splits;
  std::vector<Jumbo> jumbos;
  std::vector<double> loads_before;  // per shard
  std::vector<double> loads_after;
  double ratio_before = 0;  // busiest shard's load over the mean
  double ratio_after = 0;
  double ratio_floor =
      1;  // no proposal goes lower: the heaviest piece no split can cut, over the mean
  bool target_met = false;
  std::uint64_t keys_total = 0;
  std::uint64_t keys_moved = 0;
  std::uint64_t bytes_total = 0;
  std::uint64_t bytes_moved = 0;
  std::size_t units_before = 0;  // a directory's rows, a range table's ranges
  std::size_t units_after = 0;   // each split replaces one by its pieces

  double moved_fraction() const {
    return keys_total == 0 ? 0 : static_cast<double>(keys_moved) / static_cast<double>(keys_total);
  }
};

}  // namespace santral::balance

#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <vector>

namespace santral::strategy_report {

// What --lesson prints: the strategy tables (a replay of the trace), the rebalancing
// experiment (the balancer on the lesson's directory), or both.
enum class LessonSection { All, Strategies, Rebalancing };

struct LessonOptions {
  LessonSection section = LessonSection::All;
  std::vector<std::size_t> shard_counts{8, 16};
  std::uint64_t seed = 1;
  bool markdown = false;
};

// Replays the lesson's trace through a ShardMap per strategy and shard count and prints, per
// strategy, our figures beside the lesson's published ones; then the rebalancing experiment.
void print_lesson_report(const LessonOptions& options, std::ostream& out);

}  // namespace santral::strategy_report

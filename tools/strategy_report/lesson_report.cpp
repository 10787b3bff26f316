#include "tools/strategy_report/lesson_report.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "placement/shard_map.h"
#include "placement/whatif/grow.h"
#include "placement/whatif/metrics.h"
#include "placement/whatif/replay.h"
#include "tools/strategy_report/lesson_model.h"
#include "tools/strategy_report/rebalance_report.h"
#include "tools/strategy_report/table.h"

namespace santral::strategy_report {

using namespace whatif;  // the what-if replay (placement/whatif/) this tool reports on
namespace {

using config::Strategy;

// The lesson's printed table (P = 8 and P = 16): hot-spot ratio, shards a period report
// touches, keys it scans, store touches per access. Hashed and slots both stand for its karma.
struct Published {
  const char* hot_spot;
  const char* report_shards;
  const char* keys_scanned;
  const char* touches;
};

std::optional<Published> published(Strategy strategy, std::size_t shards) {
  if (shards != 8 && shards != 16) return std::nullopt;
  bool eight = shards == 8;
  switch (strategy) {
    case Strategy::Range:
      return Published{eight ? "8.00" : "16.00", "1", "12,000,000", "1"};
    case Strategy::Hashed:
    case Strategy::Slots:
      return Published{"1.00", eight ? "8" : "16", "12,000,000", "1"};
    case Strategy::Directory:
      return Published{eight ? "1.00" : "1.19", "1", eight ? "1,500,137" : "889,566", "2"};
    case Strategy::Zone:
      break;
  }
  return std::nullopt;
}

std::string label(Strategy strategy) {
  switch (strategy) {
    case Strategy::Range:
      return "range (numeric, by number)";
    case Strategy::Hashed:
      return "hashed (ring, by number)";
    case Strategy::Slots:
      return "slots (CRC16, by number)";
    case Strategy::Directory:
      return "directory (by seller)";
    case Strategy::Zone:
      break;
  }
  return std::string(config::strategy_name(strategy));
}

// The seller whose period report costs most: every shard holding one of its keys is visited and
// reads all of its keys of the period (the lesson's dizin tablosu: the busiest shard).
std::pair<std::size_t, ScanCost> costliest_report(const Replay& replay, const LessonTrace& lesson) {
  std::vector<std::uint64_t> masks(LessonModel::kSellers);
  for (std::size_t i = 0; i < replay.shard.size(); ++i)
    masks[lesson.seller[i]] |= std::uint64_t{1} << replay.shard[i];
  auto keys = shard_keys(replay);
  std::pair<std::size_t, ScanCost> worst{0, {}};
  for (std::size_t seller = 0; seller < masks.size(); ++seller) {
    std::vector<std::size_t> touched;
    for (std::size_t s = 0; s < replay.shard_count; ++s)
      if ((masks[seller] >> s) & 1) touched.push_back(s);
    auto cost = scan_cost(touched, keys);
    if (cost.keys > worst.second.keys ||
        (cost.keys == worst.second.keys && cost.shards > worst.second.shards))
      worst = {seller, cost};
  }
  return worst;
}

std::vector<std::string> strategy_row(Strategy strategy, std::size_t shards,
                                      const LessonTrace& lesson) {
  auto config = lesson_config(strategy, shards, lesson.seller_accesses);
  placement::ShardMap map(config);
  auto placed = replay(map, lesson.trace);
  double hot_spot = hot_spot_ratio(shard_loads(placed, lesson.trace));
  auto [seller, report] = costliest_report(placed, lesson);
  auto fan_out = map.shards_for_pattern(fmt::format("ship:{}:*", seller)).size();

  auto grown_config = with_added_shard(config, map, lesson.trace, placed);
  placement::ShardMap grown_map(grown_config);
  auto grown = replay(grown_map, lesson.trace);
  double moved = moved_share(placed, grown);
  double grown_hot_spot = hot_spot_ratio(shard_loads(grown, lesson.trace));

  auto lesson_figures = published(strategy, shards);
  auto theirs = [&](const char* Published::*field) {
    return lesson_figures ? std::string((*lesson_figures).*field) : std::string("-");
  };
  return {label(strategy),
          fmt::format("{:.2f}", hot_spot),
          theirs(&Published::hot_spot),
          std::to_string(report.shards),
          theirs(&Published::report_shards),
          with_commas(report.keys),
          theirs(&Published::keys_scanned),
          std::to_string(store_touches(strategy)),
          theirs(&Published::touches),
          std::to_string(fan_out),
          fmt::format("{:.1f}%", moved * 100),
          fmt::format("{:.2f}", grown_hot_spot)};
}

}  // namespace

void print_lesson_report(const LessonOptions& options, std::ostream& out) {
  if (options.section == LessonSection::Rebalancing) {
    print_rebalance_report(options.markdown, out);
    return;
  }
  using M = LessonModel;
  auto shares = zipf_shares(M::kSellers, M::kExponent);
  double first_eight = 0;
  for (std::size_t i = 0; i < 8; ++i) first_eight += shares[i];
  auto lesson = make_lesson_trace(options.seed);
  auto accesses = lesson.trace.total_count();
  double traced_largest = static_cast<double>(lesson.seller_accesses[0]) /
                          static_cast<double>(std::max<std::uint64_t>(accesses, 1));

  out << fmt::format(
      "The seed lesson \"Bolumleme Stratejileri\" replayed through Santral's ShardMap "
      "(no backends).\n"
      "D1: {} sellers, Zipf {}: largest share {:.2f}% (lesson 7.41%; {:.2f}% in the trace), "
      "first eight {:.2f}% (lesson 21.92%), smallest {:.1f} shipments a day (lesson 17.0)\n"
      "Trace (seed {}): keys ship:{{seller}}:{{number}}, {} shipments = the last {} days x {}; "
      "{} accesses = each shipment of the last {} days (D3) once.\n"
      "Report: one seller's {}-day period report, the costliest seller's; it reads every key "
      "of the period on each shard it visits.\n\n",
      M::kSellers, M::kExponent, shares[0] * 100, traced_largest * 100, first_eight * 100,
      M::kDaily * shares.back(), options.seed, with_commas(lesson.trace.size()), M::kReportDays,
      with_commas(M::kDaily), with_commas(accesses), M::kActiveDays, M::kReportDays);

  constexpr std::array kStrategies{Strategy::Range, Strategy::Hashed, Strategy::Slots,
                                   Strategy::Directory};
  // Rows are independent replays of the same immutable trace: a few threads share them.
  const std::size_t jobs = options.shard_counts.size() * kStrategies.size();
  std::vector<std::vector<std::string>> rows(jobs);
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failures(jobs);
  auto work = [&] {
    for (std::size_t j; (j = next++) < jobs;) try {
        rows[j] = strategy_row(kStrategies[j % kStrategies.size()],
                               options.shard_counts[j / kStrategies.size()], lesson);
      } catch (...) {
        failures[j] = std::current_exception();
      }
  };
  std::vector<std::thread> threads;
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
  for (std::size_t t = 0; t < std::min(workers, jobs); ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);

  for (std::size_t p = 0; p < options.shard_counts.size(); ++p) {
    Table table({fmt::format("{} shards", options.shard_counts[p]), "hot-spot", "lesson",
                 "report shards", "lesson", "keys scanned", "lesson", "store touches", "lesson",
                 "SCAN MATCH shards", "moved +1 shard", "hot-spot +1"});
    for (std::size_t s = 0; s < kStrategies.size(); ++s)
      table.add(rows[p * kStrategies.size() + s]);
    out << (options.markdown ? table.markdown() : table.text()) << "\n";
  }
  if (options.section == LessonSection::All) print_rebalance_report(options.markdown, out);
}

}  // namespace santral::strategy_report

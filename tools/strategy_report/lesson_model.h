#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <vector>

#include "config/config.h"
#include "placement/whatif/trace.h"

namespace santral::strategy_report {

using whatif::Trace;

// The seed lesson "Bolumleme Stratejileri" (bolum/strateji.mjs), its assumptions by their codes.
struct LessonModel {
  static constexpr std::uint32_t kDaily = 400'000;      // V3: shipments a day
  static constexpr std::uint32_t kRetentionDays = 730;  // V12: days kept
  static constexpr std::uint32_t kReportDays = 30;      // V11: a seller's period report
  static constexpr std::uint32_t kSellers = 4000;       // D1
  static constexpr double kExponent = 0.9;              // D1: seller i's share ~ i^-0.9
  static constexpr std::uint32_t kActiveDays = 5;       // D3: reads and writes hit these days
};

// Seller i's share of the volume (the lesson's paylar()): i^-exponent, normalised. The largest
// seller's weight is multiplied by `largest_growth` first (paylar's KAT: it grows).
std::vector<double> zipf_shares(std::uint32_t sellers, double exponent, double largest_growth = 1);

// The lesson's shipments as Santral keys, "ship:{seller}:{number}": the tracking number grows
// with time (day * kDaily + sequence, so number ranges are time ranges) and carries the seller
// as a prefix, as the lesson's directory needs. The trace holds the last kReportDays days (what
// a period report scans); each shipment's seller is drawn from the Zipf shares; the shipments of
// the last kActiveDays days are accessed once each (count 1), older ones are only stored.
struct LessonTrace {
  Trace trace;
  std::vector<std::uint16_t> seller;           // per trace key
  std::vector<std::uint64_t> seller_accesses;  // per seller
};
LessonTrace make_lesson_trace(std::uint64_t seed);

// The lesson's trace as a trace file (whatif::write_trace's format: "key count" a line), every
// `every`-th shipment of it only (1: all twelve million), for replaying it elsewhere (a live
// Santral: scripts/analyze-lesson). Its header comment lines name the seed, the thinning and the
// constants a replay needs ("# retention_numbers 292000000": the numbers range placement slices).
void write_lesson_trace(const LessonTrace& lesson, std::uint64_t seed, std::size_t every,
                        std::ostream& out);

// One namespace, "ship:{seller}:{number}", over `shards` shards by the lesson's rule:
//   Range      {number}, numeric: equal slices of the retention's numbers (the lesson's dilim)
//   Hashed     {number} on a ketama ring, 160 points per shard (the lesson's karma: a hash)
//   Slots      {number} by CRC16 slot, equal slot ranges (the same family)
//   Directory  {seller}: every seller listed, placed by greedy_assign over its accesses
config::Config lesson_config(config::Strategy strategy, std::size_t shards,
                             std::span<const std::uint64_t> seller_accesses);

}  // namespace santral::strategy_report

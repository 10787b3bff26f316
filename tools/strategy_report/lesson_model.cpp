#include "tools/strategy_report/lesson_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <ostream>
#include <random>
#include <string>

#include <fmt/format.h>

#include "config/hashkit/hash_functions.h"
#include "placement/whatif/group_balance.h"

namespace santral::strategy_report {

using namespace whatif;  // the what-if replay (placement/whatif/) this tool reports on

std::vector<double> zipf_shares(std::uint32_t sellers, double exponent, double largest_growth) {
  std::vector<double> shares;
  double sum = 0;
  for (std::uint32_t i = 1; i <= sellers; ++i) {
    shares.push_back(std::pow(static_cast<double>(i), -exponent) * (i == 1 ? largest_growth : 1));
    sum += shares.back();
  }
  for (auto& s : shares) s /= sum;
  return shares;
}

LessonTrace make_lesson_trace(std::uint64_t seed) {
  using M = LessonModel;
  auto shares = zipf_shares(M::kSellers, M::kExponent);
  std::mt19937_64 random(seed);
  std::discrete_distribution<std::uint32_t> pick_seller(shares.begin(), shares.end());
  LessonTrace out;
  const std::size_t keys = std::size_t{M::kReportDays} * M::kDaily;
  out.trace.reserve(keys, keys * 18);
  out.seller.reserve(keys);
  out.seller_accesses.assign(M::kSellers, 0);
  std::string key;
  for (std::uint32_t day = M::kRetentionDays - M::kReportDays; day < M::kRetentionDays; ++day) {
    const bool active = day >= M::kRetentionDays - M::kActiveDays;
    for (std::uint32_t sequence = 0; sequence < M::kDaily; ++sequence) {
      auto seller = pick_seller(random);
      std::uint64_t number = std::uint64_t{day} * M::kDaily + sequence;
      key.clear();
      fmt::format_to(std::back_inserter(key), "ship:{}:{}", seller, number);
      out.trace.add(key, active ? 1 : 0);
      out.seller.push_back(static_cast<std::uint16_t>(seller));
      if (active) ++out.seller_accesses[seller];
    }
  }
  return out;
}

void write_lesson_trace(const LessonTrace& lesson, std::uint64_t seed, std::size_t every,
                        std::ostream& out) {
  using M = LessonModel;
  every = std::max<std::size_t>(every, 1);
  out << fmt::format(
      "# the seed lesson's trace (santral-strategy-report --lesson --seed {}): one shipment in {} "
      "of its {}; count 1: accessed in the last {} days, 0: only stored\n"
      "# seed {}\n# every {}\n# retention_numbers {}\n# sellers {}\n# daily {}\n",
      seed, every, lesson.trace.size(), M::kActiveDays, seed, every,
      std::uint64_t{M::kRetentionDays} * M::kDaily, M::kSellers, M::kDaily);
  std::string line;
  for (std::size_t i = 0; i < lesson.trace.size(); i += every) {
    line.assign(lesson.trace.key(i));
    line += ' ';
    line += std::to_string(lesson.trace.count(i));
    line += '\n';
    out << line;
  }
}

config::Config lesson_config(config::Strategy strategy, std::size_t shards,
                             std::span<const std::uint64_t> seller_accesses) {
  using M = LessonModel;
  config::Config c;
  c.hash_name = "murmur";
  c.hash = hashkit::murmur;
  // No hash tags: with them, SCAN MATCH ship:42:* could match a key whose tag overrides the
  // seller, and Santral would have to ask every shard.
  c.hash_tag = "";
  for (std::size_t i = 0; i < shards; ++i) {
    config::ShardConfig s;
    s.name = fmt::format("shard{}", i);
    s.ring_name = s.name;
    s.address = {"127.0.0.1", static_cast<std::uint16_t>(7000 + i)};
    c.shards.push_back(s);
  }
  config::NamespaceConfig ns;
  ns.name = "shipments";
  ns.match = "ship:{seller}:{number}";
  ns.shard_key = strategy == config::Strategy::Directory ? "seller" : "number";
  ns.strategy = strategy;
  for (std::size_t i = 0; i < shards; ++i) ns.hashed.shards.push_back(i);
  switch (strategy) {
    case config::Strategy::Range: {
      ns.order = config::RangeOrder::Numeric;
      const std::uint64_t numbers = std::uint64_t{M::kRetentionDays} * M::kDaily;
      for (std::size_t i = 0; i < shards; ++i) {
        config::KeyRange r;
        if (i > 0) r.from = std::to_string(numbers * i / shards);
        if (i + 1 < shards) r.to = std::to_string(numbers * (i + 1) / shards);
        r.shard = i;
        ns.ranges.push_back(r);
      }
      break;
    }
    case config::Strategy::Slots:
      for (std::size_t i = 0; i < shards; ++i)
        ns.slots.push_back({static_cast<std::uint32_t>(config::kSlotCount * i / shards),
                            static_cast<std::uint32_t>(config::kSlotCount * (i + 1) / shards - 1),
                            i});
      break;
    case config::Strategy::Directory: {
      auto placed = greedy_assign(seller_accesses, shards);
      for (std::size_t seller = 0; seller < placed.size(); ++seller)
        ns.groups.emplace_back(std::to_string(seller), placed[seller]);
      ns.fallback = config::Strategy::Hashed;
      break;
    }
    case config::Strategy::Hashed:
    case config::Strategy::Zone:
      break;
  }
  c.namespaces.push_back(ns);
  return c;
}

}  // namespace santral::strategy_report

#include "router/analysis/recommendation.h"

#include <optional>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "config/namespace/table_yaml.h"

namespace santral::router {

namespace {

// Placements within this much of the most even one count as even as it.
constexpr double kEvenEnough = 1.1;
constexpr double kEvenSlack = 0.02;
// Fewer sampled requests than this make the figures soft.
constexpr std::uint64_t kFewSamples = 100;
// A value whose share of the accesses times the shards passes this is a jumbo.
constexpr double kJumbo = 1.5;

// Why the report's warnings speak against placing by `figures`' key under `strategy` ("" when
// they do not): ranges by a monotonic key, anything by a key of too few values.
std::string warned_against(const KeyFigures& figures, config::Strategy strategy) {
  if (figures.monotonic && strategy == config::Strategy::Range)
    return fmt::format(
        "{} is monotonic: under range placement every insert goes to the last "
        "range's shard",
        figures.name);
  if (figures.low_cardinality)
    return fmt::format("{} has low cardinality: a value's keys can never be split", figures.name);
  return {};
}

// Excludes every row the warnings speak against that the what-if left open, so that the advice
// never keeps or proposes a placement the report itself warns of.
void exclude_warned(AnalysisReport& report) {
  for (auto& w : report.whatifs)
    for (const auto& figures : report.keys)
      if (w.excluded.empty() && w.key == figures.name)
        w.excluded = warned_against(figures, w.table.strategy);
}

std::optional<std::size_t> choose(const std::vector<WhatIf>& whatifs) {
  std::optional<std::size_t> best;
  double least = 0;
  for (std::size_t i = 0; i < whatifs.size(); ++i)
    if (whatifs[i].excluded.empty() && (!best || whatifs[i].hot_spot < least)) {
      best = i;
      least = whatifs[i].hot_spot;
    }
  if (!best) return best;
  auto rank = [](const WhatIf& w) {
    return std::make_tuple(w.scan_shards, w.store_touches, !w.current, w.moved);
  };
  for (std::size_t i = 0; i < whatifs.size(); ++i) {
    const auto& w = whatifs[i];
    if (w.excluded.empty() && w.hot_spot <= least * kEvenEnough + kEvenSlack &&
        rank(w) < rank(whatifs[*best]))
      best = i;
  }
  return best;
}

}  // namespace

void add_warnings(AnalysisReport& report) {
  const auto shards = static_cast<double>(report.shards);
  for (const auto& figures : report.keys) {
    if (figures.monotonic)
      report.warnings.push_back(fmt::format(
          "{} is monotonic (r = {:.2f} over {} new keys): under range placement every insert "
          "goes to the shard of the last range (seed 002); hash it, or place it by a directory",
          figures.name, *figures.monotonicity, figures.new_keys));
    if (figures.low_cardinality)
      report.warnings.push_back(fmt::format(
          "{} has low cardinality: about {:.0f} distinct values for {} shards, so at most that "
          "many shards hold its keys and a value's keys can never be split",
          figures.name, figures.distinct, report.shards));
    if (!figures.top.empty() && figures.top.front().second * shards > kJumbo)
      report.warnings.push_back(fmt::format(
          "{} value '{}' takes {:.1f}% of the accesses: no placement by this key gets the busiest "
          "shard below {:.2f}x the mean (a jumbo group; SANTRAL SALT spreads a hot counter)",
          figures.name, figures.top.front().first, figures.top.front().second * 100,
          figures.top.front().second * shards));
  }
  if (report.sampled < kFewSamples)
    report.warnings.push_back(fmt::format(
        "only {} requests of the target were sampled: raise SECONDS or SAMPLE for firmer figures",
        report.sampled));
  for (const auto& missing : report.missing) report.warnings.push_back("not covered: " + missing);
}

void recommend(AnalysisReport& report, const config::Config& config, std::string_view target) {
  if (report.sampled == 0) {
    report.recommendation = fmt::format(
        "Nothing to recommend: no request of {} was sampled in the window (the what-if's moved "
        "shares come from the keys drawn from the shards); analyze while it has traffic, or "
        "raise SECONDS or SAMPLE.",
        target);
    return;
  }
  exclude_warned(report);
  report.recommended = choose(report.whatifs);
  if (!report.recommended) {
    std::string why;
    for (const auto& w : report.whatifs)
      if (!w.excluded.empty() && why.find(w.excluded) == std::string::npos)
        why += (why.empty() ? "" : "; ") + w.excluded;
    report.recommendation = fmt::format(
        "No placement by these keys balances {}: {}. Choose a shard key with more distinct "
        "values that do not rise with time, or salt the hottest values (SANTRAL SALT).",
        target, why);
    return;
  }
  const auto& w = report.whatifs[*report.recommended];
  if (w.current) {
    report.recommendation = fmt::format(
        "Keep the {} placement by {}: its hot-spot ratio is {:.2f} and no other placement of "
        "these keys is more than 10% more even; SCAN MATCH visits {} of {} shards.",
        w.strategy, w.key, w.hot_spot, w.scan_shards, report.shards);
    return;
  }
  const WhatIf* now = report.whatifs.front().current ? &report.whatifs.front() : nullptr;
  std::string against, because;
  if (now != nullptr) against = fmt::format(" against {:.2f} now", now->hot_spot);
  if (now != nullptr && !now->excluded.empty()) because = fmt::format(" ({})", now->excluded);
  report.recommendation = fmt::format(
      "Place {} by {} on {}: hot-spot ratio {:.2f}{}{}, SCAN MATCH {} visits {} of {} shards, "
      "and {:.1f}% of its keys move when a shard is added.",
      report.namespace_name.empty() ? target : report.namespace_name, w.strategy, w.key, w.hot_spot,
      against, because, report.scan_pattern.empty() ? "*" : report.scan_pattern, w.scan_shards,
      report.shards, w.moved * 100);
  if (!report.namespace_name.empty())
    report.config_lines = config::namespace_entry_yaml(w.table, config);
  else
    report.recommendation +=
        " These keys have no namespace of their own: give them one (a match: pattern that covers "
        "them) placed this way to apply it.";
}

}  // namespace santral::router

// ANALYZE's advice never contradicts its own report: a range namespace keyed by the whole key,
// analyzed by a glob under a rising key, is advised to hash, use slots or a directory (the whole
// key is a shard key for them, not "a regular expression"), and no recommended row is one the
// warnings speak against.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "config/config.h"
#include "placement/shard_map.h"
#include "router/analysis/recommendation.h"
#include "router/analysis/shard_key_analysis.h"
#include "tests/support/murmur_cluster.h"

using namespace santral;
using namespace santral::router;

namespace {

constexpr std::size_t kAdviceShards = 4;

// ships: "ship:{id}" with no shard_key (the whole key), in lexical ranges of the whole key.
config::Config ships_by_whole_key_ranges() {
  auto c = test::murmur_cluster(kAdviceShards);
  config::NamespaceConfig ns;
  ns.name = "ships";
  ns.match = "ship:{id}";
  ns.strategy = config::Strategy::Range;
  for (std::size_t i = 0; i < kAdviceShards; ++i) {
    config::KeyRange r;
    if (i > 0) r.from = "ship:" + std::to_string(i);
    if (i + 1 < kAdviceShards) r.to = "ship:" + std::to_string(i + 1);
    r.shard = i;
    ns.ranges.push_back(r);
    ns.hashed.shards.push_back(i);
  }
  c.namespaces.push_back(ns);
  return c;
}

SampledRequest advice_request(std::string key, bool write, std::int64_t at_us) {
  SampledRequest s;
  s.key = std::move(key);
  s.command = write ? "set" : "get";
  s.write = write;
  s.shards = 1;
  s.of = kAdviceShards;
  s.at_us = at_us;
  return s;
}

// New ships with ids rising with time (all past the last range's start), each read once.
AnalysisSamples rising_ships() {
  AnalysisSamples samples;
  for (int i = 0; i < 3000; ++i) {
    std::string key = "ship:" + std::to_string(3'000'000 + i);
    samples.requests.push_back(advice_request(key, true, i * 10));
    samples.requests.push_back(advice_request(key, false, i * 10 + 5));
  }
  return samples;
}

bool applicable_elsewhere(config::Strategy strategy) {
  return strategy == config::Strategy::Hashed || strategy == config::Strategy::Slots ||
         strategy == config::Strategy::Directory;
}

// Whether one of the report's warnings speaks against `row`: ranges by a key it calls
// monotonic, anything by a key it calls low cardinality.
bool warned_of(const AnalysisReport& report, const WhatIf& row) {
  bool range = row.table.strategy == config::Strategy::Range;
  for (const auto& warning : report.warnings)
    if ((range && warning.starts_with(row.key + " is monotonic")) ||
        warning.starts_with(row.key + " has low cardinality"))
      return true;
  return false;
}

}  // namespace

TEST_CASE("advice: a glob over a whole-key range namespace under a rising key is hashed") {
  auto config = ships_by_whole_key_ranges();
  placement::ShardMap map(config);
  auto samples = rising_ships();
  // With and without a regex candidate: the whole key's rows stay applicable either way.
  for (std::string candidate : {"", "ship:(\\d+)"}) {
    auto report = analyze(config, map, {"ship:*", candidate}, samples);
    INFO(report_text(report));
    CHECK(report.namespace_name == "ships");
    REQUIRE_FALSE(report.keys.empty());
    const auto& whole = report.keys.front();
    CHECK(whole.monotonic);
    for (const auto& w : report.whatifs) {
      if (w.key != whole.name || w.current || !applicable_elsewhere(w.table.strategy)) continue;
      CHECK(w.excluded.find("regular expression") == std::string::npos);
      CHECK(w.excluded.empty());
    }
    REQUIRE(report.recommended);
    const auto& chosen = report.whatifs[*report.recommended];
    CHECK_FALSE(chosen.current);
    CHECK(chosen.key == whole.name);
    CHECK(applicable_elsewhere(chosen.table.strategy));
    CHECK(report.recommendation.find("Keep") == std::string::npos);
    CHECK(report.config_lines.find("name: ships") != std::string::npos);
    CHECK(report.config_lines.find("strategy: range") == std::string::npos);
  }
}

TEST_CASE("advice: the recommendation is never a placement the report warned against") {
  auto config = ships_by_whole_key_ranges();
  placement::ShardMap map(config);
  auto samples = rising_ships();
  for (std::string target : {"ship:*", "ships"}) {
    auto report = analyze(config, map, {target, ""}, samples);
    INFO(report_text(report));
    REQUIRE(report.recommended);
    CHECK_FALSE(warned_of(report, report.whatifs[*report.recommended]));
  }

  // Rows no what-if judged: the current range by a monotonic key measures as even as hashing,
  // and only the warnings speak against it.
  AnalysisReport report;
  report.target = "ships";
  report.namespace_name = "ships";
  report.shards = kAdviceShards;
  report.sampled = 6000;
  KeyFigures whole;
  whole.name = "the key";
  whole.monotonicity = 1.0;
  whole.new_keys = 3000;
  whole.monotonic = true;
  whole.distinct = 3000;
  report.keys.push_back(whole);
  WhatIf current;
  current.current = true;
  current.strategy = "current (range)";
  current.key = whole.name;
  current.hot_spot = 1.0;
  current.scan_shards = kAdviceShards;
  current.table = config.namespaces[0];
  WhatIf hashed = current;
  hashed.current = false;
  hashed.strategy = "hashed";
  hashed.hot_spot = 1.05;
  hashed.table.strategy = config::Strategy::Hashed;
  hashed.table.ranges.clear();
  report.whatifs = {current, hashed};
  add_warnings(report);
  recommend(report, config, "ships");
  INFO(report.recommendation);
  REQUIRE(report.recommended);
  const auto& chosen = report.whatifs[*report.recommended];
  CHECK_FALSE(warned_of(report, chosen));
  CHECK(chosen.table.strategy == config::Strategy::Hashed);
  CHECK(report.recommendation.find("Keep") == std::string::npos);
  CHECK_FALSE(report.whatifs.front().excluded.empty());
}

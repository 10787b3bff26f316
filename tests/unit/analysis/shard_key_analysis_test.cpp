// SANTRAL ANALYZE's arithmetic on samples made here: a rising key under range placement, a key of
// three values over eight shards, the what-if figures against the strategy report's replay, and
// the pieces (distinct values, correlation, a regex candidate, the sampler's spacing).
#include <catch2/catch.hpp>

#include <cmath>
#include <span>
#include <string>

#include "config/config.h"
#include "config/namespace/table_yaml.h"
#include "placement/shard_map.h"
#include "placement/whatif/metrics.h"
#include "placement/whatif/replay.h"
#include "placement/whatif/trace.h"
#include "router/analysis/key_figures.h"
#include "router/analysis/raw_samples.h"
#include "router/analysis/shard_key_analysis.h"
#include "router/plan/request_sampler.h"
#include "tests/support/murmur_cluster.h"

using namespace santral;
using namespace santral::router;

namespace {

// events: "event:{tenant}:{id}" by {id}, numeric ranges of a million each.
config::Config events_by_range(std::size_t shards) {
  auto c = test::murmur_cluster(shards);
  config::NamespaceConfig ns;
  ns.name = "events";
  ns.match = "event:{tenant}:{id}";
  ns.shard_key = "id";
  ns.strategy = config::Strategy::Range;
  ns.order = config::RangeOrder::Numeric;
  for (std::size_t i = 0; i < shards; ++i) {
    config::KeyRange r;
    if (i > 0) r.from = std::to_string(i * 1'000'000);
    if (i + 1 < shards) r.to = std::to_string((i + 1) * 1'000'000);
    r.shard = i;
    ns.ranges.push_back(r);
    ns.hashed.shards.push_back(i);
  }
  c.namespaces.push_back(ns);
  return c;
}

SampledRequest request(std::string key, bool write, std::int64_t at_us, std::uint16_t shards = 1) {
  SampledRequest s;
  s.key = std::move(key);
  s.command = write ? "set" : "get";
  s.write = write;
  s.shards = shards;
  s.of = 8;
  s.at_us = at_us;
  return s;
}

const WhatIf* row(const AnalysisReport& report, std::string_view strategy, std::string_view key) {
  for (const auto& w : report.whatifs)
    if (w.strategy == strategy && w.key == key) return &w;
  return nullptr;
}

}  // namespace

TEST_CASE("analyze: a rising numeric key under range placement is monotonic; hashing is advised") {
  auto config = events_by_range(4);
  placement::ShardMap map(config);
  AnalysisSamples samples;
  samples.seconds = 1;
  samples.rate = 1;
  // New events with ids rising from 3,500,000 (all in the last range), and reads of recent ones.
  for (int i = 0; i < 4000; ++i) {
    std::string key = "event:t" + std::to_string(i % 50) + ":" + std::to_string(3'500'000 + i);
    samples.requests.push_back(request(key, true, i * 10));
    samples.requests.push_back(request(key, false, i * 10 + 5));
  }
  auto report = analyze(config, map, {"events", ""}, samples);
  REQUIRE(report.keys.size() == 1);
  const auto& id = report.keys[0];
  CHECK(id.name == "{id}");
  CHECK(id.numeric);
  REQUIRE(id.monotonicity);
  CHECK(*id.monotonicity > 0.99);
  CHECK(id.monotonic);
  CHECK(id.new_keys == 4000);
  CHECK_FALSE(id.low_cardinality);
  CHECK(report.sampled == 8000);

  const auto* current = row(report, "current (range)", "{id}");
  REQUIRE(current != nullptr);
  CHECK(current->hot_spot == Approx(4.0));  // every access on the last range's shard
  CHECK(current->excluded.find("rises with time") != std::string::npos);
  const auto* range = row(report, "range", "{id}");
  REQUIRE(range != nullptr);
  CHECK_FALSE(range->excluded.empty());
  const auto* hashed = row(report, "hashed", "{id}");
  REQUIRE(hashed != nullptr);
  CHECK(hashed->hot_spot < 1.2);
  CHECK(hashed->excluded.empty());

  REQUIRE(report.recommended);
  const auto& chosen = report.whatifs[*report.recommended];
  CHECK_FALSE(chosen.current);
  CHECK((chosen.table.strategy == config::Strategy::Hashed ||
         chosen.table.strategy == config::Strategy::Slots ||
         chosen.table.strategy == config::Strategy::Directory));
  CHECK(report.recommendation.find("Place events by") != std::string::npos);
  CHECK(report.config_lines.find("name: events") != std::string::npos);
  CHECK(report.config_lines.find("strategy: " + std::string(config::strategy_name(
                                                    chosen.table.strategy))) != std::string::npos);
  bool warned = false;
  for (const auto& w : report.warnings) warned = warned || w.find("monotonic") != std::string::npos;
  CHECK(warned);

  // The recommended namespace, written into a config file, loads and places as the what-if did.
  std::string text =
      "listen: 127.0.0.1:7999\nhash: murmur\nhash_tag: \"\"\nshards:\n"
      "  - {name: s0, address: 127.0.0.1:7000}\n  - {name: s1, address: 127.0.0.1:7001}\n"
      "  - {name: s2, address: 127.0.0.1:7002}\n  - {name: s3, address: 127.0.0.1:7003}\n"
      "namespaces:\n  - name: events\n    match: \"event:{tenant}:{id}\"\n    shard_key: id\n"
      "    strategy: range\n    order: numeric\n    ranges:\n      - {shard: s0, to: 1000000}\n"
      "      - {shard: s1, from: 1000000}\n";
  auto proposed =
      config::with_tables(text, config, std::span(&chosen.table, 1), config::TableScope::Placement);
  REQUIRE_FALSE(proposed.empty());
  auto loaded = config::parse_config(proposed, "proposed.yaml");
  REQUIRE(loaded.namespaces.size() == 1);
  CHECK(loaded.namespaces[0].strategy == chosen.table.strategy);
  CHECK(loaded.namespaces[0].shard_key == "id");
  CHECK(loaded.namespaces[0].ranges.empty());
}

// ships: "ship:{id}" in lexical ranges (no shard_key named: the first field), analyzed by the
// glob of its keys; ids rise with time, so every new ship lands on the last range's shard.
TEST_CASE("analyze: a glob over a range namespace under a rising key advises moving off ranges") {
  auto config = test::murmur_cluster(4);
  config::NamespaceConfig ns;
  ns.name = "ships";
  ns.match = "ship:{id}";
  ns.shard_key = "id";
  ns.strategy = config::Strategy::Range;
  for (std::size_t i = 0; i < 4; ++i) {
    config::KeyRange r;
    if (i > 0) r.from = std::to_string(i);
    if (i < 3) r.to = std::to_string(i + 1);
    r.shard = i;
    ns.ranges.push_back(r);
    ns.hashed.shards.push_back(i);
  }
  config.namespaces.push_back(ns);
  placement::ShardMap map(config);
  AnalysisSamples samples;
  for (int i = 0; i < 3000; ++i) {
    std::string key = "ship:" + std::to_string(3'000'000 + i);  // all in the last range
    samples.requests.push_back(request(key, true, i * 10));
    samples.requests.push_back(request(key, false, i * 10 + 5));
  }
  auto report = analyze(config, map, {"ship:*", ""}, samples);
  INFO(report_text(report));
  CHECK(report.namespace_name == "ships");
  CHECK(report.scan_pattern == "ship:*");
  REQUIRE(report.keys.size() == 1);
  CHECK(report.keys[0].monotonic);
  const auto* current = row(report, "current (range)", "{id}");
  REQUIRE(current != nullptr);
  CHECK(current->excluded.find("rises with time") != std::string::npos);
  REQUIRE(report.recommended);
  const auto& chosen = report.whatifs[*report.recommended];
  CHECK_FALSE(chosen.current);
  CHECK(chosen.table.strategy != config::Strategy::Range);
  CHECK(report.recommendation.find("Keep") == std::string::npos);
  CHECK(report.config_lines.find("name: ships") != std::string::npos);
}

// The same rising keys in no namespace: the whole key is the shard key of every what-if row.
TEST_CASE("analyze: the whole key is a shard key for hashed, slots and directory") {
  auto config = test::murmur_cluster(4);
  placement::ShardMap map(config);
  AnalysisSamples samples;
  for (int i = 0; i < 3000; ++i) {
    std::string key = "ship:" + std::to_string(3'000'000 + i);
    samples.requests.push_back(request(key, true, i * 10));
    samples.requests.push_back(request(key, false, i * 10 + 5));
  }
  auto report = analyze(config, map, {"ship:*", ""}, samples);
  INFO(report_text(report));
  CHECK(report.namespace_name.empty());
  REQUIRE(report.keys.size() == 1);
  const std::string whole = report.keys[0].name;
  CHECK(report.keys[0].monotonic);
  for (auto strategy : {"hashed", "slots", "directory"}) {
    const auto* by_key = row(report, strategy, whole);
    REQUIRE(by_key != nullptr);
    CHECK(by_key->excluded.empty());
  }
  const auto* range = row(report, "range", whole);
  REQUIRE(range != nullptr);
  CHECK(range->excluded.find("rises with time") != std::string::npos);
  REQUIRE(report.recommended);
  CHECK(report.whatifs[*report.recommended].table.strategy != config::Strategy::Range);
}

TEST_CASE("analyze: three values of a candidate over eight shards are flagged low cardinality") {
  auto config = events_by_range(8);
  placement::ShardMap map(config);
  AnalysisSamples samples;
  for (int i = 0; i < 3000; ++i)
    samples.requests.push_back(
        request("event:t" + std::to_string(i % 3) + ":" + std::to_string((i * 7919) % 8'000'000),
                i % 4 == 0, i));
  auto report = analyze(config, map, {"events", "tenant"}, samples);
  REQUIRE(report.keys.size() == 2);
  const auto& tenant = report.keys[1];
  CHECK(tenant.name == "{tenant}");
  CHECK(tenant.distinct == Approx(3));
  CHECK(tenant.low_cardinality);
  REQUIRE(tenant.top.size() == 3);
  CHECK(tenant.top[0].second == Approx(1.0 / 3).epsilon(0.01));
  for (const auto& w : report.whatifs)
    if (w.key == "{tenant}") {
      CHECK(w.excluded.find("distinct values") != std::string::npos);
      if (w.hot_spot > 0) CHECK(w.floor == Approx(8.0 / 3).epsilon(0.01));
    }
  // The SCAN MATCH pattern binds the candidate to its most frequent value.
  CHECK(report.scan_pattern.starts_with("event:t"));
  CHECK(report.scan_pattern.ends_with(":*"));
  // Spread ids: the current placement is kept or another by {id} is advised, never {tenant}.
  REQUIRE(report.recommended);
  CHECK(report.whatifs[*report.recommended].key == "{id}");
}

TEST_CASE("analyze: the what-if hot-spot ratio is the strategy report's on the same keys") {
  auto config = events_by_range(4);
  placement::ShardMap map(config);
  AnalysisSamples samples;
  whatif::Trace trace;
  // Accesses skewed over ranges: 1, 2, 3 and 4 per key by range.
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 100; ++i) {
      std::string key = "event:t:" + std::to_string(r * 1'000'000 + i);
      for (int n = 0; n <= r; ++n) samples.requests.push_back(request(key, false, i));
      trace.add(key, static_cast<std::uint32_t>(r + 1));
    }
  auto report = analyze(config, map, {"events", ""}, samples);
  auto placed = whatif::replay(map, trace);
  double expected = whatif::hot_spot_ratio(whatif::shard_loads(placed, trace, 0));
  CHECK(expected == Approx(4.0 / 2.5));
  const auto* current = row(report, "current (range)", "{id}");
  REQUIRE(current != nullptr);
  CHECK(current->hot_spot == Approx(expected));
  CHECK(current->store_touches == 1);
  // Not monotonic (every key is read, none written): nothing excludes the current placement.
  CHECK(current->excluded.empty());
}

TEST_CASE("analyze: read/write distribution and the requests that scatter") {
  auto config = events_by_range(4);
  placement::ShardMap map(config);
  AnalysisSamples samples;
  for (int i = 0; i < 10; ++i)
    samples.requests.push_back(request("event:a:" + std::to_string(i), false, i));
  auto mget = request("event:a:1", false, 20, 3);
  mget.command = "mget";
  samples.requests.push_back(mget);
  SampledRequest scan;
  scan.command = "scan";
  scan.pattern = "event:*";
  scan.shards = 8;
  scan.of = 8;
  samples.requests.push_back(scan);
  SampledRequest other;  // another namespace's keyless request: not counted
  other.command = "keys";
  other.pattern = "user:*";
  other.shards = 8;
  other.of = 8;
  samples.requests.push_back(other);
  auto report = analyze(config, map, {"events", ""}, samples);
  REQUIRE(report.distribution.size() == 1);
  const auto& reads = report.distribution[0];
  CHECK(reads.kind == "read");
  CHECK(reads.one == 10);
  CHECK(reads.several == 1);
  CHECK(reads.all == 1);
  REQUIRE(report.scatter.size() == 2);
  bool scan_named = false, mget_named = false;
  for (const auto& c : report.scatter) {
    scan_named = scan_named || c.what == "SCAN MATCH event:*";
    mget_named = mget_named || c.what == "MGET of keys on 3 shards";
  }
  CHECK(scan_named);
  CHECK(mget_named);
}

TEST_CASE("analyze: a regex candidate, a glob target, and a bad candidate") {
  auto config = test::murmur_cluster(4);
  placement::ShardMap map(config);
  AnalysisSamples samples;
  for (int i = 0; i < 500; ++i)
    samples.requests.push_back(request("user:" + std::to_string(i % 20) + ":cart", i % 2 == 0, i));
  samples.requests.push_back(request("other:1", true, 1000));
  auto report = analyze(config, map, {"user:*", "^user:(\\d+):"}, samples);
  CHECK(report.namespace_name.empty());
  CHECK(report.sampled == 500);
  REQUIRE(report.keys.size() == 2);
  CHECK(report.keys[1].name == "regex ^user:(\\d+):");
  CHECK(report.keys[1].distinct == Approx(20));
  CHECK(report.keys[1].numeric);
  // What-if rows by the regex can be shown but not applied.
  const auto* by_regex = row(report, "hashed", "regex ^user:(\\d+):");
  REQUIRE(by_regex != nullptr);
  CHECK(by_regex->hot_spot > 0);
  CHECK(by_regex->excluded.find("regular expression") != std::string::npos);

  CHECK_THROWS_AS(analyze(config, map, {"user:*", "(unclosed"}, samples), std::invalid_argument);
}

TEST_CASE("analyze: distinct values are estimated, correlation is Pearson's") {
  constexpr int kValues = 50'000;
  std::vector<SampledRequest> requests;
  std::vector<const SampledRequest*> pointers;
  requests.reserve(kValues);
  pointers.reserve(kValues);
  for (int i = 0; i < kValues; ++i) requests.push_back(request("k:" + std::to_string(i), false, i));
  for (const auto& r : requests) pointers.push_back(&r);
  config::Config config = test::murmur_cluster(2);
  placement::ShardMap map(config);
  auto figures = key_figures(KeyValues::hashed_part(map), pointers, {}, 2);
  CHECK(figures.distinct == Approx(kValues));  // only requests: counted exactly
  // With keys drawn from the shards the sketch counts: within a few percent.
  std::vector<StoredKey> stored;
  std::vector<const StoredKey*> stored_pointers;
  stored.reserve(kValues);
  stored_pointers.reserve(kValues);
  for (int i = 0; i < kValues; ++i) stored.push_back({"s:" + std::to_string(i), 1, 0});
  for (const auto& s : stored) stored_pointers.push_back(&s);
  auto sketched = key_figures(KeyValues::hashed_part(map), {}, stored_pointers, 2);
  CHECK(sketched.distinct == Approx(kValues).epsilon(0.05));

  std::vector<double> rising{1, 2, 3, 5, 8}, falling{9, 7, 4, 2, 1}, flat{3, 3, 3};
  CHECK(*order_correlation(rising) > 0.9);
  CHECK(*order_correlation(falling) < -0.9);
  CHECK_FALSE(order_correlation(flat));
}

TEST_CASE("analyze: the sampler's gaps average 1/rate and do not line up with a pattern") {
  RequestSampler sampler;
  constexpr std::uint32_t kEvery = 2;
  int due = 0, due_on_odd = 0;
  for (int i = 0; i < 100'000; ++i)
    if (sampler.due(kEvery)) {
      ++due;
      if (i % 2 == 1) ++due_on_odd;
    }
  CHECK(due == Approx(50'000).epsilon(0.05));
  // A client alternating SET and GET gets both sampled.
  CHECK(due_on_odd == Approx(due / 2.0).epsilon(0.1));
}

TEST_CASE("analyze: a fleet peer's samples cross as RESP and come back whole") {
  std::vector<SampledRequest> sent{request("event:a:1", true, 42, 1), request("", false, 43, 8)};
  sent[1].pattern = "event:*";
  sent[1].command = "scan";
  std::vector<SampledRequest> got;
  std::string error;
  REQUIRE(read_raw_samples(raw_samples_reply(sent), got, error));
  REQUIRE(got.size() == 2);
  CHECK(got[0].key == "event:a:1");
  CHECK(got[0].write);
  CHECK(got[0].at_us == 42);
  CHECK(got[1].pattern == "event:*");
  CHECK(got[1].command == "scan");
  CHECK(got[1].shards == 8);
  CHECK_FALSE(read_raw_samples("-ERR busy\r\n", got, error));
  CHECK(error == "ERR busy");
}

TEST_CASE(
    "analyze: keys moved by one more shard are a share of the stored keys, not the requests") {
  auto config = events_by_range(4);
  placement::ShardMap map(config);
  AnalysisSamples samples;
  // The traffic: 1,000 new events high in the last range.
  for (int i = 0; i < 1000; ++i)
    samples.requests.push_back(request("event:t:" + std::to_string(3'500'000 + i), true, i));
  // What the shards hold: 25 draws per range, each standing for 400 keys, all low in its range.
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 25; ++k)
      samples.stored.push_back({"event:t:" + std::to_string(r * 1'000'000 + k * 1000), 400, 64});
  auto report = analyze(config, map, {"events", ""}, samples);
  const auto* current = row(report, "current (range)", "{id}");
  REQUIRE(current != nullptr);
  // The busiest range splits at its median access (3,500,500): half the requested keys move, but
  // no stored key does (every one of the last range's is below the split).
  CHECK(current->moved == Approx(0.0));
  // A hashed namespace moves about 1/5 of the stored keys, weighted alike.
  const auto* hashed = row(report, "hashed", "{id}");
  REQUIRE(hashed != nullptr);
  CHECK(hashed->moved == Approx(0.2).margin(0.12));
}

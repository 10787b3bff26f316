#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "router/analysis/sampled_request.h"

namespace santral::router {

// What SANTRAL ANALYZE looks at: a namespace (by name) or the keys a glob matches, and a
// candidate shard key: a field of the namespace's `match:` pattern, or a regular expression
// whose first group (else its whole match) is the candidate's value.
struct AnalysisTarget {
  std::string target;     // a namespace's name, or a key glob
  std::string candidate;  // empty: only the current shard key
};

// One shard key's characteristics over the sampled traffic (MongoDB's keyCharacteristics).
struct KeyFigures {
  std::string name;            // "{number}", "regex ...", "the key's hashed part"
  std::uint64_t accesses = 0;  // sampled requests whose key has a value for it
  double distinct = 0;         // distinct values (a HyperLogLog estimate, requests and stored)
  std::vector<std::pair<std::string, double>> top;  // most frequent values, share of accesses
  // New keys' values against their arrival: Pearson's r over the first write of each key
  // (numbers by value, other text by its rank); nullopt with fewer than 16 new keys.
  std::optional<double> monotonicity;
  std::size_t new_keys = 0;
  bool monotonic = false;        // |r| >= kMonotonic
  bool low_cardinality = false;  // fewer distinct values than kValuesPerShard per shard
  bool numeric = false;          // every value is a whole number
};

// One way to place the target's keys, replayed over the sample (seed 003's table).
struct WhatIf {
  std::string strategy;  // "current (range by {number})", "hashed", "slots", "range", "directory"
  std::string key;       // the shard key it places by
  bool current = false;  // the namespace as configured
  double hot_spot = 0;   // busiest shard's sampled accesses over the mean
  std::size_t scan_shards = 0;  // shards SCAN MATCH <scan_pattern> visits
  int store_touches = 1;        // stores read per access (a directory: table, then data)
  // The share of the stored keys (as drawn from the shards; the requested keys when none were
  // drawn) that move when one shard is added.
  double moved = 0;
  double hot_spot_grown = 0;  // the hot-spot ratio after that shard is added
  double floor = 1;      // the least hot-spot any placement by this key can reach (largest value)
  std::string excluded;  // why it cannot be recommended ("" when it can)
  config::NamespaceConfig table;  // the namespace it stands for
};

// The share of sampled requests of one kind (read, write) by how many shards they reached.
struct Distribution {
  std::string kind;
  std::uint64_t one = 0, several = 0, all = 0, none = 0;
};

struct ScatterCause {
  std::string what;  // "MGET keys of 2+ shards", "SCAN MATCH ship:*"
  std::uint64_t requests = 0;
};

struct AnalysisReport {
  std::string target;
  std::string namespace_name;  // empty: a glob of keys of no namespace, or of several
  double seconds = 0, rate = 0;
  std::vector<std::string> routers, missing;
  std::uint64_t sampled = 0;      // sampled requests of the target
  std::uint64_t sampled_all = 0;  // sampled requests of every key
  std::uint64_t stored = 0;       // keys drawn from the shards that belong to the target
  std::size_t shards = 0;
  std::vector<KeyFigures> keys;  // the current shard key, then the candidate
  std::vector<Distribution> distribution;
  std::vector<ScatterCause> scatter;
  std::string scan_pattern;  // the SCAN MATCH the what-if counts shards for
  std::vector<WhatIf> whatifs;
  std::string recommendation;              // one sentence
  std::optional<std::size_t> recommended;  // index into whatifs
  std::string config_lines;                // the namespace entry that applies it (YAML)
  std::vector<std::string> warnings;
};

inline constexpr double kMonotonic = 0.7;
inline constexpr double kValuesPerShard = 4;

// Analyzes `samples` for `target` under the config in force. Throws std::invalid_argument with
// a message for the client when the target or the candidate cannot be used.
AnalysisReport analyze(const config::Config& config, const placement::ShardMap& map,
                       const AnalysisTarget& target, const AnalysisSamples& samples);

// The report as text (SANTRAL ANALYZE, santral analyze) and as JSON (GET /analyze, FORMAT JSON).
std::string report_text(const AnalysisReport& report);
std::string report_json(const AnalysisReport& report);

}  // namespace santral::router

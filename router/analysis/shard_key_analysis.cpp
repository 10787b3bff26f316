#include "router/analysis/shard_key_analysis.h"

#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "placement/whatif/replay.h"
#include "protocol/glob_pattern.h"
#include "router/analysis/key_figures.h"
#include "router/analysis/key_values.h"
#include "router/analysis/recommendation.h"
#include "router/analysis/whatif_rows.h"

namespace santral::router {

namespace {

constexpr std::size_t kTopCauses = 5;

std::string_view literal_prefix(std::string_view glob) {
  return glob.substr(0, std::min(glob.find_first_of("*?[\\"), glob.size()));
}

bool prefixes_meet(std::string_view a, std::string_view b) {
  return a.starts_with(b) || b.starts_with(a);
}

std::string glob_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The SCAN MATCH pattern of the namespace with `field` bound to `value`, other fields '*'.
std::string bound_pattern(const config::KeyPattern& pattern, int field, std::string_view value) {
  std::string out;
  int index = 0;
  for (const auto& segment : pattern.segments()) {
    if (!segment.field) {
      out += glob_escape(segment.text);
    } else {
      out += index == field ? glob_escape(value) : std::string("*");
      ++index;
    }
  }
  return out;
}

// The shard keys an analysis looks at: the namespace's (or, for a glob or a namespace keyed by
// the whole key, the key's hashed part), and the candidate: a field of the namespace's pattern
// (`seller` or `{seller}`), else a regular expression.
std::vector<KeyValues> shard_keys(const config::Config& config, const placement::ShardMap& map,
                                  std::optional<std::size_t> ns, const std::string& candidate) {
  const config::KeyPattern* pattern = ns ? &map.namespaces()[*ns].pattern() : nullptr;
  std::vector<KeyValues> keys;
  if (ns && !config.namespaces[*ns].shard_key.empty())
    keys.push_back(
        KeyValues::field(*pattern, pattern->field_index(config.namespaces[*ns].shard_key)));
  else
    keys.push_back(KeyValues::hashed_part(map));
  if (candidate.empty()) return keys;
  std::string name = candidate;
  if (name.size() > 2 && name.front() == '{' && name.back() == '}')
    name = name.substr(1, name.size() - 2);
  if (int field = pattern != nullptr ? pattern->field_index(name) : -1; field >= 0) {
    keys.push_back(KeyValues::field(*pattern, field));
  } else {
    try {
      keys.push_back(KeyValues::regex(candidate));
    } catch (const std::regex_error& e) {
      throw std::invalid_argument(
          fmt::format("KEY '{}' is neither a field of {} nor a regular expression ({})", candidate,
                      pattern != nullptr ? pattern->text() : "the keys' pattern", e.what()));
    }
  }
  if (keys.back().name() == keys.front().name()) keys.pop_back();
  return keys;
}

// How many shards the target's sampled requests reached, per kind, and what scattered.
class Reach {
 public:
  void count(const SampledRequest& request) {
    auto& row = kinds_[request.write ? "write" : "read"];
    row.kind = request.write ? "write" : "read";
    if (request.shards == 0) {
      ++row.none;
    } else if (request.shards == 1) {
      ++row.one;
    } else {
      ++(request.shards >= request.of ? row.all : row.several);
      std::string command = request.command;
      for (auto& c : command) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      ++causes_[request.key.empty()
                    ? fmt::format("{} MATCH {}", command, request.pattern)
                    : fmt::format("{} of keys on {} shards", command, request.shards)];
    }
  }
  void report_to(AnalysisReport& report) const {
    for (const auto& [kind, row] : kinds_) report.distribution.push_back(row);
    for (const auto& [what, count] : causes_) report.scatter.push_back({what, count});
    std::sort(report.scatter.begin(), report.scatter.end(),
              [](const auto& a, const auto& b) { return a.requests > b.requests; });
    if (report.scatter.size() > kTopCauses) report.scatter.resize(kTopCauses);
  }

 private:
  std::map<std::string, Distribution> kinds_;
  std::unordered_map<std::string, std::uint64_t> causes_;
};

// The namespace every key of the target that was sampled or drawn lives in, if there is one.
template <typename Belongs>
std::optional<std::size_t> only_namespace(const placement::ShardMap& map,
                                          const AnalysisSamples& samples, Belongs&& belongs) {
  std::optional<std::int16_t> only;
  auto see = [&](std::string_view key) {
    if (!belongs(key)) return true;
    std::string_view shard_key;
    auto space = whatif::namespace_of(map, key, shard_key);
    if (only && *only != space) return false;
    only = space;
    return true;
  };
  for (const auto& request : samples.requests)
    if (!request.key.empty() && !see(request.key)) return std::nullopt;
  for (const auto& key : samples.stored)
    if (!see(key.key)) return std::nullopt;
  if (!only || *only < 0) return std::nullopt;
  return static_cast<std::size_t>(*only);
}

}  // namespace

AnalysisReport analyze(const config::Config& config, const placement::ShardMap& map,
                       const AnalysisTarget& target, const AnalysisSamples& samples) {
  AnalysisReport report;
  report.target = target.target;
  report.seconds = samples.seconds;
  report.rate = samples.rate;
  report.routers = samples.routers;
  report.missing = samples.missing;
  report.sampled_all = samples.requests.size();
  const std::size_t shards = map.placed_count();
  report.shards = shards;

  std::optional<std::size_t> named;  // the target names a namespace
  for (std::size_t i = 0; i < config.namespaces.size(); ++i)
    if (config.namespaces[i].name == target.target) named = i;
  auto belongs = [&](std::string_view key) {
    if (!named) return protocol::glob_matches(target.target, key);
    std::string_view shard_key;
    return whatif::namespace_of(map, key, shard_key) == static_cast<std::int16_t>(*named);
  };
  // A glob whose keys all live in one namespace is that namespace's keys: its placement is the
  // current one, and what is advised is a change of that namespace.
  std::optional<std::size_t> ns = named ? named : only_namespace(map, samples, belongs);
  const config::KeyPattern* pattern = ns ? &map.namespaces()[*ns].pattern() : nullptr;
  if (ns) report.namespace_name = config.namespaces[*ns].name;
  std::string_view target_prefix =
      named ? pattern->leading_literal() : literal_prefix(target.target);

  auto keys = shard_keys(config, map, ns, target.candidate);

  // The target's requests and stored keys; keyless requests whose pattern meets the target's.
  std::vector<const SampledRequest*> requests;
  Reach reach;
  for (const auto& request : samples.requests) {
    bool keyless = request.key.empty();
    if (keyless ? (request.pattern.empty() ||
                   !prefixes_meet(literal_prefix(request.pattern), target_prefix))
                : !belongs(request.key))
      continue;
    if (!keyless) requests.push_back(&request);
    reach.count(request);
  }
  report.sampled = requests.size();
  reach.report_to(report);
  std::vector<const StoredKey*> stored;
  for (const auto& key : samples.stored)
    if (belongs(key.key)) stored.push_back(&key);
  report.stored = stored.size();

  for (const auto& values : keys)
    report.keys.push_back(key_figures(values, requests, stored, shards));

  // The SCAN MATCH a what-if counts shards for: the namespace's pattern with the candidate's
  // (else the shard key's) most frequent value; for a glob, the glob.
  std::size_t bound_key = keys.size() - 1;
  while (bound_key > 0 && keys[bound_key].field_index() < 0) --bound_key;
  if (!named)
    report.scan_pattern = target.target;
  else if (keys[bound_key].field_index() >= 0 && !report.keys[bound_key].top.empty())
    report.scan_pattern = bound_pattern(*pattern, keys[bound_key].field_index(),
                                        report.keys[bound_key].top.front().first);

  // The what-if: the current placement, then each shard key under each strategy.
  auto target_lines = target_keys(requests, stored);
  if (!target_lines.lines.empty()) {
    WhatIfScope scope{config, map, ns, report.scan_pattern};
    report.whatifs.push_back(current_row(scope, report.keys.front(), target_lines));
    for (std::size_t k = 0; k < keys.size(); ++k)
      for (auto& row : strategy_rows(scope, keys[k], report.keys[k], target_lines))
        report.whatifs.push_back(std::move(row));
  }
  add_warnings(report);
  recommend(report, config, target.target);
  return report;
}

}  // namespace santral::router

#include "router/analysis/shard_key_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <span>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "config/whatif/group_balance.h"
#include "config/whatif/grow.h"
#include "config/whatif/metrics.h"
#include "config/whatif/replay.h"
#include "config/whatif/trace.h"
#include "protocol/glob_pattern.h"
#include "router/analysis/key_figures.h"
#include "router/analysis/key_values.h"
#include "router/analysis/recommended_config.h"

namespace santral::router {

namespace {

using config::Strategy;

// A directory lists its groups: past this many it is not a table anyone should keep.
constexpr std::size_t kMostGroups = 20000;
// Values joined to their key in a what-if of a key no pattern field holds (a regex, the
// hashed part): a separator keys almost never contain.
constexpr char kJoin = '\x1f';
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

std::string field_name(const config::KeyPattern& pattern, int field) {
  int index = 0;
  for (const auto& segment : pattern.segments())
    if (segment.field && index++ == field) return segment.text;
  return {};
}

// The keys a what-if places: the target's keys with their sampled accesses (0: drawn from a
// shard only), and the namespace table the variants start from.
struct Space {
  config::Config base;  // the config the variants replace one namespace of
  std::size_t index = 0;
  whatif::Trace trace;
  // Per trace key, the stored keys it stands for: a key drawn from a shard its draw's weight
  // (the shard's keys over its draws), a key only requested none. Without draws every key
  // counts once. The share of keys a new shard takes is a share of what is stored.
  std::vector<double> weights;
  bool real_keys = false;  // the trace holds the keys themselves (else value + kJoin + key)
};

struct Weighted {
  std::string_view value;
  std::uint64_t weight;
};

void fill_table(config::NamespaceConfig& ns, Strategy strategy, std::size_t shards,
                const std::vector<Weighted>& values, bool numeric, std::string& excluded) {
  ns.strategy = strategy;
  ns.slots.clear();
  ns.ranges.clear();
  ns.groups.clear();
  ns.zones.clear();
  ns.hashed.shards.resize(shards);
  std::iota(ns.hashed.shards.begin(), ns.hashed.shards.end(), std::size_t{0});
  switch (strategy) {
    case Strategy::Slots:
      for (std::size_t i = 0; i < shards; ++i)
        ns.slots.push_back({static_cast<std::uint32_t>(config::kSlotCount * i / shards),
                            static_cast<std::uint32_t>(config::kSlotCount * (i + 1) / shards - 1),
                            i});
      break;
    case Strategy::Range: {
      // Boundaries at the sampled accesses' quantiles (keys' when nothing was accessed).
      ns.order = numeric ? config::RangeOrder::Numeric : config::RangeOrder::Lexical;
      std::vector<Weighted> sorted(values);
      auto less = [numeric](const Weighted& a, const Weighted& b) {
        if (numeric) return *whole_number(a.value) < *whole_number(b.value);
        return a.value < b.value;
      };
      std::sort(sorted.begin(), sorted.end(), less);
      std::uint64_t total = 0;
      for (const auto& v : sorted) total += v.weight;
      std::vector<std::string> bounds;
      std::uint64_t running = 0;
      std::size_t next = 1;
      for (std::size_t i = 0; i < sorted.size() && next < shards; ++i) {
        if (running * shards >= total * next &&
            (bounds.empty() || bounds.back() != sorted[i].value) &&
            (i == 0 || sorted[i - 1].value != sorted[i].value)) {
          bounds.emplace_back(sorted[i].value);
          ++next;
        }
        running += sorted[i].weight;
      }
      for (std::size_t i = 0; i <= bounds.size(); ++i) {
        config::KeyRange r;
        if (i > 0) r.from = bounds[i - 1];
        if (i < bounds.size()) r.to = bounds[i];
        r.shard = i;
        ns.ranges.push_back(r);
      }
      break;
    }
    case Strategy::Directory: {
      std::map<std::string_view, std::uint64_t> loads;
      for (const auto& v : values) loads[v.value] += v.weight;
      if (loads.size() > kMostGroups) {
        excluded = fmt::format("{} distinct values are too many groups to list in a directory",
                               loads.size());
        ns.strategy = Strategy::Hashed;
        return;
      }
      std::vector<std::uint64_t> weights;
      weights.reserve(loads.size());
      for (const auto& [group, load] : loads) weights.push_back(load);
      auto placed = whatif::greedy_assign(weights, shards);
      std::size_t i = 0;
      for (const auto& [group, load] : loads)
        ns.groups.emplace_back(std::string(group), placed[i++]);
      ns.fallback = Strategy::Hashed;
      break;
    }
    case Strategy::Hashed:
    case Strategy::Zone:
      break;
  }
}

struct Replayed {
  double hot_spot = 0, hot_spot_grown = 0, moved = 0;
  std::size_t scan_shards = 0;
};

// `weights`: per trace key, what it stands for among the stored keys (see Space::weights).
Replayed replay_config(const config::Config& config, const whatif::Trace& trace,
                       std::span<const double> weights, std::int16_t space,
                       const std::string& scan_pattern) {
  config::ShardMap map(config);
  auto placed = whatif::replay(map, trace);
  Replayed out;
  out.hot_spot = whatif::hot_spot_ratio(whatif::shard_loads(placed, trace, space));
  auto grown_config = whatif::with_added_shard(config, map, trace, placed);
  config::ShardMap grown_map(grown_config);
  auto grown = whatif::replay(grown_map, trace);
  out.moved = whatif::moved_share(placed, grown, space, weights);
  out.hot_spot_grown = whatif::hot_spot_ratio(whatif::shard_loads(grown, trace, space));
  out.scan_shards =
      scan_pattern.empty() ? map.placed_count() : map.shards_for_pattern(scan_pattern).size();
  return out;
}

std::string strategy_label(Strategy strategy) {
  return std::string(config::strategy_name(strategy));
}

}  // namespace

AnalysisReport analyze(const config::Config& config, const config::ShardMap& map,
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

  std::optional<std::size_t> ns;
  for (std::size_t i = 0; i < config.namespaces.size(); ++i)
    if (config.namespaces[i].name == target.target) ns = i;
  const config::KeyPattern* pattern = ns ? &map.namespaces()[*ns].pattern() : nullptr;
  if (ns) report.namespace_name = config.namespaces[*ns].name;
  auto belongs = [&](std::string_view key) {
    if (!ns) return protocol::glob_matches(target.target, key);
    std::string_view shard_key;
    return whatif::namespace_of(map, key, shard_key) == static_cast<std::int16_t>(*ns);
  };
  std::string_view target_prefix =
      pattern != nullptr ? pattern->leading_literal() : literal_prefix(target.target);

  // The shard keys: the current one, and the candidate.
  std::vector<KeyValues> keys;
  if (ns && !config.namespaces[*ns].shard_key.empty())
    keys.push_back(
        KeyValues::field(*pattern, pattern->field_index(config.namespaces[*ns].shard_key)));
  else
    keys.push_back(KeyValues::hashed_part(map));
  if (!target.candidate.empty()) {
    std::string name = target.candidate;
    if (name.size() > 2 && name.front() == '{' && name.back() == '}')
      name = name.substr(1, name.size() - 2);
    int field = pattern != nullptr ? pattern->field_index(name) : -1;
    if (field >= 0) {
      keys.push_back(KeyValues::field(*pattern, field));
    } else {
      try {
        keys.push_back(KeyValues::regex(target.candidate));
      } catch (const std::regex_error& e) {
        throw std::invalid_argument(fmt::format(
            "KEY '{}' is neither a field of {} nor a regular expression ({})", target.candidate,
            pattern != nullptr ? pattern->text() : "the keys' pattern", e.what()));
      }
    }
    if (keys.back().name() == keys.front().name()) keys.pop_back();
  }

  // The target's requests and stored keys.
  std::vector<const SampledRequest*> requests;
  std::map<std::string, Distribution> kinds;
  std::unordered_map<std::string, std::uint64_t> causes;
  for (const auto& request : samples.requests) {
    bool keyless = request.key.empty();
    if (keyless ? (request.pattern.empty() ||
                   !prefixes_meet(literal_prefix(request.pattern), target_prefix))
                : !belongs(request.key))
      continue;
    if (!keyless) requests.push_back(&request);
    auto& row = kinds[request.write ? "write" : "read"];
    row.kind = request.write ? "write" : "read";
    if (request.shards == 0) {
      ++row.none;
    } else if (request.shards == 1) {
      ++row.one;
    } else {
      ++(request.shards >= request.of ? row.all : row.several);
      std::string command = request.command;
      for (auto& c : command) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      ++causes[keyless ? fmt::format("{} MATCH {}", command, request.pattern)
                       : fmt::format("{} of keys on {} shards", command, request.shards)];
    }
  }
  report.sampled = requests.size();
  for (auto& [kind, row] : kinds) report.distribution.push_back(row);
  for (auto& [what, count] : causes) report.scatter.push_back({what, count});
  std::sort(report.scatter.begin(), report.scatter.end(),
            [](const auto& a, const auto& b) { return a.requests > b.requests; });
  if (report.scatter.size() > kTopCauses) report.scatter.resize(kTopCauses);
  std::vector<const StoredKey*> stored;
  for (const auto& key : samples.stored)
    if (belongs(key.key)) stored.push_back(&key);
  report.stored = stored.size();

  for (const auto& values : keys)
    report.keys.push_back(key_figures(values, requests, stored, shards));

  // The trace of the target's keys: accesses per key, drawn keys with none; and what each
  // stands for among the stored keys (Space::weights).
  std::unordered_map<std::string_view, std::uint32_t> accesses;
  std::unordered_map<std::string_view, double> drawn;
  for (const auto* request : requests) ++accesses[request->key];
  for (const auto* key : stored) {
    accesses.try_emplace(key->key, 0);
    drawn[key->key] += key->weight;
  }
  std::vector<std::pair<std::string_view, std::uint32_t>> lines(accesses.begin(), accesses.end());
  std::sort(lines.begin(), lines.end());
  auto weight_of = [&](std::string_view key) {
    if (drawn.empty()) return 1.0;
    auto it = drawn.find(key);
    return it == drawn.end() ? 0.0 : it->second;
  };

  // The SCAN MATCH a what-if counts shards for: the namespace's pattern with the candidate's
  // (else the shard key's) most frequent value; for a glob, the glob.
  std::size_t bound_key = keys.size() - 1;
  while (bound_key > 0 && keys[bound_key].field_index() < 0) --bound_key;
  if (pattern != nullptr && keys[bound_key].field_index() >= 0 &&
      !report.keys[bound_key].top.empty())
    report.scan_pattern = bound_pattern(*pattern, keys[bound_key].field_index(),
                                        report.keys[bound_key].top.front().first);
  else if (!ns)
    report.scan_pattern = target.target;

  // The current placement.
  if (!lines.empty()) {
    whatif::Trace trace;
    std::vector<double> weights;
    for (const auto& [key, count] : lines) {
      trace.add(key, count);
      weights.push_back(weight_of(key));
    }
    WhatIf row;
    auto space = ns ? static_cast<std::int16_t>(*ns) : whatif::kEverySpace;
    auto figures = replay_config(config, trace, weights, space, report.scan_pattern);
    row.current = true;
    row.key = keys.front().name();
    row.strategy = ns ? fmt::format("current ({})", strategy_label(config.namespaces[*ns].strategy))
                      : std::string("current");
    if (ns) row.table = config.namespaces[*ns];
    row.hot_spot = figures.hot_spot;
    row.hot_spot_grown = figures.hot_spot_grown;
    row.moved = figures.moved;
    row.scan_shards = figures.scan_shards;
    row.store_touches =
        whatif::store_touches(ns ? std::optional(config.namespaces[*ns].strategy) : std::nullopt);
    const auto& current = report.keys.front();
    if (!current.top.empty())
      row.floor = std::max(1.0, current.top.front().second * static_cast<double>(shards));
    if (ns && config.namespaces[*ns].strategy == Strategy::Range && current.monotonic)
      row.excluded = fmt::format(
          "{} rises with time (r = {:.2f}): every new key goes to the last "
          "range's shard",
          current.name, *current.monotonicity);
    else if (current.low_cardinality)
      row.excluded = fmt::format("only about {:.0f} distinct values of {} for {} shards",
                                 current.distinct, current.name, shards);
    report.whatifs.push_back(std::move(row));
  }

  // Each shard key under each strategy.
  for (std::size_t k = 0; k < keys.size() && !lines.empty(); ++k) {
    const auto& values = keys[k];
    const auto& figures = report.keys[k];
    Space space;
    space.base = config;
    space.real_keys = ns && values.field_index() >= 0;
    config::NamespaceConfig table;
    std::vector<std::string> joined;  // the synthetic keys' storage
    std::vector<Weighted> weighted;
    bool accessed =
        std::any_of(lines.begin(), lines.end(), [](const auto& l) { return l.second > 0; });
    if (space.real_keys) {
      table = config.namespaces[*ns];
      table.shard_key = field_name(*pattern, values.field_index());
      space.index = *ns;
      for (const auto& [key, count] : lines) {
        space.trace.add(key, count);
        space.weights.push_back(weight_of(key));
      }
    } else {
      table.name = ns ? config.namespaces[*ns].name : std::string("analyzed");
      table.match = std::string("{value}") + kJoin + "{key}";
      table.shard_key = "value";
      space.base.namespaces = {};
      space.index = 0;
      for (const auto& [key, count] : lines)
        if (auto value = values.of(key)) {
          space.trace.add(std::string(*value) + kJoin + std::string(key), count);
          space.weights.push_back(weight_of(key));
        }
    }
    for (std::size_t i = 0; i < space.trace.size(); ++i) {
      auto key = space.trace.key(i);
      auto value = space.real_keys ? values.of(key) : key.substr(0, key.find(kJoin));
      if (value) weighted.push_back({*value, accessed ? space.trace.count(i) : 1});
    }
    if (space.trace.size() == 0) continue;
    for (auto strategy :
         {Strategy::Hashed, Strategy::Slots, Strategy::Range, Strategy::Directory}) {
      WhatIf row;
      row.key = values.name();
      row.strategy = strategy_label(strategy);
      row.table = table;
      fill_table(row.table, strategy, shards, weighted, figures.numeric, row.excluded);
      if (!row.excluded.empty()) {
        report.whatifs.push_back(std::move(row));
        continue;
      }
      config::Config variant = space.base;
      if (space.real_keys)
        variant.namespaces[space.index] = row.table;
      else
        variant.namespaces = {row.table};
      auto replayed =
          replay_config(variant, space.trace, space.weights, static_cast<std::int16_t>(space.index),
                        space.real_keys ? report.scan_pattern : std::string());
      row.hot_spot = replayed.hot_spot;
      row.hot_spot_grown = replayed.hot_spot_grown;
      row.moved = replayed.moved;
      row.scan_shards = replayed.scan_shards;
      row.store_touches = whatif::store_touches(strategy);
      if (!figures.top.empty())
        row.floor = std::max(1.0, figures.top.front().second * static_cast<double>(shards));
      if (strategy == Strategy::Range && figures.monotonic)
        row.excluded = fmt::format(
            "{} rises with time (r = {:.2f}): every new key would go to "
            "the last range's shard",
            figures.name, *figures.monotonicity);
      else if (figures.low_cardinality)
        row.excluded = fmt::format("only about {:.0f} distinct values of {} for {} shards",
                                   figures.distinct, figures.name, shards);
      else if (!space.real_keys)
        row.excluded =
            "a regular expression cannot be a shard key: name it as a field of the "
            "namespace's match: pattern to apply this";
      report.whatifs.push_back(std::move(row));
    }
  }

  // Warnings.
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
          figures.name, figures.distinct, shards));
    if (!figures.top.empty() && figures.top.front().second * static_cast<double>(shards) > 1.5)
      report.warnings.push_back(fmt::format(
          "{} value '{}' takes {:.1f}% of the accesses: no placement by this key gets the busiest "
          "shard below {:.2f}x the mean (a jumbo group; SANTRAL SALT spreads a hot counter)",
          figures.name, figures.top.front().first, figures.top.front().second * 100,
          figures.top.front().second * static_cast<double>(shards)));
  }
  if (report.sampled < 100)
    report.warnings.push_back(fmt::format(
        "only {} requests of the target were sampled: raise SECONDS or SAMPLE for firmer figures",
        report.sampled));
  for (const auto& missing : report.missing) report.warnings.push_back("not covered: " + missing);

  // The recommendation: the most even placement that is not excluded; among those within 10%
  // of it, the one whose SCAN visits fewest shards, reads fewest stores, keeps the current
  // placement, and moves fewest keys when the cluster grows.
  std::optional<std::size_t> best;
  double least = 0;
  for (std::size_t i = 0; i < report.whatifs.size(); ++i)
    if (report.whatifs[i].excluded.empty() && (!best || report.whatifs[i].hot_spot < least)) {
      best = i;
      least = report.whatifs[i].hot_spot;
    }
  if (best) {
    auto rank = [](const WhatIf& w) {
      return std::make_tuple(w.scan_shards, w.store_touches, !w.current, w.moved);
    };
    for (std::size_t i = 0; i < report.whatifs.size(); ++i) {
      const auto& w = report.whatifs[i];
      if (w.excluded.empty() && w.hot_spot <= least * 1.1 + 0.02 &&
          rank(w) < rank(report.whatifs[*best]))
        best = i;
    }
  }
  report.recommended = best;
  const WhatIf* now =
      report.whatifs.empty() || !report.whatifs.front().current ? nullptr : &report.whatifs.front();
  if (report.sampled == 0) {
    report.recommended.reset();
    report.recommendation = fmt::format(
        "Nothing to recommend: no request of {} was sampled in the window (the what-if's moved "
        "shares come from the keys drawn from the shards); analyze while it has traffic, or "
        "raise SECONDS or SAMPLE.",
        target.target);
  } else if (!best) {
    std::string why;
    for (const auto& w : report.whatifs)
      if (!w.excluded.empty() && why.find(w.excluded) == std::string::npos)
        why += (why.empty() ? "" : "; ") + w.excluded;
    report.recommendation = fmt::format(
        "No placement by these keys balances {}: {}. Choose a shard key with more distinct "
        "values that do not rise with time, or salt the hottest values (SANTRAL SALT).",
        target.target, why);
  } else {
    const auto& w = report.whatifs[*best];
    if (w.current) {
      report.recommendation = fmt::format(
          "Keep {} by {}: its hot-spot ratio is {:.2f} and no other placement of these keys is "
          "more than 10% more even; SCAN MATCH visits {} of {} shards.",
          config::strategy_name(w.table.strategy), w.key, w.hot_spot, w.scan_shards, shards);
    } else {
      std::string because;
      if (now != nullptr && !now->excluded.empty()) because = fmt::format(" ({})", now->excluded);
      report.recommendation = fmt::format(
          "Place {} by {} on {}: hot-spot ratio {:.2f}{}{}, SCAN MATCH {} visits {} of {} "
          "shards, and {:.1f}% of its keys move when a shard is added.",
          ns ? config.namespaces[*ns].name : target.target, w.strategy, w.key, w.hot_spot,
          now != nullptr ? fmt::format(" against {:.2f} now", now->hot_spot) : std::string(),
          because, report.scan_pattern.empty() ? "*" : report.scan_pattern, w.scan_shards, shards,
          w.moved * 100);
      if (ns) report.config_lines = namespace_yaml(w.table, config);
    }
  }
  return report;
}

}  // namespace santral::router

#include "config/namespace/namespace_yaml.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "config/namespace/key_pattern.h"
#include "config/namespace/range_table.h"
#include "config/tenant_limits_yaml.h"
#include "config/write_concern_yaml.h"

namespace santral::config {
namespace {

constexpr std::string_view kCommonKeys[] = {"name",      "match",         "shard_key",  "strategy",
                                            "read_from", "write_concern", "near_cache", "limits"};

// Which settings belong to which strategy; a setting of another strategy is an error that
// says whose it is.
struct StrategySettings {
  Strategy strategy;
  std::vector<std::string_view> keys;
};
const std::vector<StrategySettings>& strategy_settings() {
  static const std::vector<StrategySettings> settings = {
      {Strategy::Hashed, {"hash", "vnodes", "shards"}},
      {Strategy::Slots, {"slots"}},
      {Strategy::Range, {"ranges", "order"}},
      {Strategy::Directory, {"groups", "fallback"}},
      {Strategy::Zone, {"zones", "groups", "default_zone", "hash", "vnodes"}},
  };
  return settings;
}

std::optional<Strategy> strategy_named(std::string_view name) {
  for (const auto& s : strategy_settings())
    if (strategy_name(s.strategy) == name) return s.strategy;
  return std::nullopt;
}

// Reads one namespace entry; `key` is "namespaces[i]".
class NamespaceReader {
 public:
  NamespaceReader(const YamlFields& fields, const Config& config, const YAML::Node& item,
                  std::string key)
      : fields_(fields),
        errors_(fields.errors()),
        config_(config),
        item_(item),
        key_(std::move(key)) {}

  NamespaceConfig read();

 private:
  std::string at(std::string_view sub) const { return fmt::format("{}.{}", key_, sub); }
  void check_keys(Strategy strategy) const;
  std::size_t shard_named(const YAML::Node& node, const std::string& key) const;
  std::vector<std::size_t> shard_list(const YAML::Node& node, const std::string& key) const;
  void read_hashed(const YAML::Node& map, const std::string& prefix, HashedPlacement& out) const;
  void read_slots(const YAML::Node& node, const std::string& key,
                  std::vector<SlotRange>& out) const;
  void read_ranges(NamespaceConfig& ns) const;
  void read_directory(NamespaceConfig& ns) const;
  void read_zones(NamespaceConfig& ns) const;
  std::string require_string(const YAML::Node& node, const std::string& key) const;
  // YAML parsers here accept a repeated mapping key; a group listed twice would be placed by
  // whichever entry sorts first, so moving a group by adding a line would silently not move it.
  // `seen`: the groups read so far (a set: a directory may list 100,000 of them).
  void check_new_group(std::unordered_set<std::string>& seen, const YAML::Node& node,
                       const std::string& group) const;

  const YamlFields& fields_;
  const ConfigErrors& errors_;
  const Config& config_;
  const YAML::Node& item_;
  std::string key_;
  // Shard names to indexes, built at the first lookup (a directory names one per group).
  mutable std::unordered_map<std::string_view, std::size_t> shard_index_;
};

std::string NamespaceReader::require_string(const YAML::Node& node, const std::string& key) const {
  std::string text = fields_.string(node, key);
  if (text.empty()) errors_.at(node, key, "must not be empty");
  return text;
}

void NamespaceReader::check_new_group(std::unordered_set<std::string>& seen, const YAML::Node& node,
                                      const std::string& group) const {
  if (!seen.insert(group).second)
    errors_.at(node, at("groups." + group),
               "group '" + group + "' is listed twice: each group has one place");
}

void NamespaceReader::check_keys(Strategy strategy) const {
  for (const auto& entry : item_) {
    auto name = entry.first.as<std::string>();
    if (std::find(std::begin(kCommonKeys), std::end(kCommonKeys), name) != std::end(kCommonKeys))
      continue;
    const auto& own = strategy_settings()[static_cast<std::size_t>(strategy)].keys;
    if (std::find(own.begin(), own.end(), name) != own.end()) continue;
    std::string owners;
    for (const auto& s : strategy_settings())
      if (std::find(s.keys.begin(), s.keys.end(), name) != s.keys.end())
        owners += (owners.empty() ? "" : " or ") + std::string(strategy_name(s.strategy));
    if (!owners.empty())
      errors_.at(entry.first, at(name),
                 fmt::format("is a setting of the {} strategy, not of {}", owners,
                             strategy_name(strategy)));
    std::string allowed =
        "name, match, shard_key, strategy, read_from, write_concern, near_cache, limits";
    for (auto k : own) allowed += ", " + std::string(k);
    errors_.at(entry.first, at(name), "unknown key (expected one of: " + allowed + ")");
  }
}

std::size_t NamespaceReader::shard_named(const YAML::Node& node, const std::string& key) const {
  std::string name = fields_.string(node, key);
  if (shard_index_.empty())
    for (std::size_t i = 0; i < config_.shards.size(); ++i)
      shard_index_.emplace(config_.shards[i].name, i);  // the first of a repeated name
  if (auto it = shard_index_.find(name); it != shard_index_.end()) return it->second;
  std::string names;
  for (const auto& s : config_.shards) names += (names.empty() ? "" : ", ") + s.name;
  errors_.at(node, key, "unknown shard '" + name + "' (shards: " + names + ")");
}

std::vector<std::size_t> NamespaceReader::shard_list(const YAML::Node& node,
                                                     const std::string& key) const {
  if (!node.IsSequence() || node.size() == 0)
    errors_.at(node, key, "expected a non-empty list of shard names");
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string item_key = fmt::format("{}[{}]", key, i);
    auto shard = shard_named(node[i], item_key);
    if (std::find(out.begin(), out.end(), shard) != out.end())
      errors_.at(node[i], item_key, "shard '" + config_.shards[shard].name + "' is listed twice");
    out.push_back(shard);
  }
  return out;
}

void NamespaceReader::read_hashed(const YAML::Node& map, const std::string& prefix,
                                  HashedPlacement& out) const {
  if (map["hash"]) {
    out.hash = fields_.hash(map["hash"], prefix + ".hash");
    out.hash_name = map["hash"].Scalar();
  }
  if (map["vnodes"])
    out.vnodes =
        static_cast<std::uint32_t>(fields_.integer(map["vnodes"], prefix + ".vnodes", 1, 10000));
  if (map["shards"]) {
    out.shards = shard_list(map["shards"], prefix + ".shards");
  } else {
    for (std::size_t i = 0; i < config_.shards.size(); ++i) out.shards.push_back(i);
  }
}

void NamespaceReader::read_slots(const YAML::Node& node, const std::string& key,
                                 std::vector<SlotRange>& out) const {
  if (!node.IsSequence() || node.size() == 0)
    errors_.at(node, key,
               "expected a list of slot ranges like {shard: a, from: 0, to: 8191} covering 0 to "
               "16383");
  std::vector<std::pair<SlotRange, YAML::Node>> listed;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& entry = node[i];
    std::string entry_key = fmt::format("{}[{}]", key, i);
    static constexpr std::string_view kKeys[] = {"shard", "from", "to"};
    fields_.only_keys(entry, entry_key, kKeys);
    for (auto k : kKeys)
      if (!entry[std::string(k)])
        errors_.at(entry, fmt::format("{}.{}", entry_key, k),
                   "missing: every slot range needs shard, from and to");
    SlotRange r;
    r.shard = shard_named(entry["shard"], entry_key + ".shard");
    r.from = static_cast<std::uint32_t>(
        fields_.integer(entry["from"], entry_key + ".from", 0, kSlotCount - 1));
    r.to = static_cast<std::uint32_t>(
        fields_.integer(entry["to"], entry_key + ".to", 0, kSlotCount - 1));
    if (r.to < r.from)
      errors_.at(entry["to"], entry_key + ".to",
                 fmt::format("{} is below from ({}): a range runs from its first slot to its "
                             "last, both included",
                             r.to, r.from));
    listed.emplace_back(r, entry);
  }
  std::vector<std::size_t> order(listed.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return listed[a].first.from < listed[b].first.from; });
  std::uint32_t next = 0;  // the first slot not yet assigned
  for (auto i : order) {
    const auto& [r, entry] = listed[i];
    std::string entry_key = fmt::format("{}[{}]", key, i);
    if (r.from > next)
      errors_.at(entry["from"], entry_key + ".from",
                 fmt::format("slots {} to {} are assigned to no shard (a gap before this range)",
                             next, r.from - 1));
    if (r.from < next)
      errors_.at(entry["from"], entry_key + ".from",
                 fmt::format("slots {} to {} are already assigned by another range (an overlap)",
                             r.from, std::min(r.to, next - 1)));
    next = r.to + 1;
    out.push_back(r);
  }
  if (next < kSlotCount)
    errors_.at(node, key,
               fmt::format("slots {} to {} are assigned to no shard: the ranges must cover 0 to "
                           "16383",
                           next, kSlotCount - 1));
}

void NamespaceReader::read_ranges(NamespaceConfig& ns) const {
  if (item_["order"]) {
    std::string order = fields_.string(item_["order"], at("order"));
    if (order == "numeric")
      ns.order = RangeOrder::Numeric;
    else if (order != "lexical")
      errors_.at(item_["order"], at("order"), "expected lexical or numeric, got '" + order + "'");
  }
  const YAML::Node& node = item_["ranges"];
  if (!node) errors_.at(item_, at("ranges"), "missing: a range namespace needs its ranges");
  if (!node.IsSequence() || node.size() == 0)
    errors_.at(node, at("ranges"),
               "expected a non-empty list of ranges like {shard: a, from: \"m\", to: \"t\"}");
  bool numeric = ns.order == RangeOrder::Numeric;
  auto bound = [&](const YAML::Node& b, const std::string& k) {
    std::string text = fields_.string(b, k);
    if (numeric && !parse_int64(text))
      errors_.at(b, k, "expected a whole number (order: numeric), got '" + text + "'");
    return text;
  };
  auto less = [&](const std::string& a, const std::string& b) {
    return numeric ? *parse_int64(a) < *parse_int64(b) : a < b;
  };
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& entry = node[i];
    std::string k = fmt::format("{}.ranges[{}]", key_, i);
    static constexpr std::string_view kKeys[] = {"shard", "from", "to"};
    fields_.only_keys(entry, k, kKeys);
    if (!entry["shard"]) errors_.at(entry, k + ".shard", "missing: every range needs a shard");
    KeyRange r;
    r.shard = shard_named(entry["shard"], k + ".shard");
    if (entry["from"]) r.from = bound(entry["from"], k + ".from");
    if (entry["to"]) r.to = bound(entry["to"], k + ".to");
    if (!r.from && i > 0)
      errors_.at(entry, k + ".from", "only the first range may omit from (an open start)");
    if (!r.to && i + 1 < node.size())
      errors_.at(entry, k + ".to", "only the last range may omit to (an open end)");
    if (r.from && r.to && !less(*r.from, *r.to))
      errors_.at(entry["to"], k + ".to",
                 fmt::format("'{}' is not above from ('{}'): a range is [from, to), so it would "
                             "be empty",
                             *r.to, *r.from));
    if (i > 0) {
      const auto& prev = ns.ranges.back();
      if (less(*r.from, *prev.to))
        errors_.at(entry["from"], k + ".from",
                   fmt::format("'{}' is below the previous range's to ('{}'): ranges must be "
                               "sorted and must not overlap",
                               *r.from, *prev.to));
      if (less(*prev.to, *r.from))
        errors_.at(entry["from"], k + ".from",
                   fmt::format("leaves a gap [{}, {}) that no range holds: each range must start "
                               "where the previous one ends",
                               *prev.to, *r.from));
    }
    ns.ranges.push_back(std::move(r));
  }
}

void NamespaceReader::read_directory(NamespaceConfig& ns) const {
  const YAML::Node& groups = item_["groups"];
  if (!groups) errors_.at(item_, at("groups"), "missing: a directory namespace needs its groups");
  if (!groups.IsMap())
    errors_.at(groups, at("groups"),
               "expected a mapping of groups to shards, like {seller42: shard1}");
  std::unordered_set<std::string> seen;
  for (const auto& entry : groups) {
    std::string group = fields_.string(entry.first, at("groups"));
    check_new_group(seen, entry.first, group);
    ns.groups.emplace_back(group, shard_named(entry.second, at("groups." + group)));
  }
  ns.fallback = Strategy::Hashed;
  const YAML::Node& fallback = item_["fallback"];
  YAML::Node settings;
  std::string key = at("fallback");
  if (fallback && fallback.IsScalar()) {
    std::string name = fallback.Scalar();
    if (name == "slots")
      errors_.at(fallback, key,
                 "a slots fallback needs its slots: write fallback: {strategy: slots, slots: "
                 "[...]}");
    if (name != "hashed") errors_.at(fallback, key, "expected hashed or slots, got '" + name + "'");
  } else if (fallback) {
    static constexpr std::string_view kKeys[] = {"strategy", "hash", "vnodes", "shards", "slots"};
    fields_.only_keys(fallback, key, kKeys);
    if (!fallback["strategy"]) errors_.at(fallback, key + ".strategy", "missing: hashed or slots");
    std::string name = fields_.string(fallback["strategy"], key + ".strategy");
    if (name == "slots") {
      ns.fallback = Strategy::Slots;
      for (auto k : {"hash", "vnodes", "shards"})
        if (fallback[k])
          errors_.at(fallback[k], fmt::format("{}.{}", key, k),
                     "is a setting of a hashed fallback, not of slots");
      if (!fallback["slots"])
        errors_.at(fallback, key + ".slots", "missing: a slots fallback needs its slots");
      read_slots(fallback["slots"], key + ".slots", ns.slots);
      return;
    }
    if (name != "hashed")
      errors_.at(fallback["strategy"], key + ".strategy",
                 "expected hashed or slots, got '" + name + "'");
    if (fallback["slots"])
      errors_.at(fallback["slots"], key + ".slots",
                 "is a setting of a slots fallback, not of hashed");
    read_hashed(fallback, key, ns.hashed);
    return;
  }
  read_hashed(YAML::Node(YAML::NodeType::Map), key, ns.hashed);
}

void NamespaceReader::read_zones(NamespaceConfig& ns) const {
  read_hashed(item_, key_, ns.hashed);
  const YAML::Node& zones = item_["zones"];
  if (!zones) errors_.at(item_, at("zones"), "missing: a zone namespace needs its zones");
  if (!zones.IsMap() || zones.size() == 0)
    errors_.at(zones, at("zones"), "expected a mapping of zones to shard lists, like {eu: [a, b]}");
  for (const auto& entry : zones) {
    std::string name = fields_.string(entry.first, at("zones"));
    std::string k = at("zones." + name);
    for (const auto& z : ns.zones)
      if (z.name == name) errors_.at(entry.first, k, "zone '" + name + "' is listed twice");
    if (entry.second.IsSequence() && entry.second.size() == 0)
      errors_.at(entry.second, k, "zone '" + name + "' is empty: list at least one shard");
    ns.zones.push_back({name, shard_list(entry.second, k)});
  }
  auto zone_named = [&](const YAML::Node& node, const std::string& k) {
    std::string name = fields_.string(node, k);
    for (std::size_t z = 0; z < ns.zones.size(); ++z)
      if (ns.zones[z].name == name) return z;
    std::string names;
    for (const auto& z : ns.zones) names += (names.empty() ? "" : ", ") + z.name;
    errors_.at(node, k, "unknown zone '" + name + "' (zones: " + names + ")");
  };
  if (item_["groups"]) {
    const YAML::Node& groups = item_["groups"];
    if (!groups.IsMap())
      errors_.at(groups, at("groups"), "expected a mapping of groups to zones, like {tenantA: eu}");
    std::unordered_set<std::string> seen;
    for (const auto& entry : groups) {
      std::string group = fields_.string(entry.first, at("groups"));
      check_new_group(seen, entry.first, group);
      ns.groups.emplace_back(group, zone_named(entry.second, at("groups." + group)));
    }
  }
  if (!item_["default_zone"])
    errors_.at(item_, at("default_zone"),
               "missing: the zone of groups that are not listed (one of the zones)");
  ns.default_zone = zone_named(item_["default_zone"], at("default_zone"));
}

NamespaceConfig NamespaceReader::read() {
  if (!item_.IsMap())
    errors_.at(item_, key_, "expected a namespace: name, match, strategy and its settings");
  NamespaceConfig ns;
  if (!item_["name"]) errors_.at(item_, at("name"), "missing: every namespace needs a name");
  ns.name = require_string(item_["name"], at("name"));
  if (!item_["match"])
    errors_.at(item_, at("match"), "missing: the key pattern, like \"order:{customer}:{id}\"");
  ns.match = require_string(item_["match"], at("match"));
  std::string problem;
  auto pattern = KeyPattern::compile(ns.match, problem);
  if (!pattern) errors_.at(item_["match"], at("match"), problem);
  if (item_["shard_key"]) {
    ns.shard_key = require_string(item_["shard_key"], at("shard_key"));
    if (pattern->field_index(ns.shard_key) < 0) {
      std::string names;
      for (const auto& s : pattern->segments())
        if (s.field) names += (names.empty() ? "" : ", ") + s.text;
      errors_.at(item_["shard_key"], at("shard_key"),
                 fmt::format("names no field of match '{}' (its fields: {})", ns.match,
                             names.empty() ? "none" : names));
    }
  } else {
    // By default the first field is the shard key: "order:{customer}:{id}" places by customer.
    // A pattern without fields places by the whole key.
    for (const auto& s : pattern->segments())
      if (s.field && ns.shard_key.empty()) ns.shard_key = s.text;
  }
  if (item_["read_from"]) ns.read_from = fields_.read_from(item_["read_from"], at("read_from"));
  if (item_["write_concern"]) {
    ns.write_concern.emplace();
    read_write_concern(item_["write_concern"], fields_, at("write_concern"), *ns.write_concern);
  }
  if (item_["near_cache"]) ns.near_cache = fields_.boolean(item_["near_cache"], at("near_cache"));
  if (item_["limits"]) {
    ns.limits = read_tenant_limits(item_["limits"], fields_, at("limits"));
    for (std::string_view per_user : {"max_connections", "max_pipeline", "wait_ms"})
      if (item_["limits"].IsMap() && item_["limits"][std::string(per_user)])
        errors_.at(item_["limits"][std::string(per_user)],
                   at("limits") + "." + std::string(per_user),
                   "a namespace's limits are requests_per_s and burst; connections, "
                   "pipelines and waiting are a user's (users[].limits)");
  }
  if (!item_["strategy"])
    errors_.at(item_, at("strategy"), "missing: one of hashed, slots, range, directory, zone");
  std::string strategy = fields_.string(item_["strategy"], at("strategy"));
  auto parsed = strategy_named(strategy);
  if (!parsed)
    errors_.at(item_["strategy"], at("strategy"),
               "unknown strategy '" + strategy +
                   "' (expected one of: hashed, slots, range, directory, zone)");
  ns.strategy = *parsed;
  check_keys(ns.strategy);
  switch (ns.strategy) {
    case Strategy::Hashed:
      read_hashed(item_, key_, ns.hashed);
      break;
    case Strategy::Slots:
      if (!item_["slots"])
        errors_.at(item_, at("slots"), "missing: a slots namespace needs its slot ranges");
      read_slots(item_["slots"], at("slots"), ns.slots);
      break;
    case Strategy::Range:
      read_ranges(ns);
      break;
    case Strategy::Directory:
      read_directory(ns);
      break;
    case Strategy::Zone:
      read_zones(ns);
      break;
  }
  return ns;
}

// A filler byte that appears in no pattern's literal text, for sample keys.
char filler_for(const std::vector<NamespaceConfig>& namespaces) {
  std::set<unsigned char> used;
  for (const auto& ns : namespaces)
    for (unsigned char c : ns.match) used.insert(c);
  for (unsigned c = 1; c < 256; ++c)
    if (!used.contains(static_cast<unsigned char>(c))) return static_cast<char>(c);
  return '\x01';
}

// Every key of `later`'s pattern also matches `earlier` when `earlier` matches the key built
// from `later` with each field replaced by a byte that is in no literal: that byte can only be
// covered by a field of `earlier`, and a field takes any text, so every real key of `later`
// matches `earlier` the same way. Only a namespace that keeps every key it matches can hide
// another: a range table that does not cover every shard key passes the rest on.
void check_reachable(const std::vector<NamespaceConfig>& namespaces,
                     const std::vector<YAML::Node>& nodes, const ConfigErrors& errors) {
  char filler = filler_for(namespaces);
  std::string problem;
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    auto later = KeyPattern::compile(namespaces[i].match, problem).value();
    for (std::size_t j = 0; j < i; ++j) {
      const auto& e = namespaces[j];
      bool total = e.strategy != Strategy::Range || (e.order == RangeOrder::Lexical &&
                                                     !e.ranges.front().from && !e.ranges.back().to);
      auto earlier = KeyPattern::compile(e.match, problem).value();
      if (!total || !earlier.match(later.sample_key(filler))) continue;
      std::string why =
          e.match == namespaces[i].match
              ? fmt::format("the same pattern as namespaces[{}] ({})", j, e.name)
              : fmt::format(
                    "namespaces[{}] ({}, match '{}') comes first and matches every key "
                    "this pattern matches",
                    j, e.name, e.match);
      errors.at(nodes[i]["match"], fmt::format("namespaces[{}].match", i),
                "can never be reached: " + why);
    }
  }
}

}  // namespace

void read_namespaces(const YAML::Node& node, const YamlFields& fields, Config& config) {
  if (!node.IsSequence())
    fields.errors().at(node, "namespaces",
                       "expected a list of namespaces, each with a name, match and strategy");
  std::vector<YAML::Node> nodes;
  std::map<std::string, std::size_t> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string key = fmt::format("namespaces[{}]", i);
    const YAML::Node& item = node[i];
    NamespaceConfig ns = NamespaceReader(fields, config, item, key).read();
    if (auto [it, fresh] = names.emplace(ns.name, i); !fresh)
      fields.errors().at(item["name"], key + ".name",
                         fmt::format("namespace name '{}' is already used by namespaces[{}]",
                                     ns.name, it->second));
    config.namespaces.push_back(std::move(ns));
    nodes.push_back(item);
  }
  check_reachable(config.namespaces, nodes, fields.errors());
}

}  // namespace santral::config

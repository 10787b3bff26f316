#include "config/namespace/table_yaml.h"

#include <optional>
#include <type_traits>

#include <yaml-cpp/yaml.h>

namespace santral::config {

namespace {

// Every key a strategy's table may use (namespace_yaml.cpp): what another strategy does not
// use is removed when the placement changes.
constexpr const char* kTableKeys[] = {"hash",  "vnodes", "shards",   "slots",        "ranges",
                                      "order", "groups", "fallback", "default_zone", "zones"};

YAML::Node shard_names(const std::vector<std::size_t>& shards, const Config& config) {
  YAML::Node names(YAML::NodeType::Sequence);
  names.SetStyle(YAML::EmitterStyle::Flow);
  for (auto s : shards) names.push_back(config.shards.at(s).name);
  return names;
}

// A flow map {shard: name, from: .., to: ..}: a range or a slot range.
template <typename Bound>
YAML::Node span_item(std::size_t shard, const Bound& from, const Bound& to, const Config& config) {
  YAML::Node item(YAML::NodeType::Map);
  item.SetStyle(YAML::EmitterStyle::Flow);
  item["shard"] = config.shards.at(shard).name;
  auto put = [&item](const char* key, const auto& bound) {
    if constexpr (std::is_same_v<Bound, std::optional<std::string>>) {
      if (bound) item[key] = *bound;
    } else {
      item[key] = bound;
    }
  };
  put("from", from);
  put("to", to);
  return item;
}

void write_table(YAML::Node entry, const NamespaceConfig& table, const Config& config) {
  YAML::Node list(YAML::NodeType::Sequence);
  switch (table.strategy) {
    case Strategy::Directory:
    case Strategy::Zone: {
      YAML::Node groups(YAML::NodeType::Map);
      for (const auto& [group, shard] : table.groups)
        groups[group] = table.strategy == Strategy::Directory ? config.shards.at(shard).name
                                                              : table.zones.at(shard).name;
      entry["groups"] = groups;
      break;
    }
    case Strategy::Range:
      for (const auto& r : table.ranges) list.push_back(span_item(r.shard, r.from, r.to, config));
      entry["ranges"] = list;
      break;
    case Strategy::Slots:
      for (const auto& r : table.slots) list.push_back(span_item(r.shard, r.from, r.to, config));
      entry["slots"] = list;
      break;
    case Strategy::Hashed:
      break;
  }
}

void write_placement(YAML::Node entry, const NamespaceConfig& table, const Config& config) {
  for (const char* key : kTableKeys) entry.remove(key);
  entry["shard_key"] = table.shard_key;
  entry["strategy"] = std::string(strategy_name(table.strategy));
  switch (table.strategy) {
    case Strategy::Directory: {
      YAML::Node fallback(YAML::NodeType::Map);
      fallback.SetStyle(YAML::EmitterStyle::Flow);
      fallback["strategy"] = std::string(strategy_name(table.fallback));
      fallback["shards"] = shard_names(table.hashed.shards, config);
      entry["fallback"] = fallback;
      break;
    }
    case Strategy::Range:
      entry["order"] = table.order == RangeOrder::Numeric ? "numeric" : "lexical";
      break;
    case Strategy::Hashed:
      entry["hash"] = table.hashed.hash_name;
      entry["vnodes"] = table.hashed.vnodes;
      entry["shards"] = shard_names(table.hashed.shards, config);
      break;
    case Strategy::Slots:
    case Strategy::Zone:
      break;
  }
  write_table(entry, table, config);
}

std::string emitted(const YAML::Node& root) {
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

std::string with_tables(std::string_view text, const Config& config,
                        std::span<const NamespaceConfig> tables, TableScope scope) {
  YAML::Node root = YAML::Load(std::string(text));
  YAML::Node namespaces = root["namespaces"];
  if (!namespaces || !namespaces.IsSequence()) return {};
  bool found = false;
  for (const auto& table : tables)
    for (std::size_t i = 0; i < namespaces.size(); ++i) {
      YAML::Node entry = namespaces[i];
      if (!entry["name"] || entry["name"].as<std::string>() != table.name) continue;
      found = true;
      if (scope == TableScope::Placement)
        write_placement(entry, table, config);
      else
        write_table(entry, table, config);
    }
  return found ? emitted(root) : std::string();
}

std::string namespace_entry_yaml(const NamespaceConfig& table, const Config& config) {
  YAML::Node entry(YAML::NodeType::Map);
  entry["name"] = table.name;
  entry["match"] = table.match;
  write_placement(entry, table, config);
  YAML::Node list(YAML::NodeType::Sequence);
  list.push_back(entry);
  YAML::Node root(YAML::NodeType::Map);
  root["namespaces"] = list;
  return emitted(root);
}

}  // namespace santral::config

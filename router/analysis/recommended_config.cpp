#include "router/analysis/recommended_config.h"

#include <yaml-cpp/yaml.h>

namespace santral::router {

namespace {

// Every key a strategy's table may use (config/namespace/namespace_yaml.cpp): what a new
// strategy does not use is removed.
constexpr const char* kTableKeys[] = {"hash",  "vnodes", "shards",   "slots",        "ranges",
                                      "order", "groups", "fallback", "default_zone", "zones"};

void write_table(YAML::Node entry, const config::NamespaceConfig& table,
                 const config::Config& config) {
  auto shard_name = [&](std::size_t s) { return config.shards.at(s).name; };
  for (const char* key : kTableKeys) entry.remove(key);
  entry["shard_key"] = table.shard_key;
  entry["strategy"] = std::string(config::strategy_name(table.strategy));
  YAML::Node list(YAML::NodeType::Sequence);
  switch (table.strategy) {
    case config::Strategy::Directory: {
      YAML::Node groups(YAML::NodeType::Map);
      for (const auto& [group, shard] : table.groups) groups[group] = shard_name(shard);
      entry["groups"] = groups;
      YAML::Node fallback(YAML::NodeType::Map);
      fallback.SetStyle(YAML::EmitterStyle::Flow);
      fallback["strategy"] = std::string(config::strategy_name(table.fallback));
      YAML::Node names(YAML::NodeType::Sequence);
      for (auto s : table.hashed.shards) names.push_back(shard_name(s));
      fallback["shards"] = names;
      entry["fallback"] = fallback;
      break;
    }
    case config::Strategy::Range:
      entry["order"] = table.order == config::RangeOrder::Numeric ? "numeric" : "lexical";
      for (const auto& r : table.ranges) {
        YAML::Node item(YAML::NodeType::Map);
        item.SetStyle(YAML::EmitterStyle::Flow);
        item["shard"] = shard_name(r.shard);
        if (r.from) item["from"] = *r.from;
        if (r.to) item["to"] = *r.to;
        list.push_back(item);
      }
      entry["ranges"] = list;
      break;
    case config::Strategy::Slots:
      for (const auto& r : table.slots) {
        YAML::Node item(YAML::NodeType::Map);
        item.SetStyle(YAML::EmitterStyle::Flow);
        item["shard"] = shard_name(r.shard);
        item["from"] = r.from;
        item["to"] = r.to;
        list.push_back(item);
      }
      entry["slots"] = list;
      break;
    case config::Strategy::Hashed:
    case config::Strategy::Zone: {
      YAML::Node names(YAML::NodeType::Sequence);
      names.SetStyle(YAML::EmitterStyle::Flow);
      for (auto s : table.hashed.shards) names.push_back(shard_name(s));
      entry["hash"] = table.hashed.hash_name;
      entry["vnodes"] = table.hashed.vnodes;
      entry["shards"] = names;
      break;
    }
  }
}

}  // namespace

std::string namespace_yaml(const config::NamespaceConfig& table, const config::Config& config) {
  YAML::Node entry(YAML::NodeType::Map);
  entry["name"] = table.name;
  entry["match"] = table.match;
  write_table(entry, table, config);
  YAML::Node list(YAML::NodeType::Sequence);
  list.push_back(entry);
  YAML::Node root(YAML::NodeType::Map);
  root["namespaces"] = list;
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::string recommended_config_text(std::string_view text, const config::NamespaceConfig& table,
                                    const config::Config& config) {
  YAML::Node root = YAML::Load(std::string(text));
  YAML::Node namespaces = root["namespaces"];
  if (!namespaces || !namespaces.IsSequence()) return {};
  bool found = false;
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    YAML::Node entry = namespaces[i];
    if (!entry["name"] || entry["name"].as<std::string>() != table.name) continue;
    write_table(entry, table, config);
    found = true;
  }
  if (!found) return {};
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace santral::router

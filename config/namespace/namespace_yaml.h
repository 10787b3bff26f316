#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads and validates `namespaces:` (config.shards must be read first): patterns, shard keys,
// strategies and their tables, and that every namespace can be reached.
void read_namespaces(const YAML::Node& node, const YamlFields& fields, Config& config);

}  // namespace santral::config

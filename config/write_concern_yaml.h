#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `write_concern:` (replicas, timeout_ms); `key` is where it is written.
void read_write_concern(const YAML::Node& node, const YamlFields& fields, const std::string& key,
                        WriteConcern& out);

}  // namespace santral::config

#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `write_concern:` (replicas, timeout_ms).
void read_write_concern(const YAML::Node& node, const YamlFields& fields, WriteConcern& out);

}  // namespace santral::config

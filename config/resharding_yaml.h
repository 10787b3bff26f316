#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `resharding:` (auto_approve, max_keys_per_sec, max_bytes_per_sec, batch_keys,
// migrate_timeout_ms, state_file).
void read_resharding(const YAML::Node& node, const YamlFields& fields, ReshardingSettings& out);

}  // namespace santral::config

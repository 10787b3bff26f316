#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `sentinel:` (addresses, username, password).
void read_sentinel(const YAML::Node& node, const YamlFields& fields, SentinelSettings& out);
// Reads `failover:` (wait_ms, on_lost_writes).
void read_failover(const YAML::Node& node, const YamlFields& fields, FailoverSettings& out);

}  // namespace santral::config

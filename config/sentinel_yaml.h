#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `sentinel:` (addresses, username, password).
void read_sentinel(const YAML::Node& node, const YamlFields& fields, SentinelSettings& out);

}  // namespace santral::config

#pragma once

#include <yaml-cpp/yaml.h>

#include "config/slowlog_config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `slowlog:` (threshold_us, max_len).
void read_slowlog(const YAML::Node& node, const YamlFields& fields, SlowLogSettings& out);

}  // namespace santral::config

#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `near_cache:` (enabled, max_bytes, min_reads_per_sec).
void read_near_cache(const YAML::Node& node, const YamlFields& fields, NearCacheSettings& out);

// After the whole file is read: a near cache turned on anywhere needs hot-key detection,
// which decides what it admits.
void check_near_cache(const YAML::Node& root, const Config& config, const ConfigErrors& errors);

}  // namespace santral::config

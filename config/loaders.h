#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/config_error.h"

namespace santral::config {

// Santral's own format (config/examples/*.yaml).
Config read_santral_yaml(const YAML::Node& root, const ConfigErrors& errors);

// twemproxy's nutcracker.yml: a mapping of pool names to pools. `pool` picks one when the file
// has several.
Config read_twemproxy_yaml(const YAML::Node& root, const ConfigErrors& errors,
                           const std::string& pool);

// A twemproxy file is a mapping whose values are mappings with a `servers:` list.
bool looks_like_twemproxy(const YAML::Node& root);

}  // namespace santral::config

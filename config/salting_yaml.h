#pragma once

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `hotkeys:` (detection settings).
void read_hotkeys(const YAML::Node& node, const YamlFields& fields, HotKeySettings& out);
// Reads `salting:`, a list of salted counters: each with `key:` or `match:`, `salts:` and
// optionally `reply: estimate|exact`.
void read_salting(const YAML::Node& node, const YamlFields& fields, Config& config);

}  // namespace santral::config

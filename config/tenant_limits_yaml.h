#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "config/tenant_limits.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads a user's `limits:` (requests_per_s, burst, max_connections, max_pipeline); `key` names
// it in errors ("users[1].limits").
TenantLimits read_tenant_limits(const YAML::Node& node, const YamlFields& fields,
                                const std::string& key);

}  // namespace santral::config

#pragma once

#include <yaml-cpp/yaml.h>

#include "config/audit_config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `audit:` (path, max_bytes, max_files).
void read_audit(const YAML::Node& node, const YamlFields& fields, AuditSettings& out);

}  // namespace santral::config

#pragma once

#include <yaml-cpp/yaml.h>

#include "config/cluster_config.h"
#include "config/yaml_fields.h"

namespace santral::config {

// Reads `cluster:` (etcd, name, router, lease_ttl_s, poll_ms, start_timeout_ms).
void read_cluster(const YAML::Node& node, const YamlFields& fields, ClusterSettings& out);

}  // namespace santral::config

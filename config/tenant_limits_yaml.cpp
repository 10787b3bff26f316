#include "config/tenant_limits_yaml.h"

namespace santral::config {

namespace {

constexpr std::int64_t kMost = 100'000'000;

std::uint32_t count(const YAML::Node& node, const YamlFields& fields, const std::string& key) {
  return static_cast<std::uint32_t>(fields.integer(node, key, 0, kMost));
}

}  // namespace

TenantLimits read_tenant_limits(const YAML::Node& node, const YamlFields& fields,
                                const std::string& key) {
  static constexpr std::string_view kKeys[] = {"requests_per_s", "burst", "max_connections",
                                               "max_pipeline", "wait_ms"};
  TenantLimits limits;
  if (!node.IsMap()) {
    fields.errors().at(node, key,
                       "expected a map: {requests_per_s: <n>, burst: <n>, max_connections: <n>, "
                       "max_pipeline: <n>, wait_ms: <ms>} (0 or left out: no limit)");
    return limits;
  }
  fields.only_keys(node, key, kKeys);
  if (node["requests_per_s"])
    limits.requests_per_s = count(node["requests_per_s"], fields, key + ".requests_per_s");
  if (node["burst"]) {
    limits.burst = count(node["burst"], fields, key + ".burst");
    if (limits.requests_per_s == 0)
      fields.errors().at(node["burst"], key + ".burst",
                         "a burst needs requests_per_s: it is how many requests may be saved up");
  }
  if (limits.burst == 0) limits.burst = limits.requests_per_s;
  if (node["max_connections"])
    limits.max_connections = count(node["max_connections"], fields, key + ".max_connections");
  if (node["max_pipeline"])
    limits.max_pipeline = count(node["max_pipeline"], fields, key + ".max_pipeline");
  if (node["wait_ms"]) {
    limits.wait_ms = count(node["wait_ms"], fields, key + ".wait_ms");
    if (limits.requests_per_s == 0)
      fields.errors().at(node["wait_ms"], key + ".wait_ms",
                         "wait_ms needs requests_per_s: it is how long a request may wait for "
                         "a token");
  }
  return limits;
}

}  // namespace santral::config

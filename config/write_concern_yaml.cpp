#include "config/write_concern_yaml.h"

namespace santral::config {

void read_write_concern(const YAML::Node& node, const YamlFields& fields, const std::string& key,
                        WriteConcern& out) {
  static constexpr std::string_view kKeys[] = {"replicas", "timeout_ms"};
  if (!node.IsMap())
    fields.errors().at(node, key,
                       "expected a map with replicas (how many replicas must confirm a write; 0: "
                       "off) and timeout_ms (how long to wait for them)");
  fields.only_keys(node, key, kKeys);
  if (node["replicas"])
    out.replicas =
        static_cast<std::uint32_t>(fields.integer(node["replicas"], key + ".replicas", 0, 1000));
  if (node["timeout_ms"]) {
    // WAIT's 0 waits for ever: a write concern always has a bound.
    out.timeout = std::chrono::milliseconds(
        fields.integer(node["timeout_ms"], key + ".timeout_ms", 1, 3'600'000));
  }
}

}  // namespace santral::config

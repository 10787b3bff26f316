#include "config/resharding_yaml.h"

namespace santral::config {

void read_resharding(const YAML::Node& node, const YamlFields& fields, ReshardingSettings& out) {
  static constexpr std::string_view kKeys[] = {
      "auto_approve", "max_keys_per_sec",   "max_bytes_per_sec", "batch_keys",
      "batch_bytes",  "migrate_timeout_ms", "state_file",        "hold_timeout_ms"};
  if (!node.IsMap())
    fields.errors().at(
        node, "resharding",
        "expected a map with auto_approve, max_keys_per_sec, max_bytes_per_sec, "
        "batch_keys, batch_bytes, migrate_timeout_ms, hold_timeout_ms and state_file");
  fields.only_keys(node, "resharding", kKeys);
  if (node["auto_approve"])
    out.auto_approve = fields.boolean(node["auto_approve"], "resharding.auto_approve");
  if (node["max_keys_per_sec"])
    out.max_keys_per_sec = static_cast<std::uint64_t>(
        fields.integer(node["max_keys_per_sec"], "resharding.max_keys_per_sec", 0, 100'000'000));
  if (node["max_bytes_per_sec"])
    out.max_bytes_per_sec = fields.bytes(node["max_bytes_per_sec"], "resharding.max_bytes_per_sec");
  if (node["batch_keys"])
    out.batch_keys = static_cast<std::uint32_t>(
        fields.integer(node["batch_keys"], "resharding.batch_keys", 1, 10'000));
  if (node["batch_bytes"])
    out.batch_bytes = fields.bytes(node["batch_bytes"], "resharding.batch_bytes");
  if (node["hold_timeout_ms"])
    out.hold_timeout = fields.millis(node["hold_timeout_ms"], "resharding.hold_timeout_ms");
  if (node["migrate_timeout_ms"])
    out.migrate_timeout =
        fields.millis(node["migrate_timeout_ms"], "resharding.migrate_timeout_ms");
  if (node["state_file"])
    out.state_file = fields.string(node["state_file"], "resharding.state_file");
}

}  // namespace santral::config

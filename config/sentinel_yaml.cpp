#include "config/sentinel_yaml.h"

#include <fmt/format.h>

namespace santral::config {

void read_sentinel(const YAML::Node& node, const YamlFields& fields, SentinelSettings& out) {
  static constexpr std::string_view kKeys[] = {"addresses", "username", "password"};
  if (!node.IsMap() || !node["addresses"] || !node["addresses"].IsSequence() ||
      node["addresses"].size() == 0)
    fields.errors().at(node, "sentinel",
                       "expected a map with addresses (the sentinels, host:port each) and, "
                       "when they require AUTH, username and password");
  fields.only_keys(node, "sentinel", kKeys);
  out.line = node.Mark().line + 1;
  const auto& addresses = node["addresses"];
  for (std::size_t i = 0; i < addresses.size(); ++i)
    out.addresses.push_back(
        fields.endpoint(addresses[i], fmt::format("sentinel.addresses[{}]", i)));
  if (node["username"]) out.username = fields.string(node["username"], "sentinel.username");
  if (node["password"]) out.password = fields.string(node["password"], "sentinel.password");
}

void read_failover(const YAML::Node& node, const YamlFields& fields, FailoverSettings& out) {
  static constexpr std::string_view kKeys[] = {"wait_ms", "on_lost_writes"};
  if (!node.IsMap())
    fields.errors().at(node, "failover",
                       "expected a map with wait_ms (how long a request for a shard whose "
                       "primary is down waits for Sentinel's new one; 0: it fails at once) and "
                       "on_lost_writes (refuse or accept)");
  fields.only_keys(node, "failover", kKeys);
  if (node["wait_ms"])
    out.wait =
        std::chrono::milliseconds(fields.integer(node["wait_ms"], "failover.wait_ms", 0, 600'000));
  if (node["on_lost_writes"]) {
    std::string policy = fields.string(node["on_lost_writes"], "failover.on_lost_writes");
    if (policy != "refuse" && policy != "accept")
      fields.errors().at(node["on_lost_writes"], "failover.on_lost_writes",
                         "expected refuse (writes to a shard whose new primary lacks acknowledged "
                         "writes are refused until SANTRAL FAILOVER ACCEPT <shard>; the default "
                         "with write_concern) or accept (they go on, and the loss is only "
                         "reported; the default without)");
    out.on_lost_writes = policy == "refuse" ? LostWritesPolicy::Refuse : LostWritesPolicy::Accept;
  }
}

}  // namespace santral::config

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

}  // namespace santral::config

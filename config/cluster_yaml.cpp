#include "config/cluster_yaml.h"

#include <fmt/format.h>

namespace santral::config {

void read_cluster(const YAML::Node& node, const YamlFields& fields, ClusterSettings& out) {
  static constexpr std::string_view kKeys[] = {"etcd",
                                               "name",
                                               "router",
                                               "lease_ttl_s",
                                               "poll_ms",
                                               "start_timeout_ms",
                                               "serve_when_etcd_down",
                                               "fence"};
  if (!node.IsMap())
    fields.errors().at(node, "cluster",
                       "expected a map with etcd (the members, host:port) and name (the fleet's)");
  fields.only_keys(node, "cluster", kKeys);
  const auto& members = node["etcd"];
  if (!members || !members.IsSequence() || members.size() == 0)
    fields.errors().at(members ? members : node, "cluster.etcd",
                       "expected a list of etcd members' client addresses, e.g. [127.0.0.1:2379]");
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::string key = fmt::format("cluster.etcd[{}]", i);
    out.etcd.push_back(fields.endpoint(members[i], key).text());
  }
  if (!node["name"])
    fields.errors().at(node, "cluster.name",
                       "missing: name the fleet (its map lives in etcd under /santral/<name>/)");
  out.name = fields.string(node["name"], "cluster.name");
  if (out.name.empty() || out.name.find('/') != std::string::npos)
    fields.errors().at(node["name"], "cluster.name", "expected a non-empty name without '/'");
  if (node["router"]) out.router = fields.string(node["router"], "cluster.router");
  if (node["lease_ttl_s"])
    out.lease_ttl =
        std::chrono::seconds(fields.integer(node["lease_ttl_s"], "cluster.lease_ttl_s", 2, 3600));
  if (node["poll_ms"]) {
    out.poll = fields.millis(node["poll_ms"], "cluster.poll_ms");
    if (out.poll.count() < 10 || out.poll.count() > 10000)
      fields.errors().at(node["poll_ms"], "cluster.poll_ms", "expected 10 to 10000");
  }
  if (node["start_timeout_ms"])
    out.start_timeout = fields.millis(node["start_timeout_ms"], "cluster.start_timeout_ms");
  if (node["serve_when_etcd_down"])
    out.serve_when_etcd_down =
        fields.boolean(node["serve_when_etcd_down"], "cluster.serve_when_etcd_down");
  if (const auto& fence = node["fence"]) {
    std::string text = fields.string(fence, "cluster.fence");
    if (text == "acl")
      out.fence = ClusterSettings::Fence::Acl;
    else if (text != "lease")
      fields.errors().at(fence, "cluster.fence",
                         "expected lease (routers stop themselves at 2/3 of their lease) or acl "
                         "(and the shards shut out a router the fleet went on without)");
  }
}

}  // namespace santral::config

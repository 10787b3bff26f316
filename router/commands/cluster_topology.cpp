#include "router/commands/cluster_topology.h"

#include <algorithm>

#include "placement/namespace/key_slot.h"
#include "router/routes/script_cache.h"

namespace santral::router {

std::vector<ClusterNode> cluster_nodes(std::vector<RouterRecord> routers,
                                       const RouterRecord& self) {
  auto listed = [&](const RouterRecord& r) { return r.name == self.name; };
  if (std::none_of(routers.begin(), routers.end(), listed)) routers.push_back(self);
  std::sort(routers.begin(), routers.end(),
            [](const RouterRecord& a, const RouterRecord& b) { return a.name < b.name; });
  routers.erase(std::unique(routers.begin(), routers.end(),
                            [](const auto& a, const auto& b) { return a.name == b.name; }),
                routers.end());
  std::vector<ClusterNode> nodes;
  const std::size_t count = routers.size();
  for (std::size_t i = 0; i < count; ++i) {
    const RouterRecord& router = routers[i];
    ClusterNode node;
    node.name = router.name;
    node.id = ScriptCache::sha1_hex(router.name);
    node.shard_id = ScriptCache::sha1_hex("shard " + router.name);
    config::Endpoint address;
    std::string shown = router.announce.empty() ? router.listen : router.announce;
    if (!config::parse_endpoint(shown, address)) address = {shown, 0};
    node.host = address.host;
    node.port = address.port;
    node.myself = router.name == self.name;
    node.first_slot = static_cast<std::uint32_t>(i * kClusterSlots / count);
    node.last_slot = static_cast<std::uint32_t>((i + 1) * kClusterSlots / count - 1);
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::uint32_t cluster_key_slot(std::string_view key) {
  auto open = key.find('{');
  if (open != std::string_view::npos) {
    auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1)
      return placement::key_slot(key.substr(open + 1, close - open - 1));
  }
  return placement::key_slot(key);
}

}  // namespace santral::router

#include "router/admin/placement_view.h"

#include <span>

namespace santral::router {

using nlohmann::json;

namespace {

// The ring's points merged into runs of one shard: [[end, shard], ...] in ring order.
template <typename Point, typename ShardOf>
json ring_json(std::span<const Point> points, ShardOf shard_of) {
  json arcs = json::array();
  for (const auto& point : points) {
    std::uint32_t shard = shard_of(point);
    if (!arcs.empty() && arcs.back()[1] == shard)
      arcs.back()[0] = point.value;
    else
      arcs.push_back({point.value, shard});
  }
  return {{"points", points.size()}, {"arcs", arcs}};
}

json ring_json(const placement::HashRing* ring) {
  if (ring == nullptr) return nullptr;
  return ring_json(ring->points(), [](const placement::HashRing::Point& p) { return p.shard; });
}

json slot_ranges_json(const std::vector<config::SlotRange>& slots) {
  json out = json::array();
  for (const auto& r : slots) out.push_back({{"from", r.from}, {"to", r.to}, {"shard", r.shard}});
  return out;
}

json indices_json(const std::vector<std::size_t>& shards) {
  json out = json::array();
  for (auto s : shards) out.push_back(s);
  return out;
}

json default_json(const config::Config& config, const placement::ShardMap& map) {
  json out = {{"distribution", config::distribution_name(config.distribution)},
              {"hash", config.hash_name}};
  if (const auto* ketama = map.ketama())
    out["ring"] =
        ring_json(ketama->points(), [](const hashkit::KetamaRing::Point& p) { return p.node; });
  if (const auto* modula = map.modula()) {
    json slots = json::array();
    for (auto node : modula->slots()) slots.push_back(node);
    out["modula_slots"] = slots;
  }
  return out;
}

json namespace_json(const config::NamespaceConfig& c, const placement::Namespace& ns) {
  json out = {{"name", c.name},
              {"match", c.match},
              {"shard_key", c.shard_key},
              {"strategy", config::strategy_name(c.strategy)},
              {"shards", indices_json(ns.shards())}};
  auto hashed = [&] {
    out["hash"] = c.hashed.hash_name;
    out["vnodes"] = c.hashed.vnodes;
  };
  switch (c.strategy) {
    case config::Strategy::Hashed:
      hashed();
      out["ring"] = ring_json(ns.ring());
      break;
    case config::Strategy::Slots:
      out["slot_ranges"] = slot_ranges_json(c.slots);
      break;
    case config::Strategy::Range: {
      json ranges = json::array();
      for (const auto& r : c.ranges)
        ranges.push_back({{"from", r.from ? json(*r.from) : json(nullptr)},
                          {"to", r.to ? json(*r.to) : json(nullptr)},
                          {"shard", r.shard}});
      out["order"] = c.order == config::RangeOrder::Numeric ? "numeric" : "lexical";
      out["ranges"] = ranges;
      break;
    }
    case config::Strategy::Directory: {
      json groups = json::array();
      for (const auto& [group, shard] : c.groups)
        groups.push_back({{"group", group}, {"shard", shard}});
      out["groups"] = groups;
      out["fallback"] = config::strategy_name(c.fallback);
      if (c.fallback == config::Strategy::Slots) {
        out["slot_ranges"] = slot_ranges_json(c.slots);
      } else {
        hashed();
        out["ring"] = ring_json(ns.ring());
      }
      break;
    }
    case config::Strategy::Zone: {
      hashed();
      json zones = json::array();
      for (std::size_t z = 0; z < c.zones.size(); ++z)
        zones.push_back({{"name", c.zones[z].name},
                         {"shards", indices_json(c.zones[z].shards)},
                         {"ring", ring_json(ns.zone_ring(z))}});
      json groups = json::array();
      for (const auto& [group, zone] : c.groups)
        groups.push_back({{"group", group}, {"zone", c.zones[zone].name}});
      out["zones"] = zones;
      out["groups"] = groups;
      out["default_zone"] = c.zones.empty() ? "" : c.zones[c.default_zone].name;
      break;
    }
  }
  return out;
}

}  // namespace

json placement_json(const placement::Topology& topology) {
  const auto& config = *topology.config;
  const auto& map = *topology.map;
  json shards = json::array();
  for (const auto& shard : map.shards()) shards.push_back(shard.name);
  json namespaces = json::array();
  // The map builds one Namespace per config entry, in the same order.
  for (std::size_t i = 0; i < config.namespaces.size() && i < map.namespaces().size(); ++i)
    namespaces.push_back(namespace_json(config.namespaces[i], map.namespaces()[i]));
  return {{"config_version", topology.shown_version()},
          {"shards", shards},
          {"hash_tag", config.hash_tag},
          {"default", default_json(config, map)},
          {"namespaces", namespaces}};
}

}  // namespace santral::router

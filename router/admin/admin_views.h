#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "router/admin/cluster_snapshot.h"
#include "router/status/fleet_view.h"

namespace santral::router {

// The admin API's documents, built from one snapshot of every worker.
nlohmann::json stats_json(const ClusterSnapshot& snapshot);       // /stats
std::string prometheus_text(const ClusterSnapshot& snapshot);     // /metrics
nlohmann::json shards_json(const ClusterSnapshot& snapshot);      // /shards
nlohmann::json config_json(const placement::Topology& topology);  // /config
nlohmann::json routers_json(const FleetView& fleet);              // /routers

}  // namespace santral::router

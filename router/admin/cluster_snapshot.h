#pragma once

#include <functional>
#include <vector>

#include "placement/topology.h"
#include "router/backend/connection_pool.h"
#include "router/hotkeys/near_cache/near_cache.h"
#include "router/metrics/stats.h"
#include "router/runtime/shared_state.h"

namespace santral::router {

class ControlPlane;

// What one worker reports when asked: a copy of its counters and how it sees each shard.
struct WorkerSnapshot {
  WorkerStats stats;
  std::size_t clients = 0;
  std::vector<std::vector<ConnectionPool::ServerState>> servers;  // [shard][primary, replicas]
  NearCache::Counters near_cache;
};

// A user or a namespace with limits (router/runtime/tenant_limiter.h): what they are and what
// they refused.
struct LimitsReport {
  std::string name;
  config::TenantLimits limits;
  TenantLimiter::Counters counters;
};

// Every worker's report, taken on each worker's own thread and put together on the server's.
struct ClusterSnapshot {
  placement::TopologyPtr topology;
  std::vector<WorkerSnapshot> workers;
  WorkerStats total;  // the workers' stats merged
  double uptime_seconds = 0;
  std::uint64_t rejected_clients = 0;
  std::map<std::string, Failover> failovers;      // each shard's last, by name
  std::map<std::string, LostWrites> lost_writes;  // each shard's last that lost writes
  std::vector<LimitsReport> user_limits;
  std::vector<LimitsReport> namespace_limits;
};

// Asks every worker for its report; `done` runs on the server's thread.
void take_snapshot(ControlPlane& server, std::function<void(ClusterSnapshot)> done);

}  // namespace santral::router

#include "router/admin/cluster_snapshot.h"

#include "router/hotkeys/near_cache/near_cache.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/fan_out.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

namespace {

// On `worker`'s thread.
WorkerSnapshot report_of(WorkerServices& worker) {
  WorkerSnapshot report;
  report.stats = worker.stats();
  report.clients = worker.client_count();
  report.near_cache = worker.near_cache().counters();
  report.stats.connected_clients = report.clients;
  for (std::size_t s = 0; s < worker.shard_map().shard_count(); ++s)
    report.servers.push_back(worker.pool().servers(s));
  for (const auto& servers : report.servers)
    for (const auto& server_state : servers)
      report.stats.shards[server_state.name].in_flight += server_state.in_flight;
  return report;
}

}  // namespace

void take_snapshot(ControlPlane& server, std::function<void(ClusterSnapshot)> done) {
  ClusterSnapshot snapshot;
  snapshot.topology = server.topology();
  snapshot.uptime_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - server.shared().started)
          .count();
  snapshot.rejected_clients = server.shared().rejected_clients.load();
  for (const auto* limiter : server.shared().limiters.shown())
    snapshot.user_limits.push_back({limiter->name(), limiter->limits(), limiter->counters()});
  for (const auto* limiter : server.shared().limiters.shown_namespaces())
    snapshot.namespace_limits.push_back({limiter->name(), limiter->limits(), limiter->counters()});
  {
    std::lock_guard guard(server.shared().failover_lock);
    snapshot.failovers = server.shared().failovers;
    snapshot.lost_writes = server.shared().lost_writes;
  }
  fan_out<WorkerSnapshot, WorkerServices>(server.io(), server.worker_services(), report_of,
                                          [snapshot = std::move(snapshot), done = std::move(done)](
                                              std::vector<WorkerSnapshot> reports) mutable {
                                            for (const auto& report : reports)
                                              snapshot.total.merge(report.stats);
                                            snapshot.workers = std::move(reports);
                                            done(std::move(snapshot));
                                          });
}

}  // namespace santral::router

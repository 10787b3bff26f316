#include "router/process/cluster_snapshot.h"

#include <memory>

#include <boost/asio/post.hpp>

#include "router/hotkeys/near_cache/near_cache.h"
#include "router/process/server.h"

namespace santral::router {

void take_snapshot(Server& server, std::function<void(ClusterSnapshot)> done) {
  struct Pending {
    ClusterSnapshot snapshot;
    std::size_t left;
    std::function<void(ClusterSnapshot)> done;
  };
  const auto& workers = server.workers();
  auto pending = std::make_shared<Pending>();
  pending->snapshot.topology = server.topology();
  pending->snapshot.workers.resize(workers.size());
  pending->snapshot.uptime_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - server.shared().started)
          .count();
  pending->snapshot.rejected_clients = server.shared().rejected_clients.load();
  pending->left = workers.size();
  pending->done = std::move(done);
  boost::asio::io_context& home = server.io();
  for (std::size_t i = 0; i < workers.size(); ++i) {
    Worker* worker = workers[i].get();
    boost::asio::post(worker->io(), [worker, i, pending, &home] {
      WorkerSnapshot report;
      report.stats = worker->stats();
      report.clients = worker->session_count();
      report.near_cache = worker->near_cache().counters();
      report.stats.connected_clients = report.clients;
      for (std::size_t s = 0; s < worker->shard_map().shard_count(); ++s)
        report.servers.push_back(worker->pool().servers(s));
      for (const auto& servers : report.servers)
        for (const auto& server_state : servers)
          report.stats.shards[server_state.name].in_flight += server_state.in_flight;
      boost::asio::post(home, [i, pending, report = std::move(report)]() mutable {
        pending->snapshot.total.merge(report.stats);
        pending->snapshot.workers[i] = std::move(report);
        if (--pending->left == 0) pending->done(std::move(pending->snapshot));
      });
    });
  }
}

}  // namespace santral::router

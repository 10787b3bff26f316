#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "placement/topology.h"
#include "router/backend/backend_connection.h"
#include "router/hotkeys/near_cache/near_cache.h"
#include "router/metrics/stats.h"

namespace santral::router {

// One worker's near-cache connections: one per shard primary, RESP3 with CLIENT TRACKING ON,
// opened only while the near cache is on somewhere. They carry the GETs that fill the cache
// and nothing else, so Redis tracks exactly the keys cached here; its invalidation pushes, and
// the loss of a connection (which ends its tracking), evict from `cache`.
class TrackingConnections {
 public:
  TrackingConnections(boost::asio::io_context& io, WorkerStats& stats, NearCache& cache);
  ~TrackingConnections();
  TrackingConnections(const TrackingConnections&) = delete;
  TrackingConnections& operator=(const TrackingConnections&) = delete;

  // Opens them for `topology` (a reload: the old ones finish what they carry, then close).
  void apply(const placement::Topology& topology);
  void stop();
  void check_deadlines(std::chrono::steady_clock::time_point now);

  // The shard's connection when it is up, tracking (handshake answered) and may carry a fill;
  // else nullptr.
  BackendConnection* ready(std::size_t shard) const;

 private:
  boost::asio::io_context& io_;
  WorkerStats& stats_;
  ReplySinkPtr invalidations_;
  std::vector<BackendConnectionPtr> connections_;  // by shard
  std::vector<BackendConnectionPtr> retired_;
};

}  // namespace santral::router

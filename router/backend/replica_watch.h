#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "placement/topology.h"
#include "router/backend/connection_pool.h"
#include "router/backend/primary_lineage.h"
#include "router/backend/replica_freshness.h"

namespace santral::router {

// Measures how far each replica is behind its primary, for ReplicaFreshness: every 100 ms,
// INFO replication on each primary that has replicas (its offset, kept over time) and on each
// of its replicas (link, sync, the offset it applied), over the first worker's shared
// connections. The primaries of shards that follow Sentinel are read too, replicas or not:
// their history and offset go to PrimaryReadings, which a failover is judged against
// (primary_lineage.h). Used on that worker's thread only.
class ReplicaWatch {
 public:
  static constexpr std::chrono::milliseconds kPeriod{100};

  explicit ReplicaWatch(PrimaryReadings& readings) : readings_(readings) {}

  // Asks again where the last answers are in and kPeriod has passed.
  void tick(ConnectionPool& pool, const placement::Topology& topology,
            std::chrono::steady_clock::time_point now);

 private:
  class AnswerSink;
  // The answer of a primary's INFO persistence (a shard that follows Sentinel).
  static constexpr std::uint32_t kChanges = UINT32_MAX;
  struct Watched {
    OffsetHistory primary;
    std::vector<std::shared_ptr<ReplicaFreshness::State>> replicas;
    std::size_t awaited = 0;  // answers of the last ask still to come
    // The primary's count of changes as last answered, and as of the reading last kept.
    std::string changes, kept_changes, kept_replid;
  };
  void answered(const std::string& primary, std::size_t server, std::string_view reply,
                std::chrono::milliseconds max_lag);

  PrimaryReadings& readings_;
  std::map<std::string, Watched> watched_;  // by the primary's address
  std::chrono::steady_clock::time_point last_ask_{};
};

}  // namespace santral::router

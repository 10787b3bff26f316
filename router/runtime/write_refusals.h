#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace santral::router {

// A shard whose writes this router refuses: Sentinel promoted `to` in place of `from`, and
// `why` (router/backend/primary_lineage.h) says what it lacks.
struct WriteRefusal {
  std::string shard, from, to, why;
};

// The shards whose writes are refused after a failover that lost writes
// (failover.on_lost_writes: refuse), until SANTRAL FAILOVER ACCEPT <shard>: an immutable
// snapshot the server replaces whole and posts to every worker (router/process/
// sentinel_failover.h), read by the planner. Reads are not refused.
struct WriteRefusals {
  std::vector<WriteRefusal> shards;

  const WriteRefusal* find(std::string_view shard) const {
    for (const auto& refusal : shards)
      if (refusal.shard == shard) return &refusal;
    return nullptr;
  }
};

}  // namespace santral::router

#pragma once

#include "router/routes/routing.h"

namespace santral::router {

// SLOWLOG, answered by Santral about Santral's requests (router/runtime/slow_log.h): every
// worker's slow log, newest first, in Redis's format.
void slowlog_get(const Routed& routed);    // SLOWLOG GET [count]: 10 by default, -1 for all
void slowlog_len(const Routed& routed);    // SLOWLOG LEN
void slowlog_reset(const Routed& routed);  // SLOWLOG RESET
// In a fleet these cover every router (across_fleet.h); SANTRAL SLOWLOG LOCAL GET [count] |
// LEN | RESET this router's own.
void santral_slowlog(const Routed& routed);
// SANTRAL SHARD SLOWLOG GET [count] | LEN | RESET: the shards' own slow logs, each shard's
// reply under its name.
void santral_shard(const Routed& routed);

}  // namespace santral::router

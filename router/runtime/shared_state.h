#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "router/backend/primary_lineage.h"
#include "router/backend/replica_freshness.h"
#include "router/catalog/command_catalog.h"
#include "router/runtime/acl_log.h"
#include "router/runtime/audit_log.h"
#include "router/runtime/client_directory.h"
#include "router/runtime/monitors.h"
#include "router/runtime/tenant_limiter.h"

namespace santral::router {

class ControlPlane;
struct SaltOverrides;    // router/hotkeys/salting/salt_table.h
class SaltingStateFile;  // router/hotkeys/salting/salting_state_file.h

// A switch of a shard's primary that Sentinel made and Santral followed.
struct Failover {
  std::int64_t unix_time = 0;
  std::string from, to;  // the primaries' addresses
};

// A failover whose new primary does not descend from the old one as Santral last read it
// (router/backend/primary_lineage.h), and what became of writes to the shard since.
struct LostWrites {
  enum class Writes {
    Refused,   // failover.on_lost_writes: refuse, until SANTRAL FAILOVER ACCEPT
    Served,    // failover.on_lost_writes: accept: reported only
    Accepted,  // an operator ran SANTRAL FAILOVER ACCEPT
  };
  Failover failover;
  LineageVerdict verdict;
  Writes writes = Writes::Refused;
  std::int64_t accepted_unix_time = 0;

  // "refused", "served", "accepted" (INFO, SANTRAL SHARDMAP, GET /shards).
  std::string_view writes_name() const {
    return writes == Writes::Refused ? "refused" : writes == Writes::Served ? "served" : "accepted";
  }
};

// The little that all workers share; touched on connect and disconnect, never per request.
struct SharedState {
  std::atomic<std::size_t> connected_clients{0};
  std::atomic<std::uint64_t> next_client_id{1};
  // Added to each client's number to make its id (router/status/router_record.h: 0 outside a
  // fleet). Set once before the listeners accept.
  std::uint64_t client_id_base = 0;
  ClientDirectory clients;  // which worker serves each client id
  std::atomic<std::uint64_t> rejected_clients{0};
  std::atomic<std::uint64_t> topology_version{1};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  ControlPlane* control = nullptr;
  // SANTRAL SALT / UNSALT: the run-time salting changes, an immutable snapshot replaced as a
  // whole under the lock (never taken on the request path) and posted to every worker.
  std::mutex salt_lock;
  std::shared_ptr<const SaltOverrides> salt_overrides;
  std::uint64_t salt_version = 0;
  // A router alone: hotkeys.state_file, written under salt_lock (nullptr in a fleet, whose
  // salting is in etcd). Set before the workers start.
  SaltingStateFile* salting_file = nullptr;
  AclLog acl_log;     // ACL LOG: every worker's denials
  Monitors monitors;  // MONITOR: who is shown every command (the request path reads a count)
  // Each configured user's limits and what they refused (router/runtime/tenant_limiter.h):
  // configured by the server at start and at each reload.
  TenantLimiters limiters;
  // SLOWLOG: the id of the next slow request of any worker (taken only when one is slow).
  std::atomic<std::uint64_t> next_slow_id{0};
  // `audit:` the operators' actions (router/runtime/audit_log.h); nullptr when off. Set before
  // the workers start, never changed after.
  AuditLog* audit = nullptr;
  // In a fleet: the lease clock's time (router/backend/lease_clock.h, ns) past which this router
  // may have been left out of the fleet (its lease unconfirmed) and must not reach the shards. The
  // maximum outside a fleet. Read once per request that goes to a shard.
  std::atomic<std::int64_t> fleet_serve_until_ns{std::numeric_limits<std::int64_t>::max()};
  // In a fleet: the version of a map etcd holds that this router refused although the fleet
  // moved keys to it (or past its own); 0 when none. Nothing is routed while it is set.
  std::atomic<std::uint64_t> fleet_map_refused{0};
  // SANTRAL ANALYZE: while an analysis runs, every worker samples one request in this many
  // (router/plan/request_sampler.h); 0 when none runs. Read once per request.
  std::atomic<std::uint32_t> analysis_every{0};
  // What the shards know (their versions, the commands Santral's table lacks): read and
  // published by the first worker only (router/catalog/command_catalog.h).
  CommandCatalog catalog;
  // Which replicas may serve reads: measured by the first worker (router/backend/replica_watch.h),
  // read by every worker's pool.
  ReplicaFreshness replica_freshness;
  // The primaries Sentinel elected (router/process/sentinel_follow.h): the last one of each
  // shard, for SANTRAL SHARDMAP, GET /shards and the dashboard; and the last one of each that
  // lost writes (router/process/sentinel_failover.h), under the same lock.
  std::mutex failover_lock;
  std::map<std::string, Failover> failovers;      // by shard name
  std::map<std::string, LostWrites> lost_writes;  // by shard name
  // Each primary's replication history and offset as last read while it served: what a
  // failover's new primary must descend from (measured by the first worker).
  PrimaryReadings primary_readings;
};

}  // namespace santral::router

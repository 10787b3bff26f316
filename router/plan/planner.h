#pragma once

#include <cstdint>
#include <vector>

#include "placement/shard_map.h"
#include "placement/topology.h"
#include "protocol/learned_commands.h"
#include "protocol/request.h"
#include "router/runtime/client_state.h"
#include "router/runtime/plan.h"
#include "router/runtime/write_refusals.h"

namespace santral::router {

class SaltTable;

// What a plan depends on besides the request: the map in force, the salted counters, and the
// client's state. Nothing here is a socket, so plans are built alike in tests and EXPLAIN.
// How a fleet router stands with its fleet (router/cluster/): out of touch, nothing it plans
// reaches a shard. A lone router, or one in touch: both zero.
struct FleetStanding {
  std::int64_t late_ns = 0;       // > 0: its lease ran out that long ago
  std::uint64_t map_refused = 0;  // != 0: the fleet's map version it cannot take
};

struct PlanContext {
  const placement::ShardMap& map;
  SaltTable* salts = nullptr;  // nullptr or empty: nothing is salted
  const ClientState& client;
  bool in_multi = false;
  bool subscribed = false;
  int default_database = 0;         // the config's backend.database: the near cache's only one
  bool cross_shard_writes = false;  // `cross_shard_writes: allow`
  // The client's ACL rules; nullptr: it may run everything, nothing is checked.
  const config::Permissions* permissions = nullptr;
  // The move under way in the topology `map` belongs to (nullptr: none), and that topology's
  // version: the plan decides which keys are pulled first, and under which topology.
  const placement::Move* move = nullptr;
  std::uint64_t topology_version = 0;
  // Commands missing from the built-in table that the shards or `commands:` describe
  // (protocol/learned_commands.h); nullptr: none.
  const protocol::LearnedCommands* learned = nullptr;
  bool cluster_endpoint = false;  // `cluster_endpoint: true`: CLUSTER SLOTS and friends answer
  FleetStanding fleet{};
  // The shards whose writes are refused after a failover that lost writes; nullptr: none.
  const WriteRefusals* refusals = nullptr;
};

// Resolves `request` into `plan` (cleared first): its command, its checks, its keys (found
// once) with their owners and salting, and the kind of route that carries it out.
void build_plan(const PlanContext& context, const protocol::Request& request, Plan& plan);

// What may change by the moment without a new topology: this router's standing in its fleet
// and the shards whose writes are refused. build_plan checks it; a plan kept while its request
// waited is checked again before it runs. False: the plan stands (else it now answers why not).
bool lost_standing(const PlanContext& context, Plan& plan);

// Commands that end or leave a transaction, or the connection, and are not queued in it.
bool runs_inside_multi(const protocol::CommandSpec& spec);

}  // namespace santral::router

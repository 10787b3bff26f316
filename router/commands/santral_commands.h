#pragma once

#include "router/routes/routing.h"

namespace santral::router {

// SANTRAL subcommands: Santral's own operations.
void santral_explain(const Routed& routed);   // SANTRAL EXPLAIN <command> [args ...]
void santral_reload(const Routed& routed);    // SANTRAL RELOAD
void santral_reshard(const Routed& routed);   // SANTRAL RESHARD PLAN|APPROVE|STATUS|ABORT
void santral_balance(const Routed& routed);   // SANTRAL BALANCE PLAN [BY ..] [RATIO ..] ...
void santral_analyze(const Routed& routed);   // SANTRAL ANALYZE <namespace | glob> [SECONDS n] ...
void santral_shardmap(const Routed& routed);  // SANTRAL SHARDMAP
void santral_map(const Routed& routed);       // SANTRAL MAP PUSH <config text>
void santral_routers(const Routed& routed);   // SANTRAL ROUTERS
void santral_failover(const Routed& routed);  // SANTRAL FAILOVER ACCEPT <shard>

}  // namespace santral::router

#pragma once

#include "router/routes/routing.h"

namespace santral::router {

// The cluster endpoint (cluster_endpoint: true): what a Redis Cluster client asks of its
// nodes, answered with Santral's routers as the nodes (router/commands/cluster_topology.h).
// The planner refuses these, as a Redis without cluster support does, when the endpoint is off.
void cluster_info(const Routed& routed);       // CLUSTER INFO
void cluster_slots(const Routed& routed);      // CLUSTER SLOTS
void cluster_shards(const Routed& routed);     // CLUSTER SHARDS
void cluster_nodes(const Routed& routed);      // CLUSTER NODES
void cluster_myid(const Routed& routed);       // CLUSTER MYID
void cluster_myshardid(const Routed& routed);  // CLUSTER MYSHARDID
void cluster_keyslot(const Routed& routed);    // CLUSTER KEYSLOT key
// CLUSTER COUNTKEYSINSLOT slot and GETKEYSINSLOT slot count: the shards hold no slots, so
// their keys are SCANned and each key's slot computed (cluster_slot_scan.cpp).
void cluster_countkeysinslot(const Routed& routed);
void cluster_getkeysinslot(const Routed& routed);
void asking(const Routed& routed);  // ASKING: OK (Santral never answers ASK)

}  // namespace santral::router

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "router/status/router_record.h"

namespace santral::router {

// Santral's routers as the nodes of a Redis Cluster, for the cluster endpoint
// (cluster_endpoint: true). Every router serves every key, so any split of the slots is
// correct; the split only spreads cluster clients' connections over the routers. It is
// deterministic, so every router of a fleet reports the same one:
//
//   routers sorted by name:  r-a            r-b            r-c
//   slots:                   0 ... 5460     5461 ... 10921 10922 ... 16383
//
// A router alone is one node with every slot. Each node is a primary without replicas.
struct ClusterNode {
  std::string id;        // 40 hex digits: SHA-1 of the router's name (stable across restarts)
  std::string shard_id;  // 40 hex digits: SHA-1 of "shard " and the name (CLUSTER MYSHARDID)
  std::string name;
  std::string host;  // where clients reach it (`announce:`, else its listen address)
  std::uint16_t port = 0;
  bool myself = false;
  std::uint32_t first_slot = 0;  // inclusive
  std::uint32_t last_slot = 0;   // inclusive
};

inline constexpr std::uint32_t kClusterSlots = 16384;

// The nodes for `routers` (a fleet's live routers, or this one alone); `self` is this router's
// record, added when the fleet's view does not list it yet. Sorted by name.
std::vector<ClusterNode> cluster_nodes(std::vector<RouterRecord> routers, const RouterRecord& self);

// Redis Cluster's slot of a key (CLUSTER KEYSLOT): CRC16 of the key, or of its hash tag (the
// text between the first '{' and the first '}' after it, when not empty), mod 16384. Clients
// compute the same, whatever hash_tag Santral's own placement uses.
std::uint32_t cluster_key_slot(std::string_view key);

}  // namespace santral::router

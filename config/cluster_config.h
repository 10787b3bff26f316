#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace santral::config {

// `cluster:`: a fleet of routers sharing one shard map in etcd (router/cluster/). Without it
// (no etcd members) the file's map is the map, as for a single router.
struct ClusterSettings {
  std::vector<std::string> etcd;  // the members' client addresses (host:port, etcd's /v3 gateway)
  std::string name;               // the fleet's keys live under /santral/<name>/
  // This router's name in the fleet; empty: its listen address and an id of this start
  // (unique per process: routers of a sidecar fleet all listen on 127.0.0.1:6380).
  std::string router;
  std::chrono::seconds lease_ttl{10};              // a router silent this long leaves the fleet
  std::chrono::milliseconds poll{100};             // how often etcd is read for a newer map version
  std::chrono::milliseconds start_timeout{10000};  // to reach etcd at start before giving up
  // When this router cannot reach etcd at all, whether it serves on past 2/3 of its lease
  // (true), betting that etcd is down for everyone. By default it serves on only with proof
  // that etcd has no quorum (a majority of its members say they have no leader): then no lease
  // can expire. docs/fleet.md ("Serving on while etcd is down") gives the risk of `true`.
  bool serve_when_etcd_down = false;
  // How a router the fleet went on without is kept off the shards. Lease: by time alone (it
  // stops itself at 2/3 of its lease). Acl: also at the shards: every router reaches them as a
  // Redis ACL user of its own (one per lease, made with backend.username/password, which must
  // be allowed ACL and CLIENT), and the fleet disables a departed router's user and closes its
  // connections on every shard before it goes on without it (router/cluster/shard_acl.h).
  enum class Fence { Lease, Acl };
  Fence fence = Fence::Lease;

  bool enabled() const { return !etcd.empty(); }
  std::string prefix() const { return "/santral/" + name + "/"; }
};

}  // namespace santral::config

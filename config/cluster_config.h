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
  std::string router;             // this router's name in the fleet; empty: its listen address
  std::chrono::seconds lease_ttl{10};              // a router silent this long leaves the fleet
  std::chrono::milliseconds poll{100};             // how often etcd is read for a newer map version
  std::chrono::milliseconds start_timeout{10000};  // to reach etcd at start before giving up

  bool enabled() const { return !etcd.empty(); }
  std::string prefix() const { return "/santral/" + name + "/"; }
};

}  // namespace santral::config

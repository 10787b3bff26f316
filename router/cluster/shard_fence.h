#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "router/cluster/shard_acl.h"

namespace santral::router {

// cluster.fence: acl, the fleet agent's side (fleet_agent.h): this router's own ACL user on
// every shard it may reach, one per lease, and the users of routers the fleet went on without,
// shut out on every shard. Only the agent's thread calls it, except use_shards().
class ShardFence {
 public:
  ShardFence(std::string fleet, ShardAccount admin, std::chrono::milliseconds timeout);

  // The shards (and their replicas) of the map in force, a move's source map included: where
  // this router needs its user, and where the users of departed routers are shut out. From the
  // server's thread, at every change of topology.
  void use_shards(const std::vector<config::ShardConfig>& shards);

  // A new lease: a new user (the old one may have been shut out meanwhile). Returns its name.
  std::string new_lease(std::int64_t lease);
  // Makes this router's user where it is still missing, and once the shards of the map in
  // force have it, logs in as it (shard_login.h). Only while `serving`: a router the fleet
  // may have gone on without makes nothing. True when every primary has it.
  bool admit(bool serving);
  // Looks again at every shard at the next admit(): a shard restarted without an ACL file has
  // lost the user (one that exists, on or off, is left as it is).
  void recheck() { admitted_.clear(); }
  // Shuts `user` out on every shard; true once every primary has done it (tried again by
  // later calls while not).
  bool shut_out(const std::string& user);

 private:
  struct Target {
    config::Endpoint address;
    bool primary = true;
    bool tls = false;
  };
  std::vector<Target> targets() const;

  std::string fleet_;
  ShardAcl acl_;
  ShardAccount account_;
  std::set<std::string> admitted_;  // shards (address text) where account_ exists
  bool logged_in_ = false;
  // user -> the shards where it is shut out
  std::vector<std::pair<std::string, std::set<std::string>>> shut_;
  std::string last_error_;  // logged once until it changes

  mutable std::mutex lock_;  // guards targets_
  std::vector<Target> targets_;
};

}  // namespace santral::router

#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace santral::router {

// A Redis ACL user on the shards: how a router reaches them with cluster.fence: acl.
struct ShardAccount {
  std::string user;
  std::string password;
};

// This router's account for one lease: a name no other lease has (etcd never hands out a
// lease id twice) and a random password.
ShardAccount lease_account(std::string_view fleet, std::int64_t lease);

// Fencing at the shards (cluster.fence: acl). Stock Redis compares no tokens, but its ACLs can
// shut a door: every router reaches the shards as its own user, and a router the fleet went on
// without (its lease expired) is shut out before the fleet releases a move's epoch, ends a move
// or folds salting, so that a frozen, partitioned or clock-broken router cannot write anywhere,
// whatever it believes. Blocking, one short connection per call, authenticated as the admin
// user (backend.username/password): for the fleet agent's thread, never the request path.
class ShardAcl {
 public:
  ShardAcl(ShardAccount admin, std::chrono::milliseconds timeout);

  // Creates `account` on `shard` unless a user of that name is there already: a user that
  // exists was made by this router before, or shut out by the fleet, and either way is left
  // as it is (a router never opens its own door again). "" or what went wrong.
  std::string admit(const config::Endpoint& shard, const ShardAccount& account) const;
  // Disables `user` on `shard` and closes its connections. A user the shard does not know yet
  // is created disabled, so that a late admit() of a router shut out cannot open it.
  std::string shut_out(const config::Endpoint& shard, const std::string& user) const;

 private:
  // Sends `commands` (after AUTH as the admin) on one connection and returns their replies'
  // frames; throws std::runtime_error with what went wrong.
  std::vector<std::string> call(const config::Endpoint& shard,
                                const std::vector<std::vector<std::string>>& commands) const;

  ShardAccount admin_;
  std::chrono::milliseconds timeout_;
};

}  // namespace santral::router

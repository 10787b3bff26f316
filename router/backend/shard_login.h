#pragma once

#include <string>

#include "config/config.h"

namespace santral::router {

// Who this process is on the shards: backend.username/password, or, in a fleet with
// cluster.fence: acl, the router's own ACL user for its current lease (router/cluster/
// shard_acl.h), set by the fleet agent once the user exists. Every new backend connection
// (HELLO/AUTH) and every MIGRATE (AUTH2 at the target) asks here.
struct ShardLogin {
  std::string user;  // empty: the default user
  std::string password;
};

// Replaces the fence account (empty user: back to backend.username/password). Connections made
// before keep theirs: the fleet closes them on the shards when it shuts the old user out.
void set_fence_login(ShardLogin login);
ShardLogin shard_login(const config::BackendOptions& backend);

}  // namespace santral::router

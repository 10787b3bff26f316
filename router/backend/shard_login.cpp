#include "router/backend/shard_login.h"

#include <mutex>

namespace santral::router {

namespace {
std::mutex lock;
ShardLogin fence_login;  // guarded by lock; empty user: none
}  // namespace

void set_fence_login(ShardLogin login) {
  std::lock_guard guard(lock);
  fence_login = std::move(login);
}

ShardLogin shard_login(const config::BackendOptions& backend) {
  {
    std::lock_guard guard(lock);
    if (!fence_login.user.empty()) return fence_login;
  }
  return {backend.username, backend.password};
}

}  // namespace santral::router

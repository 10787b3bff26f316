#include "router/routes/blocked_calls.h"

#include "router/backend/connection_pool.h"

namespace santral::router {

void BlockedCalls::answered(const BackendConnection* connection, ConnectionPool& pool) {
  for (auto it = calls_.begin(); it != calls_.end(); ++it) {
    if (it->connection.get() != connection) continue;
    auto owned = std::move(it->connection);
    calls_.erase(it);
    pool.give_back(std::move(owned));
    return;
  }
}

std::vector<BlockedCalls::Call> BlockedCalls::take_all() {
  auto calls = std::move(calls_);
  calls_.clear();
  return calls;
}

}  // namespace santral::router

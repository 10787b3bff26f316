#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "router/backend/backend_connection.h"

namespace santral::router {

class ConnectionPool;

// One client's blocking commands, each waiting on a connection lent to it for the call
// (router/routes/blocking_route.cpp): given back when answered, dropped when the client
// leaves or CLIENT UNBLOCK ends them (the shard is still inside the command).
class BlockedCalls {
 public:
  struct Call {
    BackendConnectionPtr connection;
    std::uint64_t slot;
    std::uint32_t fragment;     // WAIT has one per shard
    std::string timeout_reply;  // what CLIENT UNBLOCK ... TIMEOUT answers in its place
  };

  void add(Call call) { calls_.push_back(std::move(call)); }
  bool empty() const { return calls_.empty(); }
  // The call on `connection` got its reply: the connection goes back to `pool`.
  void answered(const BackendConnection* connection, ConnectionPool& pool);
  // Every call still waiting, taken out.
  std::vector<Call> take_all();

 private:
  std::vector<Call> calls_;
};

}  // namespace santral::router

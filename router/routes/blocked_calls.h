#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "placement/topology.h"
#include "router/backend/backend_connection.h"

namespace santral::router {

class ConnectionPool;

// A blocking command waiting on a connection lent to it alone.
struct BlockedCall {
  BackendConnectionPtr connection;
  std::uint64_t slot;
  std::uint32_t fragment;     // WAIT has one per shard
  std::string timeout_reply;  // what CLIENT UNBLOCK ... TIMEOUT answers in its place
  std::vector<std::string> keys;
  bool ended_by_move = false;  // CLIENT UNBLOCK sent: -UNBLOCKED means "retry it"
};

// One client's blocking commands, each waiting on a connection lent to it for the call
// (router/routes/blocking_route.cpp): given back when answered, dropped when the client
// leaves or CLIENT UNBLOCK ends them (the shard is still inside the command).
//
// A switch of topology (a move starts, turns back or ends) leaves calls on keys it does not
// move alone. A call on a key it moves waits on a shard that will not see the key's next
// writes, so it is ended from another connection to the same server (CLIENT UNBLOCK <id>
// ERROR): its own connection then says what happened, the element when the shard served it
// first, or -UNBLOCKED when it did not, which the client gets as a retryable error. Nothing
// a shard served is lost and nothing runs twice.
class BlockedCalls {
 public:
  using Call = BlockedCall;

  void add(Call call) { calls_.push_back(std::move(call)); }
  bool empty() const { return calls_.empty(); }
  // The call on `connection` got its reply: the connection goes back to `pool`.
  void answered(const BackendConnection* connection, ConnectionPool& pool);
  // Every call still waiting, taken out.
  std::vector<Call> take_all();
  // `topology` is now in force: ends the calls on keys it moves (see above). Calls on a server
  // no longer in the map cannot be told so; they are returned, to be ended the old way.
  std::vector<Call> end_moved(const placement::Topology& topology, ConnectionPool& pool,
                              boost::asio::io_context& io);
  // Whether the call on `connection` is being ended by a switch.
  bool ended_by_move(const BackendConnection* connection) const;

 private:
  std::vector<Call> calls_;
};

}  // namespace santral::router

#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace santral::router {

class Worker;

// Runs `first` on every worker, then waits until every request each worker had already sent
// to `shards` (all shards when empty) has been answered: its cross-shard writes in flight end,
// then a PING down each connection that may carry one (shared, given back, retired, tracking
// lanes, still connecting: ConnectionPool::fence_connections) comes back after everything
// queued before it. `done` then runs on `origin`: from there on, nothing routed before `first`
// can still reach those shards.
void fence_workers(boost::asio::io_context& origin, const std::vector<Worker*>& workers,
                   std::vector<std::size_t> shards, std::function<void(Worker&)> first,
                   std::function<void()> done);

}  // namespace santral::router

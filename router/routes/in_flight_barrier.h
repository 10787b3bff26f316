#pragma once

#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "router/runtime/fan_out.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

// On `worker`'s thread: first the cross-shard writes in flight end (their later stages go
// where they were planned), then a PING down each connection that may carry a request to
// `shards` (all shards when empty: shared, given back, retired, tracking lanes, still
// connecting: ConnectionPool::barrier_connections) comes back after everything queued before it.
// `done` then runs on the worker's thread.
void barrier_one(WorkerServices& worker, const std::vector<std::size_t>& shards,
                 std::function<void()> done);

// Runs `first` on every worker, then waits for each one's barrier (barrier_one). `done` then runs
// on `origin`: from there on, nothing routed before `first` can still reach those shards. `W` is
// the workers' type (the server's Worker, or WorkerServices).
template <class W>
void barrier_workers(boost::asio::io_context& origin, const std::vector<W*>& workers,
                     std::vector<std::size_t> shards,
                     std::type_identity_t<std::function<void(W&)>> first,
                     std::function<void()> done) {
  struct Passed {};
  fan_out_async<Passed, W>(
      origin, workers,
      [shards = std::move(shards), first = std::move(first)](W& worker,
                                                             FanOutAnswer<Passed> answer) {
        if (first) first(worker);
        barrier_one(worker, shards, [answer = std::move(answer)] { answer(Passed{}); });
      },
      [done = std::move(done)](const std::vector<Passed>&) { done(); });
}

}  // namespace santral::router

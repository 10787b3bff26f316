#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace santral::router {

class WorkerServices;

// After a salting change: makes every worker take the latest salting, then waits until every
// request each worker had already sent to `shards` has been answered (a PING down each shared
// connection comes back after everything queued before it). `done` then runs on `origin`'s
// thread: from there on, nothing routed under the old salting can still reach those shards.
void barrier_salting(WorkerServices& origin, const std::vector<std::size_t>& shards,
                     std::function<void()> done);

}  // namespace santral::router

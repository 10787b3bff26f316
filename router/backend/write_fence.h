#pragma once

#include <atomic>
#include <cstdint>

namespace santral::router {

// In a fleet (router/cluster/), a router that has not confirmed its lease lately may have been
// left out of a move: it writes nothing more to any shard. Requests are refused when they are
// planned (SharedState::fleet_serve_until_ns), and checked here again before each write system
// call of their connection: a request planned before the router was frozen (SIGSTOP) must not
// reach its shard after it wakes. `serve_until_ns` (lease_clock.h ns) outlives every connection;
// nullptr (alone): no fence.
void set_write_fence(const std::atomic<std::int64_t>* serve_until_ns);
// How many ms past the fence this router is now; 0 while it may write.
std::int64_t write_fence_late_ms();

}  // namespace santral::router

#pragma once

#include "router/routes/routing.h"

namespace santral::router {

// GET on a key its namespace lets the near cache serve (the plan says so; only the clients'
// default database): answered from this worker's cache (a hit), or, for a hot key not cached
// yet, sent on the shard's tracking connection so that its reply fills the cache. Otherwise
// (cold key, a write of this client still unanswered, tracking connection down) it goes to the
// key's shard as usual.
void route_near_cache(const Routed& routed);

// A write routed through Santral: its keys leave this worker's near cache at once, and fills
// of them in flight are not stored (Redis's invalidation reaches the other workers). Again
// when its reply reaches the client: a fill may have read the old value on the tracking
// connection just before the write ran, and Redis's invalidation of it still be unread.
//
//   client A: SET k ---S---> shard ---S---> +OK   (A now reads k: must not see v0)
//   client B: GET k ---T---> shard ---T---> v0 (stored), ... invalidate k (not read yet)
void forget_written_keys(const Routed& routed);
// A write that names no key may change any (FLUSHALL, FLUSHDB): the same for every key.
void forget_all_keys(const Routed& routed);

}  // namespace santral::router

#pragma once

#include <cstdint>

#include "router/routes/routing.h"

namespace santral::router {

// What a tracking client's request means for its cache, once the request has been routed
// (router/tracking/tracking_lanes.h): a read over a lane registers the client for its keys
// when the reply arrives; a read that cannot be tracked (a salted counter, a blocking read,
// a read inside MULTI) is followed by the invalidation of its keys, so that no client keeps
// it; a NOLOOP client's write does not invalidate it; CLIENT CACHING is used up.
// `slots_before`: the client's opened_slots() before the route ran.
void note_tracked_request(const Routed& routed, std::uint64_t slots_before);

}  // namespace santral::router

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

// A tracking client's PING, ECHO or CLIENT TRACKING, which Santral answers itself, must not
// overtake an invalidation a shard has already queued for the client (one Redis writes the push
// of an earlier write before PING's reply; the tcl unit `tracking` reads them in that order; and
// CLIENT TRACKING OFF would drop it, where Redis has written it already): a PING
// goes down each connection its invalidations come on (TrackingLanes::pushing_to), in a hidden
// slot, and true says the request waits. Pushes on a connection come in order with its
// replies, so when every PING has answered, the pushes before them are written to the client;
// the request is then handled again and answered. Nothing for a client that does not track.
bool lanes_barrier_first(RequestContext& client, const Plan& plan);

}  // namespace santral::router

#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace santral::router {

// CLIENT TRACKING ON REDIRECT <id>: a tracking client's invalidations go to another client,
// framed as Redis 7.0 frames them (src/tracking.c, sendTrackingMessage):
//  - to a RESP3 client, the `invalidate` push;
//  - to a RESP2 client in pub/sub mode, a message on `__redis__:invalidate`;
//  - to a RESP2 client not in pub/sub mode, nothing.
// The keys part is the push's: an array of keys, or the null of the tracking client's protocol
// (FLUSHALL: `$-1` when that client speaks RESP2, `_` for RESP3).

// The keys part of an `invalidate` push, as a client of `tracking_protocol` would have it sent.
std::string redirected_keys(std::string_view push_frame, int tracking_protocol);
// The frame the redirect target gets, or empty when it gets nothing.
std::string redirected_invalidation(std::string_view keys, int target_protocol,
                                    bool target_subscribed);
// To a RESP3 tracking client whose redirect target is gone.
std::string redirect_broken_push(std::uint64_t target);

}  // namespace santral::router

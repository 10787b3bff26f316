#pragma once

#include <cstddef>

#include "router/routes/routing.h"

namespace santral::router {

// EVALSHA of a script Santral has seen (EVAL or SCRIPT LOAD through it): unless the connection
// already loaded it on its server, a SCRIPT LOAD goes first on the same connection, so a shard
// that restarted or joined later never answers NOSCRIPT and the call keeps its place in the
// client's pipeline. If the shard still answers NOSCRIPT (its script cache was flushed behind
// Santral's back) the call is repeated as EVAL; that repeat runs after whatever the client
// pipelined behind it. False when Santral does not know the script: forward it as it is.
bool forward_evalsha(const Routed& routed, std::size_t shard);

}  // namespace santral::router

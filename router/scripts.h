#pragma once

#include <cstddef>

#include "router/routing.h"

namespace santral::router {

// Sends an EVALSHA whose script Santral has seen so that, if the shard answers NOSCRIPT (it
// restarted, or joined after the script was loaded), the call is repeated there as EVAL with
// the body and the client only sees that answer. False if Santral does not know the script;
// the caller then forwards it as it is.
//
// The retried EVAL runs after whatever this client pipelined to the same shard behind the
// EVALSHA; a client that needs strict order there should SCRIPT LOAD first.
bool forward_with_script_retry(const Routed& routed, std::size_t shard);

}  // namespace santral::router

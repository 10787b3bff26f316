#pragma once

#include "router/routing.h"

namespace santral::router {

// When the request names a salted counter, answers it here and returns true: counter commands
// are spread over or gathered from the counter's sub-keys (router/hotkeys/salted_layout.h),
// anything else gets an error that names the key as salted. False: route it as usual.
bool route_salted(const Routed& routed);

}  // namespace santral::router

#pragma once

#include "router/routes/routing.h"

namespace santral::router {

// Counts the request's first key in its worker's hot-key sketch (for the one request in
// hotkeys.sample_every that is due).
void observe_hot_key(const Routed& routed);

}  // namespace santral::router

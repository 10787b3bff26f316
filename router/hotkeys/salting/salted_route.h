#pragma once

#include <string_view>

#include "router/routes/routing.h"

namespace santral::router {

// When the request names a salted counter, answers it here and returns true: counter commands
// are spread over or gathered from the counter's sub-keys (router/hotkeys/salted_layout.h),
// anything else gets an error that names the key as salted. False: route it as usual.
bool route_salted(const Routed& routed);

// Whether `command` (a command table name) is one a counter sees: a key sampled only with such
// commands may be salted automatically. The string-counter commands salted keys support,
// but SET.
bool counter_command(std::string_view command);

}  // namespace santral::router

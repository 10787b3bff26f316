#pragma once

#include <string_view>

#include "router/routes/routing.h"

namespace santral::router {

// A request whose plan names a salted counter: counter commands are spread over or gathered
// from the counter's sub-keys (router/hotkeys/salting/salted_layout.h).
void route_salted(const Routed& routed);
// Whether a salted counter supports `command` (a command table name); the planner refuses
// the others with an error that names the key as salted.
bool salting_supports(std::string_view command);
// What the command does with a counter's sub-keys, in words (SANTRAL EXPLAIN).
std::string_view salted_effect(std::string_view command);

// Whether `command` (a command table name) is one a counter sees: a key sampled only with such
// commands may be salted automatically. The string-counter commands salted keys support,
// but SET.
bool counter_command(std::string_view command);

}  // namespace santral::router

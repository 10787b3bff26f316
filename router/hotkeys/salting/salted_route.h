#pragma once

#include <string_view>

#include "protocol/command_table.h"
#include "router/routes/routing.h"

namespace santral::router {

// A request whose plan names a salted counter: counter commands are spread over or gathered
// from the counter's sub-keys (router/hotkeys/salting/salted_layout.h).
void route_salted(const Routed& routed);
// What the command does with a counter's sub-keys, in words (SANTRAL EXPLAIN). Which commands
// a salted counter supports is the command table's salted= column; the planner refuses the
// others with an error that names the key as salted.
std::string_view salted_effect(const protocol::CommandSpec& spec);

// Whether `spec` is a command a counter sees: a key sampled only with such commands may be
// salted automatically. The string-counter commands salted keys support, but SET.
bool counter_command(const protocol::CommandSpec& spec);

}  // namespace santral::router

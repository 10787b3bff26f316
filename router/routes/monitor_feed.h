#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>

#include "router/routes/routing.h"

namespace santral::router {

// MONITOR through Santral: each command a client of this router runs, as Redis shows it to its
// monitors, `+<unix time>.<microseconds> [<database> <client address>] "<arg>" ...`, pushed to
// every client that sent MONITOR (router/runtime/monitors.h), in order with its own replies.
// Shown when the router runs it (a command inside MULTI when it is queued); not shown, as on
// Redis: admin commands (CONFIG, MONITOR, DEBUG, ...), unknown or refused ones, and the
// passwords of AUTH, HELLO ... AUTH and MIGRATE ... AUTH/AUTH2 ("(redacted)"). What the shards
// run for a command (a script's calls, the parts of a cross-shard write) and the commands of
// other routers of a fleet are not seen here: MONITOR on a shard shows those.
std::string monitor_line(std::chrono::system_clock::time_point at, int database,
                         std::string_view peer, std::span<const std::string_view> args);

// Shows the routed request to every monitoring client (on their workers).
void feed_monitors(const Routed& routed);

}  // namespace santral::router

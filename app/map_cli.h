#pragma once

#include <optional>

namespace santral::router {

// `santral map push FILE [--router host:port] [--password p]`: sends the file to a running
// router of a fleet (SANTRAL MAP PUSH), which proposes its map as the fleet's next version.
// Returns nullopt when argv is not a `map` command line, else the exit code.
std::optional<int> run_map_command(int argc, char** argv);

}  // namespace santral::router

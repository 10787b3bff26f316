#pragma once

#include <optional>

namespace santral::router {

// `santral reshard plan|approve|status|abort [--router host:port] [--password p] [--watch]`:
// asks a running Santral over RESP (SANTRAL RESHARD ...) and prints the answer; `status
// --watch` draws a progress bar until the move ends. Returns nullopt when argv is not a
// `reshard` command line, else the exit code.
std::optional<int> run_reshard_command(int argc, char** argv);

}  // namespace santral::router

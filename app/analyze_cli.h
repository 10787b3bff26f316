#pragma once

#include <optional>

namespace santral::router {

// `santral analyze <namespace | key glob> [--router host:port] [--password p] [--seconds n]
// [--sample rate] [--key field|regex] [--json] [--write FILE]`: asks a running Santral to
// analyze a shard key over live traffic (SANTRAL ANALYZE) and prints the report; --write saves
// the config with the recommendation applied, for `santral map push` or a reload (a planned
// move). Returns nullopt when argv is not an `analyze` command line, else the exit code.
std::optional<int> run_analyze_command(int argc, char** argv);

}  // namespace santral::router

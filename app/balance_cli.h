#pragma once

#include <optional>

namespace santral::router {

// `santral balance [--router host:port] [--password p] [--by ops|keys|bytes] [--ratio r]
// [--samples n] [--window ms] [--write FILE]`: asks a running Santral for a balance plan
// (SANTRAL BALANCE PLAN) and prints it; --write saves the proposed config to FILE, for the
// operator to put in place and reload (the move is then planned, and approved as any other).
// Returns nullopt when argv is not a `balance` command line, else the exit code.
std::optional<int> run_balance_command(int argc, char** argv);

}  // namespace santral::router

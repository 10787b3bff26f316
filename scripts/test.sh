#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Santral and runs the whole test suite (unit tests,
# and integration tests against real redis-server and nutcracker processes) with ctest.
#   scripts/test.sh                 everything
#   scripts/test.sh -L unit         only one label (any ctest arguments are passed on)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build" RelWithDebInfo
cd "$root/build"
ctest --output-on-failure -j"$(nproc)" "$@"

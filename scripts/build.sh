#!/usr/bin/env bash
# Configures and builds Santral.
#   scripts/build.sh [build-dir] [build type] [santral-only]
# With a third argument only the santral binary is built (no tests).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/build}"
type="${2:-RelWithDebInfo}"
tests=ON
target=()
if [ -n "${3:-}" ]; then
  tests=OFF
  target=(--target santral)
fi
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DSANTRAL_BUILD_TESTS="$tests" >/dev/null
cmake --build "$dir" -j"$(nproc)" "${target[@]}" | { grep -E "error|warning|Linking CXX executable santral$" || true; }

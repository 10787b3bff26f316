#!/usr/bin/env bash
# clang-format over every source, the paths comments name (scripts/check-comment-paths.py),
# the floors (scripts/check-floors.py) and clang-tidy over the product code (protocol/, config/,
# placement/, router/, app/, tools/), with the checks in .clang-tidy; non-zero on any finding.
#   scripts/lint.sh          check
#   scripts/lint.sh --fix    rewrite the files with clang-format first
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
cd "$root"
mapfile -t sources < <(git ls-files '*.cpp' '*.h' | grep -v '^protocol/command_table_data.cpp$')

if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${sources[@]}"
fi
echo "== clang-format"
clang-format --dry-run --Werror "${sources[@]}"

echo "== comments name files that exist"
/usr/bin/python3 "$root/scripts/check-comment-paths.py"
echo "== no include climbs a floor"
/usr/bin/python3 "$root/scripts/check-floors.py"

echo "== clang-tidy"
# Configuring is enough: it writes compile_commands.json and the generated version header.
# Without precompiled headers (made only by a build) and without batching files into unity
# builds: clang-tidy reads each file alone, with what it includes itself.
dir="$root/build-lint"
CXX=clang++ cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DSANTRAL_PCH=OFF -DSANTRAL_UNITY_BUILD=OFF >/dev/null
# clang-tidy reads the product code; tests get clang-format only (Catch2 makes every test
# translation unit slow to analyse, and CI time is better spent running them).
mapfile -t units < <(printf '%s\n' "${sources[@]}" | grep -E '^(protocol|config|placement|router|app|tools)/.*\.cpp$')
printf '%s\n' "${units[@]}" |
  xargs -P "$(nproc)" -n 4 clang-tidy -p "$dir" --quiet 2>/dev/null
echo "lint: clean"

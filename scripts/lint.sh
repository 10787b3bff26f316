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
echo "== every include is one router/floors.txt allows"
/usr/bin/python3 "$root/scripts/check-floors.py"

echo "== clang-tidy"
# Configuring is enough: it writes compile_commands.json, the generated version header and the
# unity batches. Without precompiled headers (made only by a build). clang-tidy reads each
# unity batch of the product code (protocol/, config/, placement/, router/, app/, tools/: up
# to 10 of their .cpp files, the build's own batches) as one translation unit: the heavy
# headers (Asio, Beast) are parsed once a batch instead of once a file (4.5 minutes on 2
# cores, where file by file took about 15); the batched .cpp files are reported as the headers
# they are then (--header-filter), and including them is what a batch is
# (bugprone-suspicious-include is off here).
dir="$root/build-lint"
CXX=clang++ cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DSANTRAL_PCH=OFF -DSANTRAL_UNITY_BUILD=ON >/dev/null
# clang-tidy reads the product code; tests get clang-format only (Catch2 makes every test
# translation unit slow to analyse, and CI time is better spent running them).
mapfile -t units < <(/usr/bin/python3 - "$root" "$dir" <<'PY'
import json, os, re, sys
root, build = sys.argv[1], sys.argv[2]
product = re.compile(r"(protocol|config|placement|router|app|tools)/")
for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    if path.startswith(build + "/"):  # a unity batch of a product target
        if "/Unity/" in path and product.match(os.path.relpath(path, build)):
            print(path)
    elif product.match(os.path.relpath(path, root)) and path.endswith(".cpp"):
        print(path)  # a file left out of the batches
PY
)
# .clang-tidy's HeaderFilterRegex (protocol/, config/, router/ headers), and every batched .cpp.
filter="^$root/((protocol|config|router)/.*|(placement|app|tools)/.*\.cpp)\$"
printf '%s\n' "${units[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$dir" --quiet --header-filter="$filter" \
    --checks=-bugprone-suspicious-include 2>/dev/null
echo "lint: clean"

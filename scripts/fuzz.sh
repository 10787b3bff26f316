#!/usr/bin/env bash
# Runs Santral's libFuzzer targets (built with clang, ASan and UBSan), as many at once as there
# are cores:
#   scripts/fuzz.sh [seconds per target, default 60] [target ...]
# Targets: request_parser, reply, config, planner, acl_rules. New inputs that reach new code stay in
# build-address/corpus/<target>; a crash is saved in build-address/findings/ and fails the run; copy
# it to tests/fuzz/regressions/<target>/ once fixed, so every test run replays it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
seconds="${1:-60}"
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(request_parser reply config planner acl_rules)

# The same build as scripts/test.sh --sanitize=address, which builds these targets too.
dir="$root/build-address"
CXX=clang++ cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 \
  -DSANTRAL_SANITIZE=address -DSANTRAL_FUZZ=ON -DSANTRAL_PCH=ON >/dev/null
cmake --build "$dir" -j"$(nproc)" --target "${targets[@]/%/_fuzz}" | { grep -E "error|warning" || true; }

mkdir -p "$dir/findings"
# One target per core at a time; each writes its own log, read when it ends.
fuzz_one() {
  local target="$1"
  mkdir -p "$dir/corpus/$target"
  "$dir/tests/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/findings/$target-" \
    "$dir/corpus/$target" "$root/tests/fuzz/corpus/$target" >"$dir/$target.log" 2>&1
}
pids=()
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  fuzz_one "$target" &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  target="${targets[$i]}"
  log="$dir/$target.log"
  echo "== $target: ${seconds}s"
  if ! wait "${pids[$i]}"; then
    failed=1
    grep -E "ERROR|SUMMARY|check failed|Test unit written" "$log" | head -20
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|#[0-9]+ +DONE" "$log" | tr '\n' ' '
  echo
done
if [ "$failed" -ne 0 ]; then
  echo "fuzzing found a problem; inputs are in $dir/findings/" >&2
  exit 1
fi

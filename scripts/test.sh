#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds Santral and runs the whole test suite (unit tests,
# and integration tests against real redis-server and nutcracker processes) with ctest.
#   scripts/test.sh                      everything, normal build (build/)
#   scripts/test.sh --sanitize=address   everything under ASan + UBSan (build-address/): the
#                                        product, its unit tests and every santral the
#                                        integration tests start (their executables are the
#                                        normal build's, built first if need be)
#   scripts/test.sh --sanitize=thread    under TSan (build-thread/): as above, but for the unit
#                                        tests that run on one thread (tests/CMakeLists.txt)
#   scripts/test.sh -L unit              one label; other arguments go to ctest
#   scripts/test.sh --build-only ...     configure and build only (a sanitized one without
#                                        building the normal build first)
#   scripts/test.sh -L browser           the dashboard in headless Chromium (tests/browser/; it
#                                        installs playwright-core from npm, about 20 s)
# Under a sanitizer every sanitized process (the unit tests and every santral) writes its reports
# to a log directory; any report fails the run, even one from a process that exited cleanly.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sanitize=""
ctest_args=()
build_only=""
for arg in "$@"; do
  case "$arg" in
    --sanitize=*) sanitize="${arg#--sanitize=}" ;;
    --build-only) build_only=1 ;;
    *) ctest_args+=("$arg") ;;
  esac
done

"$root/scripts/install-deps.sh"
dir="$root/build${sanitize:+-$sanitize}"
# Sanitized builds go to their own directory, at -O1 with debug info: quicker to build, and
# their reports have readable stacks.
# Sanitized builds use clang; the ASan build also holds the libFuzzer targets, so that
# scripts/fuzz.sh reuses it.
normal=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
options=("${normal[@]}")
if [ -n "$sanitize" ] && [ -z "$build_only" ]; then
  # The integration tests' executables come from the normal build (build/, built here first
  # when it is not already: in CI the suite's first step did it); they start this build's
  # santral (tests/CMakeLists.txt, SANTRAL_INTEGRATION_TESTS_FROM).
  (unset CXX; cmake -S "$root" -B "$root/build" "${normal[@]}" >/dev/null)
  cmake --build "$root/build" -j"$(nproc)" | { grep -E "error|warning" || true; }
fi
if [ -n "$sanitize" ]; then
  export CXX=clang++
  # Precompiled headers with clang too: a quarter less CPU for the sanitized builds (santral's
  # backend and routes libraries under ASan: 411 -> 318 s, 2026-12-07).
  options=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 -DSANTRAL_SANITIZE="$sanitize"
    -DSANTRAL_INTEGRATION_TESTS_FROM="$root/build" -DSANTRAL_PCH=ON)
  [ "$sanitize" = address ] && options+=(-DSANTRAL_FUZZ=ON)
  # One thread has no races: under TSan only the unit tests marked THREADS (tests/CMakeLists.txt).
  [ "$sanitize" = thread ] && options+=(-DSANTRAL_ALL_UNIT_TESTS=OFF)
fi
cmake -S "$root" -B "$dir" "${options[@]}" >/dev/null
# A failed build fails the pipeline (pipefail), whatever grep found.
cmake --build "$dir" -j"$(nproc)" | { grep -E "error|warning" || true; }
[ -n "$build_only" ] && exit 0

reports=""
if [ -n "$sanitize" ]; then
  reports="$dir/sanitizer-reports"
  rm -rf "$reports" && mkdir -p "$reports"
  supp="$root/tests/sanitizers"
  export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:abort_on_error=1:strict_string_checks=1"
  export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp"
  export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
fi

cd "$dir"
status=0
# One test more than there are cores in the normal build: its tests spend about a third of
# their time waiting on their servers (two cores were 66 % busy at -j2, 2026-12-07); a
# sanitized santral keeps the cores busy by itself (85 % and more).
jobs="$(nproc)"
[ -z "$sanitize" ] && jobs=$((jobs + 1))
ctest --output-on-failure -j"$jobs" "${ctest_args[@]}" || status=$?
if [ -n "$reports" ] && [ -n "$(ls -A "$reports")" ]; then
  echo "sanitizer reports:" >&2
  for report in "$reports"/*; do
    echo "== $report" >&2
    head -60 "$report" >&2
  done
  status=1
fi
exit "$status"

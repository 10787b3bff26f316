#!/usr/bin/env bash
# Runs Redis 7.0.15's own test suite (its tcl units) against Santral, as against an external
# server, and prints what passes per unit beside the totals.
#
#   scripts/redis-units.sh [options] [unit ...]        # units as Redis names them: unit/tracking
#     --santral BIN     the binary (default: build/app/santral)
#     --shards N        redis-server shards behind Santral (default 3)
#     --workers N       Santral's workers (default 2)
#     --set NAME        extended (default): the units below; default: Redis's whole list
#     --direct          no Santral: the same units against one redis-server (the reference)
#     --out DIR         keeps each unit's runtest output there (default: a temporary directory)
#
# The sources are Debian 12's redis source package (7.0.15), fetched once with `apt-get source`
# into $REDIS_UNITS_CACHE (default ~/.cache/santral-redis-units); they are never committed. The
# machine needs tclsh and deb-src lines for Debian's archive.
#
# Each unit runs against fresh shards and a fresh Santral, so what one unit leaves behind
# (CONFIG SET, scripts, functions) cannot fail the next. Tests tagged needs:repl, needs:debug,
# needs:pfdebug, needs:config-maxmemory and needs:save are skipped: Santral refuses SYNC and
# DEBUG by design and merges memory figures over shards (docs/compatibility.md). external:skip
# tests are skipped by runtest itself. With SANTRAL_BUILD_LOCK=<file>, each unit's run holds that
# lock (flock), so that it shares a small machine with builds politely.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
santral="$root/build/app/santral"
shards=3
workers=2
set_name=extended
direct=0
out=""
units=()
while [ $# -gt 0 ]; do
  case "$1" in
    --santral) santral="$(realpath "$2")"; shift 2 ;;
    --shards) shards="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --set) set_name="$2"; shift 2 ;;
    --direct) direct=1; shift ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) units+=("$1"); shift ;;
  esac
done

extended_units=(unit/tracking unit/scripting unit/functions unit/multi unit/pubsub unit/pubsubshard
  unit/introspection unit/introspection-2 unit/info-command unit/protocol unit/quit unit/auth)

cache="${REDIS_UNITS_CACHE:-$HOME/.cache/santral-redis-units}"
src="$cache/redis-7.0.15"
if [ ! -f "$src/tests/test_helper.tcl" ]; then
  mkdir -p "$cache"
  (cd "$cache" && apt-get source --download-only redis >/dev/null)
  tarball="$(ls "$cache"/redis_7.0.15.orig.tar.gz 2>/dev/null || true)"
  if [ -z "$tarball" ]; then
    echo "redis-units: apt-get source redis did not bring 7.0.15 (add deb-src lines for Debian 12)" >&2
    exit 1
  fi
  tar -xzf "$tarball" -C "$cache"
fi
# runtest looks for the binaries under src/ (redis-cli tests and the like): the installed ones.
mkdir -p "$src/src"
for b in redis-server redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
  [ -e "$src/src/$b" ] || ln -s "$(command -v "$b" || echo /usr/bin/$b)" "$src/src/$b"
done

if [ ${#units[@]} -eq 0 ]; then
  if [ "$set_name" = default ]; then
    mapfile -t units < <(cd "$src" && tclsh tests/test_helper.tcl --list-tests)
  else
    units=("${extended_units[@]}")
  fi
fi

work="$(mktemp -d /tmp/redis-units.XXXXXX)"
[ -n "$out" ] || out="$work/out"
mkdir -p "$out"
pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # A shard busy in a script that never ends ignores SIGTERM (as Redis does): kill it.
  for _ in $(seq 1 40); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.05
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_ping() {  # port
  for _ in $(seq 1 200); do
    [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.05
  done
  echo "redis-units: nothing answers PING on port $1" >&2
  return 1
}

start_servers() {  # sets $port
  local dir="$work/run" shard_lines="" i p
  rm -rf "$dir"; mkdir -p "$dir"
  local count=$shards
  [ "$direct" = 1 ] && count=1
  for i in $(seq 0 $((count - 1))); do
    p="$(free_port)"
    redis-server --port "$p" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
      --dbfilename "shard$i.rdb" --enable-debug-command local >"$dir/shard$i.log" 2>&1 &
    pids+=($!)
    wait_ping "$p"
    shard_lines+="  - {name: shard$i, address: 127.0.0.1:$p}"$'\n'
    port="$p"
  done
  [ "$direct" = 1 ] && return 0
  port="$(free_port)"
  cat >"$dir/santral.yaml" <<EOF
listen: 127.0.0.1:$port
workers: $workers
log_level: warn
shards:
$shard_lines
EOF
  "$santral" --config "$dir/santral.yaml" >"$dir/santral.log" 2>&1 &
  pids+=($!)
  wait_ping "$port"
}

tags="-needs:repl -needs:debug -needs:pfdebug -needs:config-maxmemory -needs:save"
lock=()
[ -n "${SANTRAL_BUILD_LOCK:-}" ] && lock=(flock "$SANTRAL_BUILD_LOCK")

# One unit, against fresh servers: --durable makes an error a test throws (a refused command) that
# test's failure instead of the end of the unit; a test that hangs is skipped on a rerun and
# counted as failed. Writes "passed failed skipped note" to $work/result.
run_unit() {  # unit log
  local unit="$1" log="$2" hung=() attempt skip_args=()
  for attempt in 1 2 3 4 5 6; do
    skip_args=()
    for t in "${hung[@]}"; do skip_args+=(--skiptest "$t"); done
    start_servers
    (cd "$src" && "${lock[@]}" timeout 1800 tclsh tests/test_helper.tcl --host 127.0.0.1 \
       --port "$port" --singledb --durable --clients 1 --timeout 60 --tags "$tags" \
       "${skip_args[@]}" --single "$unit" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$log") || true
    stop_all
    grep -q '^\[TIMEOUT\]:' "$log" || break
    local name
    name="$(grep -m1 '(IN PROGRESS)' "$log" | sed 's/.*(IN PROGRESS) //')"
    [ -n "$name" ] || break
    hung+=("$name")
  done
  local ok err skipped note=""
  ok=$(grep -c '^\[ok\]:' "$log" || true)
  err=$(grep -c '^\[err\]:\|^\[exception\]:' "$log" || true)
  skipped=$(grep -c '^\[skip\]:\|^\[ignore\]:' "$log" || true)
  skipped=$((skipped - ${#hung[@]}))
  err=$((err + ${#hung[@]}))
  for t in "${hung[@]}"; do echo "[err]: $t (hung: skipped on a rerun)" >>"$log"; done
  grep -q '^\[exception\]:' "$log" && note="  (stopped by an exception)"
  grep -q '^\[TIMEOUT\]:' "$log" && note="  (stopped by a test that hung)"
  echo "$ok $err $skipped$note" >"$work/result"
}

total_ok=0; total_err=0
printf '%-28s %6s %6s %6s\n' unit passed failed skipped
for unit in "${units[@]}"; do
  log="$out/$(echo "$unit" | tr / _).log"
  run_unit "$unit" "$log"
  read -r ok err skipped note <"$work/result"
  printf '%-28s %6d %6d %6d  %s\n' "$unit" "$ok" "$err" "$skipped" "$note"
  total_ok=$((total_ok + ok)); total_err=$((total_err + err))
done
echo "units: ${#units[@]}  (each unit's output: $out)"
echo "redis-units: $total_ok passed, $total_err failed"

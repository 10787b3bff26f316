# scripts/bench.sh failover: sourced by bench.sh (root, santral, and processes.sh's helpers).
# Santral in front of three shards that Redis Sentinel manages (issue 28) while their primaries
# fail. Each shard is a primary and two replicas (redis-server, no persistence, each from a
# config file of its own that Sentinel rewrites as it reconfigures the server); three sentinels
# (quorum 2, down-after-milliseconds DOWN_AFTER_MS, failover-timeout 3000, parallel-syncs 2);
# Santral (workers: 1) names the shards by sentinel_master. failover_probe.py puts load through
# Santral (8 clients: INCR on counters of every shard, SET of unique keys; every outcome kept)
# while it SIGKILLs a shard's current primary KILLS times (restarted afterwards on its port from
# its file: Sentinel makes it a replica) and SIGSTOPs one STOPS times (for down-after + 2 s at
# least, until Sentinel has switched; SIGCONT brings it back as a replica), round-robin over the
# shards, one fault at a time once every shard has settled; LOAD_RATE requests/s in all (2000).
# Twice, each with fresh processes: without write_concern, then with write_concern {replicas: 1,
# timeout_ms: 100}; one table side by side, then each run's failovers, the errors clients got,
# how many failovers Sentinel ran and Santral's log.
set -o errtrace
trap 'echo "bench.sh failover: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR
# A SIGSTOPped server would not heed stop_all's SIGTERM: continue every process first.
trap 'kill -CONT "${started_pids[@]}" 2>/dev/null || true; stop_all' EXIT

fo_kills="${KILLS:-10}"
fo_stops="${STOPS:-5}"
down_after="${DOWN_AFTER_MS:-1000}"
failover_wait="${FAILOVER_WAIT_MS:-}"
load_rate="${LOAD_RATE:-2000}"

# A redis-server's config file: <port> [<its primary's port>].
server_config() {
  echo "port $1"
  echo "bind 127.0.0.1"
  echo 'save ""'
  echo "appendonly no"
  echo "dir $work_dir/redis-$1"
  echo "logfile $work_dir/redis-$1.log"
  echo "repl-diskless-sync-delay 0"  # a full sync at once, not after waiting 5 s for others
  if [ -n "${2:-}" ]; then echo "replicaof 127.0.0.1 $2"; fi
}
# Starts (or restarts) the redis-server of <port> from its file.
start_server() {
  spawn redis-server "$work_dir/redis-$1/redis.conf"
  wait_ping "$1"
}
# A sentinel's config file: <port> <the three primaries' ports>.
sentinel_config() {
  local port="$1" i=0 primary
  shift
  echo "port $port"
  echo "bind 127.0.0.1"
  echo "dir $work_dir/sentinel-$port"
  echo "logfile $work_dir/sentinel-$port.log"
  for primary in "$@"; do
    echo "sentinel monitor s$i 127.0.0.1 $primary 2"
    echo "sentinel down-after-milliseconds s$i $down_after"
    echo "sentinel failover-timeout s$i 3000"
    echo "sentinel parallel-syncs s$i 2"
    i=$((i + 1))
  done
}
# Santral's config: <port> <sentinel addresses> <write_concern line, or empty>.
failover_santral_config() {
  echo "listen: 127.0.0.1:$1"
  echo "workers: 1"
  echo "log_level: warn"
  echo "sentinel: {addresses: [$2]}"
  if [ -n "$3" ]; then echo "$3"; fi
  if [ -n "$failover_wait" ]; then echo "failover: {wait_ms: $failover_wait}"; fi
  echo "shards:"
  for i in 0 1 2; do echo "  - {name: s$i, sentinel_master: s$i}"; done
}

# One run with fresh processes: <label> <write_concern line, or empty> <summary file>. The
# probe asks for restarts on its stdout ("restart <port>") and is answered "ok" on its stdin.
failover_run() {
  local first=${#started_pids[@]} i j port shards="" primaries=() sentinels=() addresses=""
  for i in 0 1 2; do
    local ports=()
    for j in 0 1 2; do
      port="$(free_port)"
      ports+=("$port")
      mkdir -p "$work_dir/redis-$port"
      if [ "$j" = 0 ]; then server_config "$port"; else server_config "$port" "${ports[0]}"; fi \
        >"$work_dir/redis-$port/redis.conf"
      start_server "$port"
    done
    primaries+=("${ports[0]}")
    shards+="${shards:+ }s$i=$(IFS=,; echo "${ports[*]}")"
  done
  for i in 0 1 2; do
    port="$(free_port)"
    sentinels+=("$port")
    addresses+="${addresses:+, }127.0.0.1:$port"
    mkdir -p "$work_dir/sentinel-$port"
    sentinel_config "$port" "${primaries[@]}" >"$work_dir/sentinel-$port/sentinel.conf"
    spawn redis-server "$work_dir/sentinel-$port/sentinel.conf" --sentinel
    wait_ping "$port"
  done
  local santral_port
  santral_port="$(free_port)"
  failover_santral_config "$santral_port" "$addresses" "$2" >"$work_dir/failover-$santral_port.yaml"
  start_santral "$santral" "$work_dir/failover-$santral_port.yaml" "$santral_port"

  coproc probe {
    exec /usr/bin/python3 "$root/scripts/lib/failover_probe.py" run --santral "$santral_port" \
      --sentinels "$(IFS=,; echo "${sentinels[*]}")" --shards "$shards" --kills "$fo_kills" \
      --stops "$fo_stops" --down-after-ms "$down_after" --rate "$load_rate" --label "$1" --out "$3"
  }
  # shellcheck disable=SC2154  # probe_PID: set by coproc
  local probe_pid="$probe_PID" from_probe to_probe request
  started_pids+=("$probe_pid")
  # Own copies: bash drops probe[] as soon as the coprocess has ended.
  exec {from_probe}<&"${probe[0]}" {to_probe}>&"${probe[1]}"
  while read -r request port <&"$from_probe"; do
    [ "$request" = restart ] || { echo "failover_probe.py asked for '$request $port'" >&2; exit 1; }
    start_server "$port"
    echo ok >&"$to_probe"
  done
  exec {from_probe}<&- {to_probe}>&-
  wait "$probe_pid"
  local sentinel_logs=() line failovers aborts santral_log="$work_dir/santral-$santral_port.log"
  for port in "${sentinels[@]}"; do sentinel_logs+=("$work_dir/sentinel-$port.log"); done
  failovers="$(cat "${sentinel_logs[@]}" | grep -c '+failover-end ' || true)"
  aborts="$(cat "${sentinel_logs[@]}" | grep -c 'failover-abort' || true)"
  notes+=("- $1: Sentinel ran $failovers failovers for $((fo_kills + fo_stops)) faults ($aborts aborted)."
    "  Santral's log, $(grep -c . "$santral_log" || true) lines at warn and above (the first 60):")
  while IFS= read -r line; do notes+=("    $line"); done < <(head -60 "$santral_log" | cut -c1-300)
  kill -CONT "${started_pids[@]:$first}" 2>/dev/null || true
  stop_from "$first"
}

notes=()
echo
echo "Failovers under load: 3 shards, each a primary and 2 replicas (redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), no"
echo "persistence), 3 sentinels (quorum 2, down-after-milliseconds $down_after, failover-timeout 3000),"
echo "Santral workers: 1 with sentinel_master shards${failover_wait:+ and failover.wait_ms $failover_wait}; $(date -u +%Y-%m-%d), $(nproc) cores."
echo "Load: 8 clients through Santral, $load_rate requests/s in all, half INCR of 12 counters (4 a"
echo "shard), half SET unique:<n> <n>. Faults one at a time once every shard has settled (Sentinel"
echo "agrees, 2 replicas online, Santral serves it): $fo_kills SIGKILLs of a shard's primary (restarted"
echo "once Santral serves its successor) and $fo_stops SIGSTOPs (at least down-after + 2 s, until Sentinel"
echo "has switched)."
failover_run "no write_concern" "" "$work_dir/failover-plain.json"
failover_run "write_concern 1, 100 ms" "write_concern: {replicas: 1, timeout_ms: 100}" \
  "$work_dir/failover-concern.json"
echo
/usr/bin/python3 "$root/scripts/lib/failover_probe.py" table "$work_dir/failover-plain.json" \
  "$work_dir/failover-concern.json"
echo
for line in "${notes[@]}"; do echo "$line"; done

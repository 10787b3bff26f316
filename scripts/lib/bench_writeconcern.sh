# scripts/bench.sh writeconcern: sourced by bench.sh (root, santral, requests, clients, repeat,
# median, and processes.sh's helpers). What write_concern costs: one primary and one replica
# (redis-server), and over that primary two Santrals (workers: 1), one without write_concern and
# one with write_concern {replicas: 1, timeout_ms: 100}. redis-benchmark -c CLIENTS -n REQUESTS
# -r 100000 SET at -P 1 and -P 16 against each, REPEAT times interleaved (median shown):
# requests/s, Santral's CPU time per request (utime + stime from /proc, all its threads), p50
# latency (redis-benchmark's), and how many SETs each WAIT covered (the primary's commandstats).
set -o errtrace
trap 'echo "bench.sh writeconcern: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR

primary_port="$(free_port)"
replica_port="$(free_port)"
start_redis "$primary_port"
start_redis "$replica_port" --replicaof 127.0.0.1 "$primary_port"
for _ in $(seq 1 200); do
  redis-cli -p "$primary_port" info replication | grep -q 'state=online' && break
  sleep 0.05
done
redis-cli -p "$primary_port" info replication | grep -q 'state=online' ||
  { echo "the replica on port $replica_port did not come online within 10 s" >&2; exit 1; }

# Santral's config over the primary: <port> [<write_concern line> <admin port>].
wc_santral_config() {
  echo "listen: 127.0.0.1:$1"
  echo "workers: 1"
  echo "log_level: warn"
  if [ -n "${2:-}" ]; then printf '%s\nadmin: {listen: 127.0.0.1:%s}\n' "$2" "$3"; fi
  echo "shards:"
  echo "  - {name: s0, address: 127.0.0.1:$primary_port}"
}
plain_port="$(free_port)"
wc_santral_config "$plain_port" >"$work_dir/santral-plain.yaml"
start_santral "$santral" "$work_dir/santral-plain.yaml" "$plain_port"
concern_port="$(free_port)" concern_admin="$(free_port)"
wc_santral_config "$concern_port" "write_concern: {replicas: 1, timeout_ms: 100}" "$concern_admin" \
  >"$work_dir/santral-concern.yaml"
start_santral "$santral" "$work_dir/santral-concern.yaml" "$concern_port"
plain_pid="$(pid_on_port "$plain_port")" concern_pid="$(pid_on_port "$concern_port")"

# CPU ticks (utime + stime, all threads) of a process so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# WAITs the primary has run so far.
waits() {
  redis-cli -p "$primary_port" info commandstats | tr -d '\r' |
    sed -n 's/^cmdstat_wait:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0
}

# "<requests/s> <µs of Santral's CPU per request> <p50 ms> <WAITs on the primary>" of one
# redis-benchmark SET run: <port> <Santral's pid> <pipeline>
wc_measure() {
  local before after waits_before out
  before="$(cpu_ticks "$2")" waits_before="$(waits)"
  out="$(redis-benchmark -p "$1" -c "$clients" -n "$requests" -r 100000 -P "$3" -q -t set 2>/dev/null |
    tr '\r' '\n' | grep 'requests per second' | tail -1)"
  after="$(cpu_ticks "$2")"
  awk -v line="$out" -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" -v n="$requests" \
    -v w="$(($(waits) - waits_before))" 'BEGIN {
      split(line, word, " "); p50 = line; sub(/.*p50=/, "", p50); sub(/ msec.*/, "", p50)
      printf "%s %.2f %s %d\n", word[2], t / hz * 1e6 / n, p50, w }'
}

# <a> / <b>, two decimals.
wc_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo
echo "write_concern: SET through Santral (workers: 1) over one primary with one replica (redis-server"
echo "$(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), loopback), without it and with {replicas: 1, timeout_ms: 100};"
echo "$(date -u +%Y-%m-%d), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');"
echo "redis-benchmark -c $clients -n $requests -r 100000 -t set, median of $repeat interleaved runs per cell"
echo
printf "| %2s | %10s | %10s | %5s | %11s | %11s | %5s | %7s | %7s | %5s | %8s |\n" P "req/s off" "req/s on" ratio \
  "CPU µs off" "CPU µs on" ratio "p50 off" "p50 on" ratio "SETs per"
printf "| %2s | %10s | %10s | %5s | %10s | %10s | %5s | %7s | %7s | %5s | %8s |\n" "" "" "" "" "" "" "" "ms" "ms" "" "WAIT"
printf "|%s|\n" "----|------------|------------|-------|------------|------------|-------|---------|---------|-------|----------"
for pipeline in 1 16; do
  rps_off="" rps_on="" cpu_off="" cpu_on="" p50_off="" p50_on="" per_wait=""
  for _ in $(seq 1 "$repeat"); do
    read -r r c p _ < <(wc_measure "$plain_port" "$plain_pid" "$pipeline")
    rps_off+=" $r" cpu_off+=" $c" p50_off+=" $p"
    read -r r c p w < <(wc_measure "$concern_port" "$concern_pid" "$pipeline")
    rps_on+=" $r" cpu_on+=" $c" p50_on+=" $p"
    per_wait+=" $(awk -v n="$requests" -v w="$w" 'BEGIN { if (w > 0) printf "%.1f", n / w; else print 0 }')"
  done
  rps_off="$(median <<<"$rps_off")" rps_on="$(median <<<"$rps_on")"
  cpu_off="$(median <<<"$cpu_off")" cpu_on="$(median <<<"$cpu_on")"
  p50_off="$(median <<<"$p50_off")" p50_on="$(median <<<"$p50_on")"
  printf "| %2s | %10.0f | %10.0f | %5s | %10s | %10s | %5s | %7s | %7s | %5s | %8s |\n" "$pipeline" \
    "$rps_off" "$rps_on" "$(wc_ratio "$rps_on" "$rps_off")" "$cpu_off" "$cpu_on" "$(wc_ratio "$cpu_on" "$cpu_off")" \
    "$p50_off" "$p50_on" "$(wc_ratio "$p50_on" "$p50_off")" "$(median <<<"$per_wait")"
done
echo
echo "ratio: with write_concern / without. NOREPLICAS answers: $(curl -s "http://127.0.0.1:$concern_admin/metrics" |
  awk '/^santral_shard_writes_unconfirmed_total/ {n += $NF} END {print n + 0}'); the replica holds"
echo "$(redis-cli -p "$replica_port" dbsize) keys, the primary $(redis-cli -p "$primary_port" dbsize)."

# scripts/bench.sh hotkey: sourced by bench.sh once its four shards run (shard_ports,
# santral_config, santral, requests, clients, repeat, median, ratio).
#
# 1. redis-benchmark INCR on one key (no -r: a single hot key) through Santral with salting off
#    and on: requests/s, and the busiest shard's share of all backend commands (the hot-spot
#    ratio: 100% means one shard does all the work, 25% is an even spread over four).
# 2. redis-benchmark GET on one key through Santral with the near cache off and on: requests/s,
#    the busiest shard's share and the commands all shards processed (with the cache on, the
#    hot key's reads stop reaching its shard).
# 3. The core SET/GET/INCR rows with hot-key detection on (the default) and off: requests/s and
#    Santral's CPU time per request.

hot_key="likes:500"

# start_variant <name> <extra yaml>: a one-worker Santral over the shards; sets variant_port.
start_variant() {
  variant_port="$(free_port)"
  {
    santral_config "$variant_port" 1
    printf '%s\n' "$2"
  } >"$work_dir/santral-$1.yaml"
  start_santral "$santral" "$work_dir/santral-$1.yaml" "$variant_port"
}

start_variant off ""
off_port="$variant_port"
start_variant estimate "salting: [{key: \"$hot_key\", salts: 4, reply: estimate}]"
estimate_port="$variant_port"
start_variant exact "salting: [{key: \"$hot_key\", salts: 4, reply: exact}]"
exact_port="$variant_port"
start_variant nodetect "hotkeys: {enabled: false}"
nodetect_port="$variant_port"
start_variant nearcache "near_cache: {enabled: true}"
nearcache_port="$variant_port"

# requests/s of one redis-benchmark run: <port> <pipeline> <redis-benchmark args...>
bench_rps() {
  local port="$1" pipeline="$2"
  shift 2
  redis-benchmark -p "$port" -c "$clients" -n "$requests" -P "$pipeline" -q "$@" 2>/dev/null |
    tr '\r' '\n' | awk '/requests per second/ {for (i = 1; i <= NF; i++) if ($i == "requests") print $(i-1)}' | tail -1
}

reset_shard_stats() {
  for port in "${shard_ports[@]}"; do redis-cli -p "$port" config resetstat >/dev/null; done
}
# The busiest shard's share of the commands all shards processed since the reset, in percent.
busiest_share() {
  local counts=()
  for port in "${shard_ports[@]}"; do
    counts+=("$(redis-cli -p "$port" info stats | tr -d '\r' | awk -F: '/^total_commands_processed/ {print $2}')")
  done
  printf '%s\n' "${counts[@]}" | awk '{ s += $1; if ($1 > m) m = $1 } END { if (s > 0) printf "%.0f", 100 * m / s; else print 0 }'
}

echo
echo "Hot key: redis-benchmark INCR $hot_key (one key, no -r) through Santral w=1, 4 shards,"
echo "$(date -u +%Y-%m-%d), $(nproc) cores, -c $clients -n $requests, median of $repeat interleaved runs"
echo
printf "| %-24s | %3s | %12s | %21s |\n" "salting" P "requests/s" "busiest shard's share"
printf "|%s|\n" "--------------------------|-----|--------------|-----------------------"
for pipeline in 1 16; do
  declare -A rates=() shares=()
  for _ in $(seq 1 "$repeat"); do
    for variant in off estimate exact; do
      port_var="${variant}_port"
      reset_shard_stats
      rates[$variant]+=" $(bench_rps "${!port_var}" "$pipeline" INCR "$hot_key")"
      shares[$variant]+=" $(busiest_share)"
    done
  done
  for variant in off estimate exact; do
    case "$variant" in
      off) label="off" ;;
      estimate) label="4 salts, reply estimate" ;;
      exact) label="4 salts, reply exact" ;;
    esac
    printf "| %-24s | %3s | %12.0f | %20s%% |\n" "$label" "$pipeline" \
      "$(median <<<"${rates[$variant]}")" "$(median <<<"${shares[$variant]}")"
  done
  unset rates shares
done

# The busiest shard's commands and all shards' commands since the reset: "<share%> <total>".
shard_load() {
  local counts=()
  for port in "${shard_ports[@]}"; do
    counts+=("$(redis-cli -p "$port" info stats | tr -d '\r' | awk -F: '/^total_commands_processed/ {print $2}')")
  done
  printf '%s\n' "${counts[@]}" | awk '{ s += $1; if ($1 > m) m = $1 } END { if (s > 0) printf "%.0f %d\n", 100 * m / s, s; else print "0 0" }'
}

hot_read="post:1"
redis-cli -p "$off_port" set "$hot_read" "$(head -c 100 /dev/zero | tr '\0' x)" >/dev/null
echo
echo "Hot read: redis-benchmark GET $hot_read (one key, 100-byte value) through Santral w=1,"
echo "4 shards, near cache off and on, -c $clients -n $requests, median of $repeat interleaved runs;"
echo "shard commands: all the shards processed during one run (health checks included)"
echo
printf "| %-10s | %3s | %12s | %21s | %14s |\n" "near cache" P "requests/s" "busiest shard's share" "shard commands"
printf "|%s|\n" "------------|-----|--------------|-----------------------|----------------"
# Warm up: the key becomes hot and is admitted within a tick.
redis-benchmark -p "$nearcache_port" -c "$clients" -n 20000 -q GET "$hot_read" >/dev/null 2>&1
for pipeline in 1 16; do
  declare -A rates=() shares=() totals=()
  for _ in $(seq 1 "$repeat"); do
    for variant in off nearcache; do
      port_var="${variant}_port"
      reset_shard_stats
      rates[$variant]+=" $(bench_rps "${!port_var}" "$pipeline" GET "$hot_read")"
      read -r share total < <(shard_load)
      shares[$variant]+=" $share"
      totals[$variant]+=" $total"
    done
  done
  for variant in off nearcache; do
    label="off"
    [ "$variant" = nearcache ] && label="on"
    printf "| %-10s | %3s | %12.0f | %20s%% | %14s |\n" "$label" "$pipeline" \
      "$(median <<<"${rates[$variant]}")" "$(median <<<"${shares[$variant]}")" \
      "$(median <<<"${totals[$variant]}")"
  done
  unset rates shares totals
done

echo
echo "Hot-key detection on (sample_every 16) and off: redis-benchmark -r 100000, Santral w=1;"
echo "requests/s, and Santral's own CPU time per request (less sensitive to a busy machine)"
echo
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tick_us=$((1000000 / $(getconf CLK_TCK)))
on_pid="$(pid_on_port "$off_port")"
off_pid="$(pid_on_port "$nodetect_port")"
# measure <port> <pid> <pipeline> <test>: "<requests/s> <CPU µs per request>"
measure() {
  local before after rate
  before="$(cpu_ticks "$2")"
  rate="$(bench_rps "$1" "$3" -r 100000 -t "$4")"
  after="$(cpu_ticks "$2")"
  echo "$rate $(awk -v t=$((after - before)) -v us="$tick_us" -v n="$requests" 'BEGIN { printf "%.2f", t * us / n }')"
}
printf "| %-5s | %3s | %12s | %13s | %8s | %11s | %12s | %8s |\n" test P "req/s on" "req/s off" "on / off" "CPU µs on" "CPU µs off" "on / off"
printf "|%s|\n" "-------|-----|--------------|---------------|----------|-------------|--------------|----------"
for pipeline in 1 16; do
  for t in set get incr; do
    on="" off="" on_cpu="" off_cpu=""
    for _ in $(seq 1 "$repeat"); do
      read -r rate cpu < <(measure "$off_port" "$on_pid" "$pipeline" "$t")
      on+=" $rate" on_cpu+=" $cpu"
      read -r rate cpu < <(measure "$nodetect_port" "$off_pid" "$pipeline" "$t")
      off+=" $rate" off_cpu+=" $cpu"
    done
    on="$(median <<<"$on")" off="$(median <<<"$off")"
    on_cpu="$(median <<<"$on_cpu")" off_cpu="$(median <<<"$off_cpu")"
    printf "| %-5s | %3s | %12.0f | %13.0f | %8s | %11s | %12s | %8s |\n" "${t^^}" "$pipeline" \
      "$on" "$off" "$(ratio "$on" "$off")" "$on_cpu" "$off_cpu" "$(ratio "$on_cpu" "$off_cpu")"
  done
done

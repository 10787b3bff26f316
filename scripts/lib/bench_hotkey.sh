# scripts/bench.sh hotkey: sourced by bench.sh once its four shards run (shard_ports,
# santral_config, santral, requests, clients, repeat, median, ratio).
#
# 1. redis-benchmark INCR on one key (no -r: a single hot key) through Santral with salting off
#    and on: requests/s, and the busiest shard's share of all backend commands (the hot-spot
#    ratio: 100% means one shard does all the work, 25% is an even spread over four).
# 2. The core SET/GET/INCR rows with hot-key detection on (the default) and off.

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

echo
echo "Hot-key detection on (sample_every 16) and off: redis-benchmark -r 100000, Santral w=1"
echo
printf "| %-5s | %3s | %14s | %14s | %8s |\n" test P "detection on" "detection off" "on / off"
printf "|%s|\n" "-------|-----|----------------|----------------|----------"
for pipeline in 1 16; do
  for t in set get incr; do
    on="" off=""
    for _ in $(seq 1 "$repeat"); do
      on+=" $(bench_rps "$off_port" "$pipeline" -r 100000 -t "$t")"
      off+=" $(bench_rps "$nodetect_port" "$pipeline" -r 100000 -t "$t")"
    done
    on="$(median <<<"$on")" off="$(median <<<"$off")"
    printf "| %-5s | %3s | %14.0f | %14.0f | %8s |\n" "${t^^}" "$pipeline" "$on" "$off" "$(ratio "$on" "$off")"
  done
done

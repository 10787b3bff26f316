# scripts/bench.sh pathcost: what a move in progress (the plan's moving_from) and a fleet with
# fencing cost on the request path of keys they do not concern, beside predixy. Sourced by
# bench.sh after its 4 shards are up (santral_config, predixy_config, ratio, median, requests,
# clients, repeat, and processes.sh's helpers).
#
# Every Santral has workers: 1 (predixy: 1 thread) over the same 4 shards; redis-benchmark
# -c CLIENTS -r 100000 SET and GET of key:__rand_int__, REQUESTS of them at -P 1 and 5 times as
# many at -P 16 (CPU is counted in 10 ms ticks: a run of 0.3 s would be 3% coarse), REPEAT runs
# interleaved over the targets (median shown): CPU time per request of the proxy's process
# (utime + stime from /proc, all its threads) and requests/s.
#   santral         the core tables' config
#   santral ns      the same plus a namespace "other:{id}" hashed over shard0 and shard1 (the
#                   benchmarked keys match no namespace: one pattern tried per key)
#   santral move    santral ns with a move in progress: PATHCOST_KEYS other:N keys loaded, then
#                   the namespace grown to shard0-shard2 and approved at max_keys_per_sec
#                   PATHCOST_THROTTLE, so it is still moving when the runs end (checked). Every
#                   request's keys are placed on the old map too (moving_from); the benchmarked
#                   keys never move, so none is pulled.
#   fleet lease     santral's config in a fleet (cluster:, one etcd member, poll_ms 100): the
#                   lease's write fence checked before each backend write
#   fleet acl       the same with cluster.fence: acl (each router its own shard ACL user)
# Beside them, each target's CPU with no requests at all (ms a second over PATHCOST_IDLE s:
# the walk's and the fleet's background work, which the per-request figures include).
set -o errtrace
trap 'echo "bench.sh pathcost: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR

pathcost_keys="${PATHCOST_KEYS:-30000}"
pathcost_throttle="${PATHCOST_THROTTLE:-5}"
pathcost_idle="${PATHCOST_IDLE:-10}"
pathcost_first=${#started_pids[@]}  # what this mode starts (the shards are bench.sh's)

# <port> <shards of the namespace, e.g. "shard0, shard1"> [extra yaml]
ns_config() {
  santral_config "$1" 1
  echo "admin: {listen: 127.0.0.1:$(free_port)}"
  echo "watch_file: false"
  printf 'namespaces:\n  - name: other\n    match: "other:{id}"\n    strategy: hashed\n    shards: [%s]\n' "$2"
  printf 'resharding: {batch_keys: 10, max_keys_per_sec: %s}\n' "$pathcost_throttle"
}
fleet_config() {  # <port> <etcd port> <fence>
  santral_config "$1" 1
  printf 'cluster:\n  etcd: [127.0.0.1:%s]\n  name: pathcost-%s\n  poll_ms: 100\n  fence: %s\n' "$2" "$3" "$3"
}
# One field of SANTRAL RESHARD STATUS: <port> <field>
pc_status() {
  redis-cli -p "$1" santral reshard status | tr -d '\r' |
    awk -v n="$2" 'NR % 2 == 1 && $0 == n && !found { getline v; print v; found = 1 }'
}

# After a reload that plans a move: until the plan's estimate from sampling the sources is in.
pc_planned() {  # <port>
  for _ in $(seq 1 200); do
    [ "$(pc_status "$1" state)" = planned ] && [ "$(pc_status "$1" keys_estimated)" != 0 ] && return
    sleep 0.05
  done
}

labels=() ports=()
add_target() { labels+=("$1") ports+=("$2"); }

p_plain="$(free_port)"
santral_config "$p_plain" 1 >"$work_dir/pc-plain.yaml"
start_santral "$santral" "$work_dir/pc-plain.yaml" "$p_plain"
add_target santral "$p_plain"

p_ns="$(free_port)"
ns_config "$p_ns" "shard0, shard1" >"$work_dir/pc-ns.yaml"
start_santral "$santral" "$work_dir/pc-ns.yaml" "$p_ns"
add_target "santral ns" "$p_ns"

p_move="$(free_port)"
ns_config "$p_move" "shard0, shard1" >"$work_dir/pc-move.yaml"
start_santral "$santral" "$work_dir/pc-move.yaml" "$p_move"
awk -v n="$pathcost_keys" 'BEGIN {
  for (i = 0; i < n; i++) { k = "other:" i; printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$5\r\nvalue\r\n", length(k), k }
}' | redis-cli -p "$p_move" --pipe >/dev/null
sed -i 's/shards: \[shard0, shard1\]/shards: [shard0, shard1, shard2]/' "$work_dir/pc-move.yaml"
redis-cli -p "$p_move" santral reload >/dev/null
pc_planned "$p_move"
redis-cli -p "$p_move" santral reshard approve >/dev/null
for _ in $(seq 1 100); do [ "$(pc_status "$p_move" state)" = moving ] && break; sleep 0.05; done
[ "$(pc_status "$p_move" state)" = moving ] ||
  { echo "the move of other:* is not under way: state $(pc_status "$p_move" state)" >&2; exit 1; }
add_target "santral move" "$p_move"

etcd_port="$(free_port)"
start_etcd "$etcd_port"
for fence in lease acl; do
  p="$(free_port)"
  fleet_config "$p" "$etcd_port" "$fence" >"$work_dir/pc-fleet-$fence.yaml"
  start_santral "$santral" "$work_dir/pc-fleet-$fence.yaml" "$p"
  add_target "fleet $fence" "$p"
done

if [ -n "$predixy" ]; then
  p_px="$(free_port)"
  predixy_config "$p_px" 1 >"$work_dir/pc-predixy.conf"
  start_predixy "$work_dir/pc-predixy.conf" "$p_px"
  add_target "predixy t=1" "$p_px"
fi

pids=()
for p in "${ports[@]}"; do pids+=("$(pid_on_port "$p")"); done

pc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# "<requests/s> <µs of CPU per request>": <port> <pid> <pipeline> <test>
pc_measure() {
  local before after rate n="$requests"
  [ "$3" -gt 1 ] && n=$((requests * 5))
  before="$(pc_ticks "$2")"
  rate="$(redis-benchmark -p "$1" -c "$clients" -n "$n" -r 100000 -P "$3" -q -t "$4" 2>/dev/null |
    tr '\r' '\n' | awk '/requests per second/ {for (i = 1; i <= NF; i++) if ($i == "requests") print $(i-1)}' | tail -1)"
  after="$(pc_ticks "$2")"
  awk -v r="$rate" -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" -v n="$n" \
    'BEGIN { printf "%.0f %.3f\n", r, t / hz * 1e6 / n }'
}

# Background CPU of every target with no requests, all measured over the same seconds.
idle_before=() idle_ms=()
for pid in "${pids[@]}"; do idle_before+=("$(pc_ticks "$pid")"); done
sleep "$pathcost_idle"
for i in "${!pids[@]}"; do
  idle_ms+=("$(awk -v t="$(($(pc_ticks "${pids[$i]}") - ${idle_before[$i]}))" -v hz="$(getconf CLK_TCK)" \
    -v s="$pathcost_idle" 'BEGIN { printf "%.1f", t / hz * 1000 / s }')")
done

echo
echo "The request path's extras when on: CPU time per request (µs, utime + stime of the proxy"
echo "process) and requests/s, workers: 1 / predixy 1 thread, $(date -u +%Y-%m-%d), $(nproc) cores,"
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); redis-benchmark -c $clients -r 100000, -n $requests at -P 1, $((requests * 5)) at -P 16,"
echo "median of $repeat interleaved runs per cell. ns: a namespace the benchmarked keys do not match;"
echo "move: ns with a move of other:* under way ($pathcost_keys keys, max_keys_per_sec $pathcost_throttle); fleet: one etcd"
echo "member, poll_ms 100, fence lease (the default) or acl."
echo
header="$(printf "| %-4s | %2s |" test P)"
rule="|------|----|"
for label in "${labels[@]}"; do header+="$(printf " %12s |" "$label")" rule+="--------------|"; done
header+="$(printf " %8s | %8s | %9s | %10s |" "move/ns" "ns/plain" "acl/plain" "plain/px")"
rule+="----------|----------|-----------|------------|"
rate_rows="" cpu_rows=""
for pipeline in 1 16; do
  for t in set get; do  # SET first: the GETs find values
    declare -A cpu=() rps=()
    for _ in $(seq 1 "$repeat"); do
      for i in "${!ports[@]}"; do
        read -r r c < <(pc_measure "${ports[$i]}" "${pids[$i]}" "$pipeline" "$t")
        rps[$i]+=" $r" cpu[$i]+=" $c"
      done
    done
    cpu_row="$(printf "| %-4s | %2s |" "${t^^}" "$pipeline")" rate_row="$cpu_row"
    declare -A mc=()
    for i in "${!ports[@]}"; do
      mc[$i]="$(median <<<"${cpu[$i]}")"
      cpu_row+="$(printf " %12s |" "${mc[$i]}")"
      rate_row+="$(printf " %12s |" "$(median <<<"${rps[$i]}")")"
    done
    px="${mc[5]:-0}"
    cpu_row+="$(printf " %8s | %8s | %9s | %10s |" "$(ratio "${mc[2]}" "${mc[1]}")" "$(ratio "${mc[1]}" "${mc[0]}")" \
      "$(ratio "${mc[4]}" "${mc[0]}")" "$(ratio "${mc[0]}" "$px")")"
    rate_row+="$(printf " %8s | %8s | %9s | %10s |" - - - -)"
    cpu_rows+="$cpu_row"$'\n' rate_rows+="$rate_row"$'\n'
    unset cpu rps mc
  done
done
echo "CPU time per request, µs:"
echo
echo "$header"
echo "$rule"
printf "%s" "$cpu_rows"
idle_row="$(printf "| %-7s |" idle)"
for i in "${!ports[@]}"; do idle_row+="$(printf " %12s |" "${idle_ms[$i]}")"; done
echo
echo "CPU with no requests (ms a second over $pathcost_idle s, before the runs; included in the figures above):"
echo
echo "| $(printf "%-7s" "") |$(for label in "${labels[@]}"; do printf " %12s |" "$label"; done)"
echo "|---------|$(for _ in "${labels[@]}"; do printf -- "--------------|"; done)"
echo "$idle_row"
echo
echo "Requests per second (the same runs):"
echo
echo "$header"
echo "$rule"
printf "%s" "$rate_rows"
echo
echo "The move at the end: state $(pc_status "$p_move" state), keys_moved $(pc_status "$p_move" keys_moved) of about" \
  "$((pathcost_keys / 3)) other:* keys."
echo "shard0's ACL users (fleet acl's own): $(redis-cli -p "${shard_ports[0]}" acl users | tr '\n' ' ')"

# Instructions per GET (valgrind --tool=callgrind, counted only while PATHCOST_CG_REQUESTS GETs
# at -P 1 run): the same costs without the machine's noise. The targets above are stopped first;
# each Santral then runs alone under callgrind, the move set up as above. Instructions are
# counted over the GETs, then over as long again with no requests (the walk's own work, in the
# same process): the first less the second, per GET, is the request path's.
# PATHCOST_CALLGRIND=0 leaves it out.
[ "${PATHCOST_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null || exit 0
stop_from "$pathcost_first"
cg_requests="${PATHCOST_CG_REQUESTS:-20000}"
cg_total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }
# <config> <port> [move] -> instructions per GET less the background's, the background's per
# GET, and the move's state after the GETs
cg_instructions() {
  local config="$1" port="$2" out="$work_dir/pc-cg-$2.out" pid state=- t0 t1
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" "$santral" --config "$config" \
    >"$work_dir/pc-cg-$port.log" 2>&1 &
  started_pids+=($!)
  pid=$!
  for _ in $(seq 1 600); do [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
  if [ "${3:-}" = move ]; then
    awk -v n="$pathcost_keys" 'BEGIN {
      for (i = 0; i < n; i++) { k = "other:c" i; printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$5\r\nvalue\r\n", length(k), k }
    }' | redis-cli -p "$port" --pipe >/dev/null
    sed -i 's/shards: \[shard0, shard1\]/shards: [shard0, shard1, shard2]/' "$config"
    redis-cli -p "$port" santral reload >/dev/null
    pc_planned "$port"
    redis-cli -p "$port" santral reshard approve >/dev/null
    for _ in $(seq 1 200); do [ "$(pc_status "$port" state)" = moving ] && break; sleep 0.05; done
    sleep "${PATHCOST_SETTLE:-3}"  # the walk's first pages go by
  fi
  redis-benchmark -p "$port" -c 10 -n 2000 -r 100000 -t get -q >/dev/null 2>&1  # warm up
  callgrind_control -i on "$pid" >/dev/null 2>&1
  t0="$(date +%s%N)"
  redis-benchmark -p "$port" -c 10 -n "$cg_requests" -r 100000 -t get -q >/dev/null 2>&1
  t1="$(date +%s%N)"
  callgrind_control -d "$pid" >/dev/null 2>&1  # -> $out.1: the GETs
  sleep "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')"
  callgrind_control -d "$pid" >/dev/null 2>&1  # -> $out.2: as long with no requests
  callgrind_control -i off "$pid" >/dev/null 2>&1
  [ "${3:-}" = move ] && state="$(pc_status "$port" state)"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  awk -v a="$(cg_total "$out.1")" -v b="$(cg_total "$out.2")" -v n="$cg_requests" -v s="$state" \
    'BEGIN { printf "%.0f %.0f %s\n", (a - b) / n, b / n, s }'
}
p="$(free_port)"
santral_config "$p" 1 >"$work_dir/pc-cg-plain.yaml"
read -r cg_plain cg_plain_bg _ < <(cg_instructions "$work_dir/pc-cg-plain.yaml" "$p")
p="$(free_port)"
ns_config "$p" "shard0, shard1" >"$work_dir/pc-cg-ns.yaml"
read -r cg_ns cg_ns_bg _ < <(cg_instructions "$work_dir/pc-cg-ns.yaml" "$p")
p="$(free_port)"
ns_config "$p" "shard0, shard1" >"$work_dir/pc-cg-move.yaml"
read -r cg_move cg_move_bg cg_state < <(cg_instructions "$work_dir/pc-cg-move.yaml" "$p" move)
cg_etcd="$(free_port)"
start_etcd "$cg_etcd"
declare -A cg_fleet=() cg_fleet_bg=()
for fence in lease acl; do
  p="$(free_port)"
  fleet_config "$p" "$cg_etcd" "$fence" >"$work_dir/pc-cg-fleet-$fence.yaml"
  read -r "cg_fleet[$fence]" "cg_fleet_bg[$fence]" _ < <(cg_instructions "$work_dir/pc-cg-fleet-$fence.yaml" "$p")
done
echo
echo "Instructions per GET (valgrind --tool=callgrind, $cg_requests GETs, -c 10, -P 1, the Santral process only,"
echo "less what it ran in as long again with no requests, shown after the +):"
echo "santral $cg_plain (+$cg_plain_bg), santral ns $cg_ns (+$cg_ns_bg; $(ratio "$cg_ns" "$cg_plain")x santral)," \
  "santral move $cg_move (+$cg_move_bg; $(ratio "$cg_move" "$cg_ns")x santral ns; the move after the GETs: $cg_state)," \
  "fleet lease ${cg_fleet[lease]} (+${cg_fleet_bg[lease]}; $(ratio "${cg_fleet[lease]}" "$cg_plain")x santral)," \
  "fleet acl ${cg_fleet[acl]} (+${cg_fleet_bg[acl]}; $(ratio "${cg_fleet[acl]}" "$cg_plain")x santral)."

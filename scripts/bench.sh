#!/usr/bin/env bash
# Santral beside twemproxy (nutcracker) and predixy (../shared/peers/predixy/, or $PREDIXY; left
# out when missing) over the same 4 redis-server shards. Ratios come from one run on one
# machine, so compare them, not the absolute numbers.
#   scripts/bench.sh            the core tables: requests/s and CPU time per request (the same
#                               runs) of SET/GET/INCR/MSET/MGET at -P 1 and -P 16 for nutcracker
#                               and Santral with 1 and 2 workers; p50/p99/p99.9 latency at a
#                               fixed offered load (open loop, santral-loadgen); memory per
#                               idle client connection with 10,000 and 50,000 clients
#   scripts/bench.sh callgrind  instructions per proxied GET (valgrind --tool=callgrind) of
#                               Santral and nutcracker, with each one's top functions
#   scripts/bench.sh placement  ns per route on a map of 1,000 shards (ketama, slots, 10,000
#                               ranges, 100,000 directory groups), its load time, and a reload
#                               of it in a running Santral
#   scripts/bench.sh hotkey     INCR on one hot key with salting off and on (requests/s and the
#                               busiest shard's share of backend commands), GET on one hot
#                               key with the near cache off and on, and the core rows with
#                               hot-key detection on and off
#   scripts/bench.sh cpu        CPU time per request and requests/s (the same runs) of Santral
#                               (workers: 1) beside nutcracker and predixy, and beside
#                               SANTRAL_BEFORE (an earlier santral binary) if set
#   scripts/bench.sh syscalls   system calls per request by call (strace -c -f over
#                               SYSCALL_REQUESTS GETs, SETs and MGETs of 10 at -P 1 and -P 16),
#                               nutcracker, predixy, Santral and SANTRAL_BEFORE if set
#   scripts/bench.sh tls        what TLS costs: requests/s and CPU per request with TLS clients
#                               and/or TLS shards beside plain ones and nutcracker (no TLS)
#                               (scripts/lib/bench_tls.sh)
#   scripts/bench.sh reshard    online resharding: a 4th shard added to 3 holding KEYS keys;
#                               keys/s and MB/s moved (unthrottled with each batch_keys of
#                               BATCHES, and at max_keys_per_sec THROTTLE), GET p50/p99 before
#                               and during the move (open loop, santral-loadgen), of all keys,
#                               of the keys the move does not touch (with during/before) and
#                               of the keys it moves, and one big hash (BIG_ELEMENTS fields)
#                               moved with the default and with raised timeouts
#                               (scripts/lib/bench_reshard.sh)
#   scripts/bench.sh fleet      a fleet of three routers on a three-member etcd: the time from
#                               SANTRAL MAP PUSH to every router serving it, and GET latency of
#                               keys that move during a move of the whole fleet, and with
#                               cluster.fence: acl the time from a frozen router's lease
#                               expiry to its shut-out at every shard (scripts/lib/bench_fleet.sh)
#   scripts/bench.sh failover   shards that Redis Sentinel manages (a primary and 2 replicas
#                               each, 3 sentinels) under load through Santral while primaries
#                               are SIGKILLed and SIGSTOPped: how long each shard's requests
#                               failed, requests acknowledged / failed / unknown, acknowledged
#                               writes lost, without and with write_concern
#                               (scripts/lib/bench_failover.sh)
#   scripts/bench.sh pathcost   what the request path pays for a move in progress (the plan's
#                               moving_from, for keys that do not move) and for a fleet with
#                               fencing (lease, acl): CPU per request and requests/s of GET/SET
#                               at -P 1 and -P 16 beside plain Santral and predixy
#                               (scripts/lib/bench_pathcost.sh)
#   scripts/bench.sh analyze    what SANTRAL ANALYZE costs the request path: CPU per request
#                               and requests/s of GET/SET at -P 1 and -P 16 of Santral idle and
#                               with an analysis running (SAMPLE 0.05), beside predixy
#                               (scripts/lib/bench_analyze.sh)
#   scripts/bench.sh limits     what a busy neighbour costs an unlimited client: its GET p50/p99/
#                               p99.9 (open loop) alone, beside a user at full speed without
#                               limits, and beside the same user limited (scripts/lib/bench_limits.sh)
#   scripts/bench.sh writeconcern  what write_concern {replicas: 1, timeout_ms: 100} costs: SET
#                               requests/s, CPU per request and p50 at -P 1 and -P 16 of Santral
#                               with and without it over one primary and its replica
#                               (scripts/lib/bench_writeconcern.sh)
# Environment: REQUESTS (default 200000), CLIENTS (50), IDLE ("10000 50000" idle connections),
# LOADGEN (santral-loadgen for the latency table, built into build-release),
# REPEAT (3 runs per cell, median shown), SANTRAL (a santral binary to use instead of building
# build-release). reshard: KEYS (200000), VALUE_BYTES (100), BATCHES ("100 500"), THROTTLE (20000), BIG_ELEMENTS
# (2000000; 0: no big key), BIG_WAIT (25 s before a big-key move is given up on), BEFORE_S (2 s
# of GETs before the move), GET_RATE (5000: santral-loadgen's GETs a second), GET_CONNECTIONS
# (50), SOURCE_RATE (1000: GETs a second read from a source shard directly; 0: none),
# WORKERS (1). pathcost: PATHCOST_KEYS (30000 keys of the namespace that moves),
# PATHCOST_THROTTLE (5: its max_keys_per_sec), PATHCOST_IDLE (10 s of no requests).
# failover: KILLS (10), STOPS (5), DOWN_AFTER_MS (1000, Sentinel's down-after-milliseconds),
# LOAD_RATE (2000 requests/s in all), FAILOVER_WAIT_MS (unset; when set, Santral's
# failover.wait_ms).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-core}"
case "$mode" in
  core | hotkey | cpu | syscalls | callgrind | placement | reshard | tls | fleet | failover | writeconcern | pathcost | analyze | limits) ;;
  *) echo "usage: $0 [hotkey|cpu|syscalls|callgrind|placement|reshard|tls|fleet|failover|writeconcern|pathcost|analyze|limits]" >&2; exit 2 ;;
esac
if [ -z "${SANTRAL:-}" ]; then
  "$root/scripts/install-deps.sh"
  "$root/scripts/build.sh" "$root/build-release" Release santral-only
  cmake --build "$root/build-release" -j"$(nproc)" --target santral-loadgen santral-placement-bench \
    >/dev/null
fi
source "$root/scripts/lib/processes.sh"
# 50,000 idle clients need more descriptors than the usual 1024 (root may raise the hard limit).
ulimit -Hn 120000 2>/dev/null || true
ulimit -n "$(ulimit -Hn)"

requests="${REQUESTS:-200000}"
clients="${CLIENTS:-50}"
idle="${IDLE:-10000 50000}"
loadgen="${LOADGEN:-$root/build-release/tools/loadgen/santral-loadgen}"
repeat="${REPEAT:-3}"
santral="${SANTRAL:-$root/build-release/app/santral}"

# Median of numbers on one line or several.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

if [ "$mode" = placement ]; then  # no shards
  source "$root/scripts/lib/bench_placement.sh"
  exit 0
fi
if [ "$mode" = reshard ]; then  # its own shards, fresh for every run
  source "$root/scripts/lib/bench_reshard.sh"
  exit 0
fi
if [ "$mode" = failover ]; then  # its own shards and sentinels, fresh for every run
  source "$root/scripts/lib/bench_failover.sh"
  exit 0
fi
if [ "$mode" = limits ]; then  # its own shards
  source "$root/scripts/lib/bench_limits.sh"
  exit 0
fi
if [ "$mode" = writeconcern ]; then  # its own primary and replica
  source "$root/scripts/lib/bench_writeconcern.sh"
  exit 0
fi

shard_ports=()
for i in 0 1 2 3; do
  shard_ports+=("$(free_port)")
  start_redis "${shard_ports[$i]}"
done

# The same shards, hash and distribution for every proxy.
santral_config() {  # <port> <workers>
  echo "listen: 127.0.0.1:$1"
  echo "workers: $2"
  echo "hash: murmur"
  echo "distribution: ketama"
  echo "log_level: warn"
  echo "limits: {max_clients: 60000}"
  echo "shards:"
  for i in 0 1 2 3; do echo "  - {name: shard$i, address: 127.0.0.1:${shard_ports[$i]}}"; done
}
# predixy (../shared/peers/predixy/README.md): the same shards; its own hash (placement does
# not matter to these figures), logging of errors only.
predixy_config() {  # <port> <threads>
  printf 'Name bench\nBind 127.0.0.1:%s\nWorkerThreads %s\nClientTimeout 300\n' "$1" "$2"
  for level in Verb Debug Info Notice Warn; do echo "Log${level}Sample 0"; done
  printf 'LogErrorSample 1\nAuthority {\n  Auth {\n    Mode admin\n  }\n}\n'
  printf 'StandaloneServerPool {\n  Hash crc16\n  Distribution modula\n  RefreshMethod fixed\n'
  printf '  ServerTimeout 1\n  KeepAlive 120\n'
  for i in 0 1 2 3; do printf '  Group g%s {\n    + 127.0.0.1:%s\n  }\n' "$i" "${shard_ports[$i]}"; done
  echo "}"
}
predixy="$(predixy_binary)"
nutcracker_config() {  # <port>
  echo "bench:"
  echo "  listen: 127.0.0.1:$1"
  echo "  hash: murmur"
  echo "  distribution: ketama"
  echo "  redis: true"
  echo "  servers:"
  for i in 0 1 2 3; do echo "   - 127.0.0.1:${shard_ports[$i]}:1 shard$i"; done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# CPU ticks (utime + stime, all threads) of a process so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# "<requests/s> <µs of the proxy's CPU per request>" of one redis-benchmark run:
# <port> <proxy pid, or - for none> <pipeline> <test or command...>
measure() {
  local port="$1" pid="$2" pipeline="$3"
  shift 3
  local what=(-t "$1") before=0 after=0 rate
  [ $# -gt 1 ] && what=("$@")
  [ "$pid" != - ] && before="$(cpu_ticks "$pid")"
  rate="$(redis-benchmark -p "$port" -c "$clients" -n "$requests" -r 100000 -P "$pipeline" -q "${what[@]}" 2>/dev/null |
    tr '\r' '\n' | awk '/requests per second/ {for (i = 1; i <= NF; i++) if ($i == "requests") print $(i-1)}' | tail -1)"
  [ "$pid" != - ] && after="$(cpu_ticks "$pid")"
  awk -v r="$rate" -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" -v n="$requests" -v p="$pid" \
    'BEGIN { if (p == "-") print r, "-"; else printf "%s %.2f\n", r, t / hz * 1e6 / n }'
}

if [ "$mode" = hotkey ]; then
  source "$root/scripts/lib/bench_hotkey.sh"
  exit 0
fi
if [ "$mode" = cpu ]; then
  source "$root/scripts/lib/bench_cpu.sh"
  exit 0
fi
if [ "$mode" = pathcost ]; then
  source "$root/scripts/lib/bench_pathcost.sh"
  exit 0
fi
if [ "$mode" = analyze ]; then
  source "$root/scripts/lib/bench_analyze.sh"
  exit 0
fi
if [ "$mode" = callgrind ]; then
  source "$root/scripts/lib/bench_callgrind.sh"
  exit 0
fi
if [ "$mode" = syscalls ]; then
  source "$root/scripts/lib/bench_syscalls.sh"
  exit 0
fi
if [ "$mode" = tls ]; then
  source "$root/scripts/lib/bench_tls.sh"
  exit 0
fi
if [ "$mode" = fleet ]; then
  source "$root/scripts/lib/bench_fleet.sh"
  exit 0
fi

s1_port="$(free_port)"
santral_config "$s1_port" 1 >"$work_dir/santral-w1.yaml"
start_santral "$santral" "$work_dir/santral-w1.yaml" "$s1_port"
s2_port="$(free_port)"
santral_config "$s2_port" 2 >"$work_dir/santral-w2.yaml"
start_santral "$santral" "$work_dir/santral-w2.yaml" "$s2_port"
nc_port="$(free_port)"
nutcracker_config "$nc_port" >"$work_dir/nutcracker.yml"
start_nutcracker "$work_dir/nutcracker.yml" "$nc_port"
p1_port="" p2_port=""
if [ -n "$predixy" ]; then
  p1_port="$(free_port)"
  predixy_config "$p1_port" 1 >"$work_dir/predixy-t1.conf"
  start_predixy "$work_dir/predixy-t1.conf" "$p1_port"
  p2_port="$(free_port)"
  predixy_config "$p2_port" 2 >"$work_dir/predixy-t2.conf"
  start_predixy "$work_dir/predixy-t2.conf" "$p2_port"
fi

nc_pid="$(pid_on_port "$nc_port")" s1_pid="$(pid_on_port "$s1_port")" s2_pid="$(pid_on_port "$s2_port")"
p1_pid="" p2_pid=""
[ -n "$p1_port" ] && p1_pid="$(pid_on_port "$p1_port")" p2_pid="$(pid_on_port "$p2_port")"
cpu_rows=""
# One row of each table: <label> <pipeline> <test or command...>. Each target runs $repeat
# times, interleaved with the others so that a noisy moment hits all of them; the median is
# shown. The CPU table comes from the same runs as the throughput table.
row() {
  local label="$1" pipeline="$2"
  shift 2
  local direct="" nc="" w1="" w2="" p1="" p2="" nc_cpu="" w1_cpu="" w2_cpu="" p1_cpu="" p2_cpu="" m
  for _ in $(seq 1 "$repeat"); do
    m="$(measure "${shard_ports[0]}" - "$pipeline" "$@")" direct+=" ${m% *}"
    m="$(measure "$nc_port" "$nc_pid" "$pipeline" "$@")" nc+=" ${m% *}" nc_cpu+=" ${m#* }"
    if [ -n "$p1_port" ]; then
      m="$(measure "$p1_port" "$p1_pid" "$pipeline" "$@")" p1+=" ${m% *}" p1_cpu+=" ${m#* }"
      m="$(measure "$p2_port" "$p2_pid" "$pipeline" "$@")" p2+=" ${m% *}" p2_cpu+=" ${m#* }"
    fi
    m="$(measure "$s1_port" "$s1_pid" "$pipeline" "$@")" w1+=" ${m% *}" w1_cpu+=" ${m#* }"
    m="$(measure "$s2_port" "$s2_pid" "$pipeline" "$@")" w2+=" ${m% *}" w2_cpu+=" ${m#* }"
  done
  direct="$(median <<<"$direct")" nc="$(median <<<"$nc")"
  w1="$(median <<<"$w1")" w2="$(median <<<"$w2")"
  nc_cpu="$(median <<<"$nc_cpu")" w1_cpu="$(median <<<"$w1_cpu")" w2_cpu="$(median <<<"$w2_cpu")"
  if [ -n "$p1" ]; then  # redis-benchmark gives predixy's rates with decimals
    p1="$(printf "%.0f" "$(median <<<"$p1")")" p2="$(printf "%.0f" "$(median <<<"$p2")")"
    p1_cpu="$(median <<<"$p1_cpu")" p2_cpu="$(median <<<"$p2_cpu")"
  fi
  printf "| %-9s | %3s | %15.0f | %10.0f | %10s | %10s | %9.0f | %6s | %6s | %9.0f | %6s |\n" "$label" \
    "$pipeline" "$direct" "$nc" "${p1:--}" "${p2:--}" "$w1" "$(ratio "$w1" "$nc")" \
    "$(ratio "$w1" "${p1:-0}")" "$w2" "$(ratio "$w2" "${p2:-0}")"
  cpu_rows+="$(printf "| %-9s | %3s | %10s | %10s | %10s | %9s | %6s | %6s | %9s | %6s |" "$label" \
    "$pipeline" "$nc_cpu" "${p1_cpu:--}" "${p2_cpu:--}" "$w1_cpu" "$(ratio "$w1_cpu" "$nc_cpu")" \
    "$(ratio "$w1_cpu" "${p1_cpu:-0}")" "$w2_cpu" "$(ratio "$w2_cpu" "${p2_cpu:-0}")")"$'\n'
}

echo
echo "Santral vs twemproxy $(nutcracker --version 2>&1 | head -1 | awk '{print $NF}') and predixy 1.0.5 (p t=N: N threads), $(date -u +%Y-%m-%d), $(nproc) cores,"
[ -z "$predixy" ] && echo "(no predixy here: ../shared/peers/predixy/predixy or \$PREDIXY; its columns show -)"
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); redis-benchmark -c $clients -n $requests -r 100000,"
echo "median of $repeat interleaved runs per cell"
echo
echo "Requests per second:"
echo
printf "| %-9s | %3s | %15s | %10s | %10s | %10s | %9s | %6s | %6s | %9s | %6s |\n" test P "redis (1 shard)" \
  nutcracker "predixy t=1" "predixy t=2" "santral w=1" "w1/nc" "w1/p1" "santral w=2" "w2/p2"
printf "|%s|\n" "-----------|-----|-----------------|------------|------------|------------|-----------|--------|--------|-----------|-------"
mget=(MGET)
for i in $(seq 1 10); do mget+=("key:__rand_int__"); done
for pipeline in 1 16; do
  for t in set get incr; do row "${t^^}" "$pipeline" "$t"; done
  # 10 keys each: split over the 4 shards by Santral and by nutcracker.
  row "MSET (10)" "$pipeline" mset
  row "MGET (10)" "$pipeline" "${mget[@]}"
done
echo
echo "CPU time per request, µs (utime + stime of the proxy process, all its threads, same runs):"
echo
printf "| %-9s | %3s | %10s | %10s | %10s | %9s | %6s | %6s | %9s | %6s |\n" test P nutcracker "predixy t=1" \
  "predixy t=2" "santral w=1" "w1/nc" "w1/p1" "santral w=2" "w2/p2"
printf "|%s|\n" "-----------|-----|------------|------------|------------|-----------|--------|--------|-----------|-------"
printf "%s" "$cpu_rows"

# Latency at a fixed offered load (open loop: scripts/lib/bench_latency.sh).
if [ -x "$loadgen" ]; then
  source "$root/scripts/lib/bench_latency.sh"
  peers=(nutcracker="$nc_port")
  [ -n "$p1_port" ] && peers+=("predixy t=1"="$p1_port" "predixy t=2"="$p2_port")
  latency_table "${peers[@]}" "santral w=1"="$s1_port" "santral w=2"="$s2_port"
else
  echo; echo "(no latency table: $loadgen is not built)"
fi

# Memory per idle connection: RSS before and after N clients connect and say PING. Santral
# lets a connection's read buffer go once it has read nothing for a second: the RSS is read
# after 3 s.
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
idle_cost() {  # <port> <count> -> KiB per connection
  local port="$1" count="$2" pid before after
  pid="$(pid_on_port "$port")"
  before="$(rss_kib "$pid")"
  exec {hold}> >(/usr/bin/python3 "$root/scripts/lib/idle_clients.py" "$port" "$count" >"$work_dir/idle.out")
  for _ in $(seq 1 1200); do grep -q ready "$work_dir/idle.out" 2>/dev/null && break; sleep 0.1; done
  sleep 3
  after="$(rss_kib "$pid")"
  exec {hold}>&-
  sleep 2  # the clients close; the next measurement starts from a quiet process
  awk -v a="$after" -v b="$before" -v n="$count" 'BEGIN { printf "%.2f KiB (RSS %d -> %d KiB)", (a - b) / n, b, a }'
}
fd_limit="$(ulimit -Hn)"
for count in $idle; do
  echo
  if [ "$count" -gt $((fd_limit - 2000)) ]; then
    echo "($count connections need more open files than this machine allows one process: ulimit -Hn"
    echo " is $fd_limit and may not be raised here; measured with $((fd_limit - 2000)) instead)"
    count=$((fd_limit - 2000))
  fi
  echo "Memory per idle client connection ($count connections, each sent one PING):"
  echo "  santral w=1: $(idle_cost "$s1_port" "$count")"
  echo "  nutcracker:  $(idle_cost "$nc_port" "$count")"
done

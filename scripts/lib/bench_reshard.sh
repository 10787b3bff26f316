# scripts/bench.sh reshard: sourced by bench.sh (root, santral, repeat, median, and
# processes.sh's helpers). Every run has its own 4 fresh shards and its own Santral.
#
# 1. KEYS keys (VALUE_BYTES-byte values, default 100, one in four with a TTL) are written through Santral
#    (workers: 1) to 3 shards; a 4th shard is added by rewriting the config and SANTRAL RELOAD;
#    SANTRAL RESHARD PLAN is shown, APPROVE starts the move and STATUS is polled until idle.
#    Keys and MB (by MEMORY USAGE, as STATUS counts them) moved, seconds (STATUS elapsed_s, from
#    GET /reshard), keys/s and MB/s: unthrottled with each batch_keys of BATCHES, and with
#    max_keys_per_sec THROTTLE. Beside them, other tools' published figures (not measured here).
# 2. All along, santral-loadgen GETs random loaded keys through Santral at a fixed rate (open
#    loop: GET_RATE a second over GET_CONNECTIONS connections, each request timed from its
#    intended send time), phase by phase (--until-eof, --log). Afterwards each request is
#    classed by its key (scripts/lib/phase_latency.py): "moving" when the key is on the added
#    shard after the move, "unrelated" when the move did not touch it (its owner stayed). p50/p99
#    of all, of unrelated keys before and during the move (and their ratio, per run), and of
#    moving keys during it. Beside them, a second generator reading shard0 directly (SOURCE_RATE a
#    second; 0: none): the source shard's own latency before and during the move.
# 3. One big hash (BIG_ELEMENTS fields) whose owner changes is moved along with the keys of 1:
#    its MEMORY USAGE and DUMP size, what happened, how long the move took, and how long its
#    source was blocked (the slowest GET of a client reading that shard directly); with the
#    default timeouts (resharding.migrate_timeout_ms 1000, timeouts.request_ms 2000), with
#    migrate_timeout_ms 30000 alone, and with migrate_timeout_ms 30000 and request_ms 60000. A
#    move not idle after BIG_WAIT seconds is reported as it stands and left. BIG_ELEMENTS=0
#    leaves this part out.

# set -e stops silently; say where.
set -o errtrace
trap 'echo "bench.sh reshard: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR

reshard_keys="${KEYS:-200000}"
batches="${BATCHES:-100 500}"
throttle="${THROTTLE:-20000}"
big_elements="${BIG_ELEMENTS:-2000000}"
big_wait="${BIG_WAIT:-25}"
before_s="${BEFORE_S:-2}"
reshard_workers="${WORKERS:-1}"
probe_rate="${GET_RATE:-5000}"
probe_connections="${GET_CONNECTIONS:-50}"
source_rate="${SOURCE_RATE:-1000}"
value_bytes="${VALUE_BYTES:-100}"

# The same key names as redis-benchmark's key:__rand_int__, so the probe reads loaded keys.
awk -v n="$reshard_keys" -v size="$value_bytes" 'BEGIN {
  v = ""; for (j = 0; j < size; j++) v = v "v"  # (mawk: sprintf has an 8 KB limit)
  ORS = ""
  for (i = 0; i < n; i++) {
    k = sprintf("key:%012d", i)
    if (i % 4 == 0) print "*5\r\n$3\r\nSET\r\n$" length(k) "\r\n" k "\r\n$" size "\r\n" v "\r\n$2\r\nEX\r\n$4\r\n3600\r\n"
    else print "*3\r\n$3\r\nSET\r\n$" length(k) "\r\n" k "\r\n$" size "\r\n" v "\r\n"
  }
}' >"$work_dir/load.resp"

scenario=0
ports=()
sp="" ap="" cfg="" first=0

reshard_config() {  # <shards> <extra yaml>
  echo "listen: 127.0.0.1:$sp"
  echo "workers: $reshard_workers"
  echo "hash: murmur"
  echo "distribution: ketama"
  echo "log_level: info"
  echo "watch_file: false"
  echo "drain_ms: 200"
  echo "admin: {listen: 127.0.0.1:$ap}"
  printf '%s\n' "$2"
  echo "shards:"
  for i in $(seq 0 $(($1 - 1))); do echo "  - {name: shard$i, address: 127.0.0.1:${ports[$i]}}"; done
}

# 4 fresh shards and a Santral over the first 3, with the config's own file (so its own
# resharding state file: an unfinished move is never resumed by the next run).
start_cluster() {  # <extra yaml>
  first=${#started_pids[@]}
  scenario=$((scenario + 1))
  ports=()
  for i in 0 1 2 3; do
    ports+=("$(free_port)")
    start_redis "${ports[$i]}"
  done
  sp="$(free_port)"
  ap="$(free_port)"
  cfg="$work_dir/reshard-$scenario.yaml"
  reshard_config 3 "$1" >"$cfg"
  start_santral "$santral" "$cfg" "$sp"
}

load_keys() {
  local out
  out="$(nice -n 10 redis-cli -p "$sp" --pipe <"$work_dir/load.resp" 2>&1)"
  grep -q "errors: 0, replies: $reshard_keys" <<<"$out" || { echo "loading failed: $out" >&2; exit 1; }
}

dbsize() { redis-cli -p "$1" dbsize; }
total_keys() {
  local n=0
  for port in "${ports[@]}"; do n=$((n + $(dbsize "$port"))); done
  echo "$n"
}
expires_on() { redis-cli -p "$1" info keyspace | tr -d '\r' | sed -n 's/.*expires=\([0-9]*\).*/\1/p'; }

# One field of SANTRAL RESHARD STATUS (RESP2: name, value, name, value ...).
status_field() {
  redis-cli -p "$sp" santral reshard status | tr -d '\r' |
    awk -v n="$1" 'NR % 2 == 1 && $0 == n && !found { getline v; print v; found = 1 }'
}
# GET /reshard's fields, space-separated, in the order asked (a text field only last).
reshard_json() {
  curl -s "http://127.0.0.1:$ap/reshard" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(str(d[f]) or "-" for f in sys.argv[1:]))' "$@"
}

# After SANTRAL RELOAD: until the plan's estimate from sampling is in (at most 3 s).
wait_planned() {
  for _ in $(seq 1 60); do
    [ "$(status_field keys_estimated)" != 0 ] || [ "$(status_field bytes_estimated)" != 0 ] && return
    sleep 0.05
  done
}
# After APPROVE: until STATUS says idle, at most <seconds>; 0 when it did.
wait_idle() {
  local deadline=$(($(date +%s) + $1))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    [ "$(status_field state)" = idle ] && return 0
    sleep 0.05
  done
  return 1
}

# One client GETting random loaded keys, phase by phase (latency_probe.py).
declare -A probe_fd
probe_start() {  # <name> <port>
  local fd
  # Without the other probes' inputs: each sees the end of its own when bench.sh closes it.
  exec {fd}> >(
    for other in "${probe_fd[@]}"; do eval "exec $other>&-"; done
    exec /usr/bin/python3 "$root/scripts/lib/latency_probe.py" "$2" "$reshard_keys" "$probe_rate" \
      >"$work_dir/probe-$1.out" 2>"$work_dir/probe-$1.err"
  )
  probe_fd[$1]=$fd
}
probe_phase() { echo "$2" >&"${probe_fd[$1]}"; }  # <name> <phase>
probe_stop() {  # <name>: closes its input and waits for its summary
  eval "exec ${probe_fd[$1]}>&-"
  unset "probe_fd[$1]"
  for _ in $(seq 1 600); do grep -q '^done' "$work_dir/probe-$1.out" 2>/dev/null && return; sleep 0.1; done
  echo "the latency probe $1 did not finish: $(cat "$work_dir/probe-$1.err")" >&2
}
# <name> <phase> -> requests p50 p99 p99.9 max (ms), the second of the slowest, errors
probe_result() { awk -v p="$2" '$1 == p { $1 = ""; print substr($0, 2) }' "$work_dir/probe-$1.out"; }

# santral-loadgen GETting random loaded keys at a fixed rate until its input ends; each line
# written to it starts a phase (move_once). "santral" reads through Santral; "source" reads
# shard0 (a source of the move) directly: what the shard itself does to latency.
declare -A lg_fd
lg_start() {  # <name> <port> <rate> <connections>
  [ -x "$loadgen" ] || { echo "bench.sh reshard needs santral-loadgen ($loadgen)" >&2; exit 1; }
  rm -f "$work_dir/lg-$1.out" "$work_dir/lg-$1.log"
  local fd
  # Without the other generators' inputs: each sees the end of its own when bench.sh closes it.
  exec {fd}> >(
    for other in "${lg_fd[@]}"; do eval "exec $other>&-"; done
    exec "$loadgen" --port "$2" --command get --rate "$3" --connections "$4" --keys "$reshard_keys" \
      --warmup 0 --until-eof --log "$work_dir/lg-$1.log" >"$work_dir/lg-$1.out" 2>"$work_dir/lg-$1.err"
  )
  lg_fd[$1]=$fd
}
lg_phase() { local fd; for fd in "${lg_fd[@]}"; do echo "$1" >&"$fd"; done; }
lg_stop() {  # closes their inputs, waits for their logs, and classes requests by the keys moved
  local name
  for name in "${!lg_fd[@]}"; do eval "exec ${lg_fd[$name]}>&-"; done
  redis-cli -p "${ports[3]}" --scan --pattern 'key:*' >"$work_dir/moved.keys"
  for name in "${!lg_fd[@]}"; do
    for _ in $(seq 1 300); do grep -q '^loadgen: ' "$work_dir/lg-$name.out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^loadgen: ' "$work_dir/lg-$name.out" 2>/dev/null ||
      { echo "santral-loadgen ($name) did not finish: $(cat "$work_dir/lg-$name.err")" >&2; exit 1; }
    # (its exit status is not waited for: error replies show in the classes' error counts)
    /usr/bin/python3 "$root/scripts/lib/phase_latency.py" "$work_dir/lg-$name.log" "$work_dir/moved.keys" \
      >"$work_dir/classes-$name.out"
    unset "lg_fd[$name]"
  done
}
# <name> <phase> <class> -> requests p50 p99 p99.9 max (ms), errors
lg_result() {
  awk -v p="$2" -v c="$3" '$1 == p && $2 == c { $1 = ""; $2 = ""; print substr($0, 3) }' "$work_dir/classes-$1.out"
}
# The send loop's worst lateness in ms (santral-loadgen's behind_ms) of <name>'s whole run.
lg_behind() { sed -n 's/.* behind_ms=\([0-9.]*\).*/\1/p' "$work_dir/lg-$1.out"; }

mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
per_s() { awk -v a="$1" -v s="$2" -v d="${3:-1}" -v f="${4:-%.0f}" 'BEGIN { if (s > 0) printf f, a / d / s; else print "-" }'; }

plan_text=""
checks=()

# One move of the loaded keys to the added shard with <resharding yaml>; appends to the
# run_* lists (keys, bytes, seconds, GET p50/p99 before and during, max during, and by key
# class) and to checks.
move_once() {  # <resharding yaml> <label>
  start_cluster "$1"
  load_keys
  lg_start santral "$sp" "$probe_rate" "$probe_connections"
  [ "$source_rate" -gt 0 ] && lg_start source "${ports[0]}" "$source_rate" 10
  lg_phase before
  sleep "$before_s"
  lg_phase planning
  reshard_config 4 "$1" >"$cfg"
  redis-cli -p "$sp" santral reload >/dev/null
  wait_planned
  [ -n "$plan_text" ] || plan_text="$(redis-cli -p "$sp" santral reshard plan | tr -d '\r')"
  lg_phase during
  local started ended
  started="$(date +%s%N)"
  redis-cli -p "$sp" santral reshard approve >/dev/null
  wait_idle 300 || echo "the move did not end in 300 s" >&2
  ended="$(date +%s%N)"
  lg_phase after
  lg_stop
  local keys bytes seconds errors
  read -r keys bytes seconds errors < <(reshard_json keys_moved bytes_moved elapsed_s errors)
  read -r _ p50b p99b _ <<<"$(lg_result santral before all)"
  local gets get_errors
  read -r gets p50d p99d _ maxd get_errors <<<"$(lg_result santral during all)"
  local n_ub p50_ub p99_ub n_ud p50_ud p99_ud n_md p50_md p99_md max_md p99_sb=- p99_sd=-
  read -r n_ub p50_ub p99_ub _ <<<"$(lg_result santral before unrelated)"
  read -r n_ud p50_ud p99_ud _ <<<"$(lg_result santral during unrelated)"
  read -r n_md p50_md p99_md _ max_md _ <<<"$(lg_result santral during moving)"
  if [ "$source_rate" -gt 0 ]; then
    read -r _ _ p99_sb _ <<<"$(lg_result source before all)"
    read -r _ _ p99_sd _ <<<"$(lg_result source during all)"
  fi
  run_behind+=" $(lg_behind santral)"
  run_keys+=" $keys" run_bytes+=" $bytes" run_seconds+=" $seconds"
  run_p50b+=" $p50b" run_p99b+=" $p99b" run_p50d+=" $p50d" run_p99d+=" $p99d" run_maxd+=" $maxd"
  run_n_ub+=" $n_ub" run_p50_ub+=" $p50_ub" run_p99_ub+=" $p99_ub"
  run_n_ud+=" $n_ud" run_p50_ud+=" $p50_ud" run_p99_ud+=" $p99_ud"
  run_ratio+=" $(awk -v a="$p99_ud" -v b="$p99_ub" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print 0 }')"
  run_n_md+=" $n_md" run_p50_md+=" $p50_md" run_p99_md+=" $p99_md" run_max_md+=" $max_md"
  run_p99_sb+=" $p99_sb" run_p99_sd+=" $p99_sd"
  local total on_new expires
  total="$(total_keys)" on_new="$(dbsize "${ports[3]}")" expires="$(expires_on "${ports[3]}")"
  checks+=("$(printf '%s: %s of %s keys after the move, %s on shard3 (STATUS keys_moved %s), %s of them with their TTL; STATUS errors %s; %s of %s GETs during the move answered with an error; approve to idle %.2f s (elapsed_s %.2f)' \
    "$2" "$total" "$reshard_keys" "$on_new" "$keys" "${expires:-0}" "$errors" "$get_errors" "$gets" \
    "$(awk -v a="$started" -v b="$ended" 'BEGIN { print (b - a) / 1e9 }')" "$seconds")")
  stop_from "$first"
}

# A table row: the median of $repeat moves with <resharding yaml>.
class_rows=""
move_row() {  # <label> <resharding yaml>
  run_keys="" run_bytes="" run_seconds="" run_p50b="" run_p99b="" run_p50d="" run_p99d="" run_maxd=""
  run_n_ub="" run_p50_ub="" run_p99_ub="" run_n_ud="" run_p50_ud="" run_p99_ud="" run_ratio=""
  run_n_md="" run_p50_md="" run_p99_md="" run_max_md="" run_p99_sb="" run_p99_sd="" run_behind=""
  for _ in $(seq 1 "$repeat"); do move_once "$2" "$1"; done
  local source_p99=-
  [ "$source_rate" -gt 0 ] &&
    source_p99="$(printf "%5.3f / %6.3f" "$(median <<<"$run_p99_sb")" "$(median <<<"$run_p99_sd")")"
  class_rows+="$(printf "| %-36s | %5.3f / %6.3f | %5.3f / %6.3f | %5s | %-20s | %6.3f / %6.3f | %7.1f | %11s | %14s | %6s |" "$1" \
    "$(median <<<"$run_p50_ub")" "$(median <<<"$run_p99_ub")" "$(median <<<"$run_p50_ud")" \
    "$(median <<<"$run_p99_ud")" "$(median <<<"$run_ratio")" "$(tr ' ' '\n' <<<"$run_ratio" | grep . | paste -sd, -)" \
    "$(median <<<"$run_p50_md")" "$(median <<<"$run_p99_md")" "$(median <<<"$run_max_md")" \
    "$(median <<<"$run_n_ud")/$(median <<<"$run_n_md")" "$source_p99" "$(median <<<"$run_behind")")"$'\n'

  local keys bytes seconds
  keys="$(median <<<"$run_keys")" bytes="$(median <<<"$run_bytes")" seconds="$(median <<<"$run_seconds")"
  printf "| %-36s | %10s | %9s | %7.2f | %8s | %6s | %5.3f / %6.3f | %5.3f / %6.3f | %8.1f |\n" "$1" \
    "$keys" "$(mb "$bytes")" "$seconds" "$(per_s "$keys" "$seconds")" "$(per_s "$bytes" "$seconds" 1e6 %.1f)" \
    "$(median <<<"$run_p50b")" "$(median <<<"$run_p99b")" "$(median <<<"$run_p50d")" \
    "$(median <<<"$run_p99d")" "$(median <<<"$run_maxd")"
}
published_row() {  # <label> <keys/s> <MB/s>
  printf "| %-36s | %10s | %9s | %7s | %8s | %6s | %14s | %14s | %8s |\n" "$1" - - - "$2" "$3" - - -
}

echo
echo "Resharding: add a 4th shard to a ketama ring of 3 (murmur) holding $reshard_keys keys"
echo "($value_bytes-byte values, one in four with a TTL); Santral w=$reshard_workers, redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'),"
echo "$(date -u +%Y-%m-%d), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');"
echo "median of $repeat runs per row. MB by MEMORY USAGE (what STATUS counts), 1 MB = 10^6 bytes."
echo "GET latency: santral-loadgen, open loop, $probe_rate GETs a second of random loaded keys over"
echo "$probe_connections connections through Santral, each timed from its intended send time, in ms."
echo
printf "| %-36s | %10s | %9s | %7s | %8s | %6s | %14s | %14s | %8s |\n" move "keys moved" "MB moved" seconds "keys/s" "MB/s" \
  "GET p50 / p99" "p50 / p99" "max"
printf "| %-36s | %10s | %9s | %7s | %8s | %6s | %14s | %14s | %8s |\n" "" "" "" "" "" "" "before" "during" "during"
printf "|%s|\n" "--------------------------------------|------------|-----------|---------|----------|--------|----------------|----------------|----------"
for batch in $batches; do
  move_row "Santral, unthrottled, batch_keys $batch" "resharding: {batch_keys: $batch}"
done
move_row "Santral, max_keys_per_sec $throttle" "resharding: {batch_keys: 100, max_keys_per_sec: $throttle}"
published_row "redis-cli --cluster reshard *" "~1000" -
published_row "Codis slot migration *" "~500" -
published_row "Valkey 9 atomic slot migration *" - "~1000"
echo
echo "\* published figures, not measured here (Valkey's on its own hardware)."
echo
echo "GET latency by key class, the same runs (ms, median of $repeat): unrelated keys (their owner does"
echo "not change: about 3/4 of them, on the 3 shards the move reads from) before the move and during"
echo "it, with during/before of their p99 (the median of each run's ratio, and each run's); keys"
echo "that move (each request for one pulls it first: a MIGRATE from its old owner) during it;"
echo "requests during the move, unrelated/moving (the p99's depth); GET p99 of a second generator"
echo "reading shard0, a source, directly ($source_rate a second, 10 connections): what the shard (MIGRATE"
echo "blocks its source until the target answered) and the machine do to latency without Santral;"
echo "the Santral generator's worst lateness over its run (its own delay is in its latencies)."
echo
printf "| %-36s | %14s | %14s | %5s | %-20s | %15s | %7s | %11s | %14s | %6s |\n" move "unrelated p50 /" "unrelated p50 /" "p99" \
  "p99 ratio," "moving p50 /" "moving" "requests" "shard0 direct" "behind"
printf "| %-36s | %14s | %14s | %5s | %-20s | %15s | %7s | %11s | %14s | %6s |\n" "" "p99 before" "p99 during" "ratio" "each run" "p99 during" "max" "during u/m" "p99 bef / dur" "ms"
printf "|%s|\n" "--------------------------------------|----------------|----------------|-------|----------------------|-----------------|---------|-------------|----------------|--------"
printf "%s" "$class_rows"
echo
echo "The plan (SANTRAL RESHARD PLAN after SANTRAL RELOAD, first run):"
echo
echo '```'
echo "$plan_text"
echo '```'
echo
echo "Checks:"
for check in "${checks[@]}"; do echo "- $check"; done

# --- 3. The big key ---
[ "$big_elements" -gt 0 ] || exit 0

big_key=""
big_notes=()

# A key name the 4-shard map places on shard3 (names, not addresses, place: any cluster will do).
find_moving_name() {
  local mark=${#started_pids[@]} probe_port
  probe_port="$(free_port)"
  local saved_sp="$sp" saved_ap="$ap"
  sp="$probe_port" ap="$(free_port)"
  reshard_config 4 "" >"$work_dir/names.yaml"
  sp="$saved_sp" ap="$saved_ap"
  start_santral "$santral" "$work_dir/names.yaml" "$probe_port"
  for i in $(seq 0 200); do
    # (whole replies into grep: with pipefail, a grep -q that stops early fails the pipe)
    if grep -qx shard3 <<<"$(redis-cli -p "$probe_port" santral explain get "big:$i" | tr -d '\r')"; then
      big_key="big:$i"
      break
    fi
  done
  stop_from "$mark"
  [ -n "$big_key" ] || { echo "no big:N placed on shard3" >&2; exit 1; }
}

big_once() {  # <migrate_timeout_ms> <request_ms>
  local yaml="resharding: {migrate_timeout_ms: $1}"$'\n'"timeouts: {request_ms: $2}"
  start_cluster "$yaml"
  [ -n "$big_key" ] || find_moving_name
  load_keys
  local source source_port
  local explain
  explain="$(redis-cli -p "$sp" santral explain get "$big_key" | tr -d '\r')"
  source="$(grep -m1 -x 'shard[0-9][0-9]*' <<<"$explain")"
  source_port="${ports[${source#shard}]}"
  awk -v n="$big_elements" -v k="$big_key" 'BEGIN {
    c = 1000
    for (i = 0; i < n; i += c) {
      m = (n - i < c) ? n - i : c
      printf "*%d\r\n$4\r\nHSET\r\n$%d\r\n%s\r\n", 2 + 2 * m, length(k), k
      for (j = i; j < i + m; j++) { f = sprintf("field:%09d", j); printf "$%d\r\n%s\r\n$32\r\nvalue-%026d\r\n", length(f), f, j }
    }
  }' | nice -n 10 redis-cli -p "$sp" --pipe >/dev/null
  local usage dump
  usage="$(redis-cli -p "$source_port" memory usage "$big_key" samples 0)"
  dump="$(redis-cli -p "$source_port" eval "return string.len(redis.call('dump', KEYS[1]))" 1 "$big_key")"
  big_desc="a hash of $big_elements fields ($big_key, on $source, moving to shard3): MEMORY USAGE $(mb "$usage") MB, DUMP (what MIGRATE sends) $(mb "$dump") MB"
  probe_start get "$sp"
  probe_start source "$source_port"
  probe_phase get before
  probe_phase source before
  sleep "$before_s"
  probe_phase get planning
  probe_phase source planning
  reshard_config 4 "$yaml" >"$cfg"
  redis-cli -p "$sp" santral reload >/dev/null
  wait_planned
  probe_phase get during
  probe_phase source during
  redis-cli -p "$sp" santral reshard approve >/dev/null
  local outcome
  if wait_idle "$big_wait"; then outcome="idle"; else outcome="still $(status_field state) after $big_wait s"; fi
  local state keys bytes largest seconds errors last_error
  read -r state keys bytes largest seconds errors last_error < <(reshard_json state keys_moved bytes_moved largest_key_bytes elapsed_s errors last_error)
  probe_phase get after
  probe_phase source after
  probe_stop get
  probe_stop source
  local on_source on_target
  on_source="$(redis-cli -p "$source_port" hlen "$big_key")"
  on_target="$(redis-cli -p "${ports[3]}" hlen "$big_key")"
  local where
  if [ "$on_source" = 0 ] && [ "$on_target" = "$big_elements" ]; then where="moved"
  elif [ "$on_source" = "$big_elements" ] && [ "$on_target" = "$big_elements" ]; then where="a whole copy on both shards"
  elif [ "$on_source" = "$big_elements" ]; then where="not moved"
  else where="source $on_source fields, target $on_target"; fi
  # STATUS counts a key when its MIGRATE's answer came back (MEMORY USAGE, 5 samples, as size).
  local counted=no
  [ "$largest" -gt $((usage / 2)) ] && counted=yes
  local smax gets gp99 gmax get_errors
  read -r _ _ _ _ smax _ _ <<<"$(probe_result source during)"
  read -r gets _ gp99 _ gmax _ get_errors <<<"$(probe_result get during)"
  printf "| %10s | %10s | %-27s | %-7s | %-24s | %7.1f | %10.0f | %6.1f / %6.0f | %13s | %6s |\n" "$1" "$2" \
    "$where" "$counted" "$outcome" "$seconds" "$smax" "$gp99" "$gmax" "$get_errors of $gets" "$errors"
  local log="$work_dir/santral-$sp.log"
  big_notes+=("migrate_timeout_ms $1, request_ms $2: state $state, $errors errors, bytes_moved $(mb "$bytes") MB, largest_key_bytes $(mb "$largest") MB, shard3 holds $(dbsize "${ports[3]}") keys (STATUS keys_moved $keys), $(grep -c 'did not answer within' "$log" || true) request timeouts and $(grep -c 'resharding: MIGRATE from' "$log" || true) failed MIGRATEs in Santral's log; last_error at the end: ${last_error:--}")
  while IFS= read -r line; do big_notes+=("    $line"); done < <({ grep -m4 -E 'did not answer within|resharding: MIGRATE from|resharding paused' "$log" || true; } | cut -c1-300)
  stop_from "$first"
}

echo
echo "The largest key: one big hash among the $reshard_keys keys, moved with them (unthrottled, batch_keys 100)."
echo
{
  printf "| %10s | %10s | %-27s | %-7s | %-24s | %7s | %10s | %15s | %13s | %6s |\n" "migrate_" "timeouts." "the big key" "in" "move" "seconds" "source" "Santral GET" "GETs answered" "STATUS"
  printf "| %10s | %10s | %-27s | %-7s | %-24s | %7s | %10s | %15s | %13s | %6s |\n" "timeout_ms" "request_ms" "" "STATUS" "" "" "blocked ms" "p99 / max (ms)" "with an error" "errors"
  printf "|%s|\n" "------------|------------|-----------------------------|---------|--------------------------|---------|------------|-----------------|---------------|--------"
  big_once 1000 2000
  big_once 30000 2000
  big_once 30000 60000
} >"$work_dir/big.table"
echo "Big key: $big_desc."
echo
cat "$work_dir/big.table"
echo
echo "\"in STATUS\": whether STATUS counted the big key moved (largest_key_bytes, bytes_moved);"
echo "\"source blocked\": the slowest GET of a client reading the big key's source directly while it"
echo "moved; \"seconds\": STATUS elapsed_s when it went idle, or when given up on; Santral GET: the"
echo "client of the first table, through Santral, during the move (a GET that waits holds back"
echo "the next, so p99 undercounts a stall: see max)."
echo
for note in "${big_notes[@]}"; do echo "- $note"; done

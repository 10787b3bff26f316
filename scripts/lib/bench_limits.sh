# scripts/bench.sh limits: sourced by bench.sh (root, santral, clients, loadgen, and
# processes.sh's helpers). What a busy neighbour costs a user without limits, with and without
# limits on the neighbour: two shards (redis-server) and three Santrals (workers: 2) over
# them, alike but for `users: [{name: batch, limits: {requests_per_s: LIMIT_RATE}}]` on the
# second, and the same with `wait_ms: LIMIT_WAIT_MS` on the third (over-limit requests wait for
# their token, and a refused connection is not read for wait_ms). An
# unlimited client (santral-loadgen as user app, GET at LIMITS_RATE a second, open loop, logged
# in as user `app`: with `users:` every client logs in) is timed alone, beside `batch` within its
# limit, and beside `batch` sending GETs flat out (santral-loadgen far above what Santral
# serves, CLIENTS connections), and beside `batch` as clients that wait for each reply and
# retry at once when refused: its p50/p99/p99.9, and what the neighbour got served and refused.
# Environment also: RETRYING_CLIENTS (200), REPEAT (3).
# Environment: LIMITS_RATE (5000), LIMIT_RATE (1000), LIMIT_WAIT_MS (100), LIMITS_SECONDS (10),
# NEIGHBOUR_RATE (40000).
set -o errtrace
trap 'echo "bench.sh limits: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR

limits_rate="${LIMITS_RATE:-5000}"
limit_rate="${LIMIT_RATE:-1000}"
limits_seconds="${LIMITS_SECONDS:-10}"
limit_wait_ms="${LIMIT_WAIT_MS:-100}"
limit_shards=("$(free_port)" "$(free_port)")
for port in "${limit_shards[@]}"; do start_redis "$port"; done

limits_config() {  # <port> <the batch user's limits line, or "">
  echo "listen: 127.0.0.1:$1"
  echo "workers: 2"
  echo "log_level: warn"
  echo "users:"
  echo "  - name: app"
  echo "    password: app-pw"
  echo "  - name: batch"
  echo "    password: batch-pw"
  if [ -n "$2" ]; then echo "    $2"; fi
  echo "shards:"
  echo "  - {name: s0, address: 127.0.0.1:${limit_shards[0]}}"
  echo "  - {name: s1, address: 127.0.0.1:${limit_shards[1]}}"
}
open_port="$(free_port)" limited_port="$(free_port)" waiting_port="$(free_port)"
limits_config "$open_port" "" >"$work_dir/santral-$open_port.yaml"
limits_config "$limited_port" "limits: {requests_per_s: $limit_rate}" \
  >"$work_dir/santral-$limited_port.yaml"
limits_config "$waiting_port" "limits: {requests_per_s: $limit_rate, wait_ms: $limit_wait_ms}" \
  >"$work_dir/santral-$waiting_port.yaml"
app_cli() { redis-cli -p "$1" --user app --pass app-pw --no-auth-warning "${@:2}"; }
declare -A santral_pid
for port in "$open_port" "$limited_port" "$waiting_port"; do
  spawn "$santral" --config "$work_dir/santral-$port.yaml" >"$work_dir/santral-$port.log" 2>&1
  santral_pid[$port]="${started_pids[-1]}"
  for _ in $(seq 1 200); do [ "$(app_cli "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.05; done
  [ "$(app_cli "$port" ping 2>/dev/null)" = PONG ] || { echo "Santral on $port did not answer" >&2; exit 1; }
done
for port in "$open_port" "$limited_port" "$waiting_port"; do
  redis-benchmark -p "$port" --user app -a app-pw -n 20000 -r 100000 -q -t set >/dev/null 2>&1
done

# "p50 p99 p99.9" (µs) of the unlimited client: <port>
limits_probe() {
  "$loadgen" --port "$1" --command get --rate "$limits_rate" --duration "$limits_seconds" \
    --warmup 1 --connections 20 --keys 100000 --user app --password app-pw 2>&1 |
    awk '/^loadgen: / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                        print v["p50_us"], v["p99_us"], v["p999_us"] }'
}
# The neighbour, for as long as the probe runs (its pid): santral-loadgen as user batch, open
# loop at <rate> GETs a second (NEIGHBOUR_RATE, 40000: more than Santral serves here, so it
# is always behind and sends flat out). Not redis-benchmark: it exits at the first error reply,
# so a refused neighbour stopped within its first second (stop 50's run: 562 refused in all).
# At nice 19: a generator that cannot send (its connections held) spins on its schedule and
# would take a core of this 2-core machine from Santral and the probe; a neighbour's own CPU
# is on its own machine in a real deployment, and what is measured here is the router's.
neighbour() {  # <port> <rate>
  nice -n 19 "$loadgen" --port "$1" --command get --rate "$2" \
    --duration "$((limits_seconds + 2))" --warmup 0 --connections "$clients" --keys 100000 \
    --user batch --password batch-pw >"$work_dir/neighbour.out" 2>&1 &
  echo $!
}
# The same tenant as clients that wait for each reply and retry at once when refused
# (retrying_clients.py, RETRYING_CLIENTS connections, 200: more than LIMIT_RATE x wait_ms
# allows to wait, so that some are refused): held, they send nothing and cost nothing.
retrying_neighbour() {  # <port>
  nice -n 19 /usr/bin/python3 "$root/scripts/lib/retrying_clients.py" "$1" \
    "${RETRYING_CLIENTS:-200}" "$((limits_seconds + 2))" batch batch-pw \
    >"$work_dir/neighbour.out" 2>&1 &
  echo $!
}
refused_by() {  # <port>: refused_requests of the batch user so far
  app_cli "$1" info santral | tr -d '\r' |
    sed -n 's/^user_limits_batch:.*refused_requests=\([0-9]*\),.*/\1/p' | grep . || echo 0
}
cpu_ticks() {  # <port>: the CPU time (user + system, clock ticks) of that port's Santral
  awk '{ print $14 + $15 }' "/proc/${santral_pid[$1]}/stat"
}
requests_by() {  # <port>: the GETs Santral counted
  app_cli "$1" info commandstats | tr -d '\r' |
    sed -n 's/^cmdstat_get:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0
}

# The rows: "<port>:<neighbour's rate, 0 for none>:<what>". Each is run REPEAT times,
# interleaved (every row once, then again): this machine is shared, and a p99 of one run can
# be a neighbour's hiccup. The table has each figure's median, the neighbour's from the last.
full="${NEIGHBOUR_RATE:-40000}"
# A rate of "retrying" is retrying_neighbour's.
rows=("$open_port:0:nothing (alone)"
  "$limited_port:$limit_rate:batch within its limit ($limit_rate/s), requests_per_s: $limit_rate"
  "$open_port:$full:batch at full speed, no limit"
  "$limited_port:$full:batch at full speed, requests_per_s: $limit_rate"
  "$waiting_port:$full:batch at full speed, requests_per_s: $limit_rate, wait_ms: $limit_wait_ms"
  "$limited_port:retrying:batch retrying at once, requests_per_s: $limit_rate"
  "$waiting_port:retrying:batch retrying at once, requests_per_s: $limit_rate, wait_ms: $limit_wait_ms")
declare -A runs got_by
for _ in $(seq 1 "$repeat"); do
  for row in "${rows[@]}"; do
    IFS=: read -r port rate what <<<"$row"
    before_get="$(requests_by "$port")" before_refused="$(refused_by "$port")"
    pid=""
    case "$rate" in
      0) ;;
      retrying) pid="$(retrying_neighbour "$port")" ;;
      *) pid="$(neighbour "$port" "$rate")" ;;
    esac
    ticks_before="$(cpu_ticks "$port")"
    figures="$(limits_probe "$port")"
    cpu_ms=$((($(cpu_ticks "$port") - ticks_before) * 1000 / $(getconf CLK_TCK)))
    [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; }
    # Santral's GET count holds the probe's too (LIMITS_RATE a second, warm-up included).
    got=$(($(requests_by "$port") - before_get - limits_rate * (limits_seconds + 1)))
    [ "$got" -ge 0 ] || got=0
    refused=$(($(refused_by "$port") - before_refused))
    runs[$row]+="$figures $cpu_ms"$'\n'
    got_by[$row]="$((got / (limits_seconds + 1)))/s served, $refused refused"
  done
done
median() {  # <column 1-4> <lines of "p50 p99 p99.9 cpu_ms">
  sort -n -k"$1","$1" <<<"$2" | awk -v c="$1" 'NF { v[n++] = $c } END { print v[int((n - 1) / 2)] }'
}

printf '\n## A busy neighbour: an unlimited client'"'"'s GETs (%s/s, open loop), p50/p99/p99.9 µs\n\n' \
  "$limits_rate"
printf '| %-56s | %8s | %8s | %8s | %-30s | %11s |\n' "beside" "p50" "p99" "p99.9" \
  "the neighbour (batch) got" "Santral CPU"
printf '|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..58})" "----------" "----------" "----------" \
  "$(printf -- '-%.0s' {1..32})" "-------------"
ratios=()
for row in "${rows[@]}"; do
  IFS=: read -r port rate what <<<"$row"
  p50="$(median 1 "${runs[$row]}")" p99="$(median 2 "${runs[$row]}")"
  p999="$(median 3 "${runs[$row]}")" cpu="$(median 4 "${runs[$row]}")"
  printf '| %-56s | %8s | %8s | %8s | %-30s | %8s ms |\n' "$what" "$p50" "$p99" "$p999" \
    "$([ "$rate" = 0 ] && echo - || echo "${got_by[$row]}")" "$cpu"
  case "$what" in
    "nothing (alone)") alone99="$p99" ;;
    "batch within its limit"*) within99="$p99" ;;
    *) ratios+=("$what: $(awk -v a="$alone99" -v w="$within99" -v b="$p99" 'BEGIN {
         if (a > 0 && w > 0) printf "%.2fx alone, %.2fx beside it within its limit", b / a, b / w
         else print "-" }')") ;;
  esac
done
printf '\np99 beside the neighbour (median of %s interleaved runs):\n' "$repeat"
printf -- '- %s\n' "${ratios[@]}"

# scripts/bench.sh limits: sourced by bench.sh (root, santral, clients, loadgen, and
# processes.sh's helpers). What a busy neighbour costs a user without limits, with and without
# limits on the neighbour: two shards (redis-server) and two Santrals (workers: 2) over them,
# alike but for `users: [{name: batch, limits: {requests_per_s: LIMIT_RATE}}]` on one. An
# unlimited client (santral-loadgen as user app, GET at LIMITS_RATE a second, open loop)
# is timed alone, then beside `batch` sending GETs flat out (santral-loadgen far above what
# Santral serves, CLIENTS connections): its p50/p99/p99.9, and what the neighbour got served
# and refused. The
# unlimited client logs in as user `app` (with `users:` every client logs in).
# Environment: LIMITS_RATE (5000), LIMIT_RATE (1000), LIMITS_SECONDS (10), NEIGHBOUR_RATE (40000).
set -o errtrace
trap 'echo "bench.sh limits: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR

limits_rate="${LIMITS_RATE:-5000}"
limit_rate="${LIMIT_RATE:-1000}"
limits_seconds="${LIMITS_SECONDS:-10}"
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
open_port="$(free_port)" limited_port="$(free_port)"
limits_config "$open_port" "" >"$work_dir/santral-open.yaml"
limits_config "$limited_port" "limits: {requests_per_s: $limit_rate}" >"$work_dir/santral-limited.yaml"
app_cli() { redis-cli -p "$1" --user app --pass app-pw --no-auth-warning "${@:2}"; }
for port in "$open_port" "$limited_port"; do
  spawn "$santral" --config "$work_dir/santral-$([ "$port" = "$open_port" ] && echo open || echo limited).yaml" \
    >"$work_dir/santral-$port.log" 2>&1
  for _ in $(seq 1 200); do [ "$(app_cli "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.05; done
  [ "$(app_cli "$port" ping 2>/dev/null)" = PONG ] || { echo "Santral on $port did not answer" >&2; exit 1; }
done
for port in "$open_port" "$limited_port"; do
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
# loop at NEIGHBOUR_RATE (40000) GETs a second, more than Santral serves here, so it is always
# behind and sends flat out. Not redis-benchmark: it exits at the first error reply, so a
# refused neighbour stopped within its first second (stop 50's run: 562 refused in all).
neighbour() {  # <port>
  "$loadgen" --port "$1" --command get --rate "${NEIGHBOUR_RATE:-40000}" \
    --duration "$((limits_seconds + 2))" --warmup 0 --connections "$clients" --keys 100000 \
    --user batch --password batch-pw >"$work_dir/neighbour.out" 2>&1 &
  echo $!
}
refused_by() {  # <port>: refused_requests of the batch user so far
  app_cli "$1" info santral | tr -d '\r' |
    sed -n 's/^user_limits_batch:.*refused_requests=\([0-9]*\),.*/\1/p' | grep . || echo 0
}
requests_by() {  # <port>: the GETs Santral counted
  app_cli "$1" info commandstats | tr -d '\r' |
    sed -n 's/^cmdstat_get:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0
}

printf '\n## A busy neighbour: an unlimited client'"'"'s GETs (%s/s, open loop), p50/p99/p99.9 µs\n\n' \
  "$limits_rate"
printf '| %-44s | %8s | %8s | %8s | %-30s |\n' "beside" "p50" "p99" "p99.9" "the neighbour (batch) got"
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..46})" "----------" "----------" "----------" \
  "$(printf -- '-%.0s' {1..32})"
alone="$(limits_probe "$open_port")"
read -r a50 a99 a999 <<<"$alone"
printf '| %-44s | %8s | %8s | %8s | %-30s |\n' "nothing (alone)" "$a50" "$a99" "$a999" "-"
for row in "open:$open_port:no limit" "limited:$limited_port:requests_per_s: $limit_rate"; do
  IFS=: read -r _ port what <<<"$row"
  before_get="$(requests_by "$port")" before_refused="$(refused_by "$port")"
  pid="$(neighbour "$port")"
  figures="$(limits_probe "$port")"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # Santral's GET count holds the probe's too (LIMITS_RATE a second, warm-up included).
  got=$(($(requests_by "$port") - before_get - limits_rate * (limits_seconds + 1)))
  [ "$got" -ge 0 ] || got=0
  refused=$(($(refused_by "$port") - before_refused))
  read -r p50 p99 p999 <<<"$figures"
  printf '| %-44s | %8s | %8s | %8s | %-30s |\n' "batch at full speed, $what" "$p50" "$p99" "$p999" \
    "$((got / (limits_seconds + 1)))/s served, $refused refused"
done
printf '\np99 beside the limited neighbour / alone: %s\n' \
  "$(awk -v a="$a99" -v b="$p99" 'BEGIN { if (a > 0) printf "%.2fx", b / a; else print "-" }')"

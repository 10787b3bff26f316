# scripts/bench.sh analyze: sourced by bench.sh after the 4 shards are up (root, santral,
# requests, clients, repeat, median, measure, ratio, santral_config, predixy_config, predixy and
# processes.sh's helpers). What SANTRAL ANALYZE costs the request path: two Santrals (workers:
# 1) over the same shards, one idle and one with an analysis running through the whole bench
# (SANTRAL ANALYZE key:* SECONDS 3600 at the default SAMPLE 0.05, so every request is a
# candidate for sampling), and predixy (1 thread) beside them. redis-benchmark GET and SET at
# -P 1 and -P 16, REPEAT times interleaved (median shown): requests/s and CPU time per request.
# The analysis keeps at most 500,000 samples per worker; the bench sends REPEAT x 4 x REQUESTS
# requests to it (2,400,000 at the defaults: about 120,000 sampled), so it never reaches that.
set -o errtrace
trap 'echo "bench.sh analyze: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR

idle_port="$(free_port)"
santral_config "$idle_port" 1 >"$work_dir/santral-idle.yaml"
start_santral "$santral" "$work_dir/santral-idle.yaml" "$idle_port"
busy_port="$(free_port)"
santral_config "$busy_port" 1 >"$work_dir/santral-analyzing.yaml"
start_santral "$santral" "$work_dir/santral-analyzing.yaml" "$busy_port"
idle_pid="$(pid_on_port "$idle_port")" busy_pid="$(pid_on_port "$busy_port")"
px_port="" px_pid=""
if [ -n "$predixy" ]; then
  px_port="$(free_port)"
  predixy_config "$px_port" 1 >"$work_dir/predixy-analyze.conf"
  start_predixy "$work_dir/predixy-analyze.conf" "$px_port"
  px_pid="$(pid_on_port "$px_port")"
fi

# The analysis: its client waits for the report, which never comes before the bench ends.
redis-cli -p "$busy_port" SANTRAL ANALYZE 'key:*' SECONDS 3600 >/dev/null 2>&1 &
analysis_client=$!
for _ in $(seq 1 100); do
  redis-cli -p "$busy_port" info santral | grep -q '^analysis_sample_rate:0.05' && break
  sleep 0.05
done
redis-cli -p "$busy_port" info santral | grep -q '^analysis_sample_rate:0.05' ||
  { echo "the analysis did not start on port $busy_port" >&2; exit 1; }
redis-cli -p "$idle_port" info santral | grep -q '^analysis_sample_rate:0' ||
  { echo "the idle Santral on port $idle_port samples" >&2; exit 1; }

echo
echo "SANTRAL ANALYZE's cost: Santral (workers: 1) idle and with an analysis running (SAMPLE 0.05),"
echo "and predixy (1 thread), over the same 4 redis-server shards; $(date -u +%Y-%m-%d), $(nproc) cores;"
echo "redis-benchmark -c $clients -n $requests -r 100000, median of $repeat interleaved runs per cell"
echo
printf "| %-8s | %10s | %10s | %10s | %9s | %9s | %9s | %9s | %9s |\n" test "req/s idle" "analyzing" \
  predixy "CPU idle" analyzing "ratio" predixy "idle/px"
printf "| %-8s | %10s | %10s | %10s | %9s | %9s | %9s | %9s | %9s |\n" "" "" "" "" "µs/req" "µs/req" \
  "on/idle" "µs/req" ""
printf "|%s|\n" "----------|------------|------------|------------|-----------|-----------|-----------|-----------|----------"
for pipeline in 1 16; do
  for test in get set; do
    r_idle="" r_busy="" r_px="" c_idle="" c_busy="" c_px=""
    for _ in $(seq 1 "$repeat"); do
      read -r r c < <(measure "$idle_port" "$idle_pid" "$pipeline" "$test")
      r_idle+=" $r" c_idle+=" $c"
      read -r r c < <(measure "$busy_port" "$busy_pid" "$pipeline" "$test")
      r_busy+=" $r" c_busy+=" $c"
      if [ -n "$px_port" ]; then
        read -r r c < <(measure "$px_port" "$px_pid" "$pipeline" "$test")
        r_px+=" $r" c_px+=" $c"
      fi
    done
    r_idle="$(median <<<"$r_idle")" r_busy="$(median <<<"$r_busy")"
    c_idle="$(median <<<"$c_idle")" c_busy="$(median <<<"$c_busy")"
    r_px="$(median <<<"${r_px:-0}")" c_px="$(median <<<"${c_px:-0}")"
    printf "| %-8s | %10.0f | %10.0f | %10.0f | %9s | %9s | %9s | %9s | %9s |\n" \
      "${test^^} P$pipeline" "$r_idle" "$r_busy" "$r_px" "$c_idle" "$c_busy" \
      "$(ratio "$c_busy" "$c_idle")" "$c_px" "$(ratio "$c_idle" "$c_px")"
  done
done
sampled="$(redis-cli -p "$busy_port" info santral | tr -d '\r' | sed -n 's/^analysis_sample_rate://p')"
echo
echo "ratio: CPU per request with the analysis running over idle (the goal: at most 1.03);"
echo "idle/px: idle Santral's CPU per request over predixy's. The analysis still sampled at $sampled."
kill "$analysis_client" 2>/dev/null || true

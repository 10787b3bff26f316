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

# Instructions per GET (valgrind --tool=callgrind, counted only while ANALYZE_CG_REQUESTS GETs
# run at -P 1): the same cost without the machine's noise. One Santral under callgrind, the
# GETs counted first with no analysis, then with one running at SAMPLE 0.05.
# ANALYZE_CALLGRIND=0 leaves it out.
[ "${ANALYZE_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null || exit 0
kill "$idle_pid" "$busy_pid" 2>/dev/null || true
cg_requests="${ANALYZE_CG_REQUESTS:-20000}"
cg_port="$(free_port)"
santral_config "$cg_port" 1 >"$work_dir/santral-cg.yaml"
cg_out="$work_dir/analyze-cg.out"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$cg_out" "$santral" \
  --config "$work_dir/santral-cg.yaml" >"$work_dir/analyze-cg.log" 2>&1 &
cg_pid=$!
started_pids+=("$cg_pid")
for _ in $(seq 1 600); do [ "$(redis-cli -p "$cg_port" ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
cg_total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }
# Instructions per GET of one counted run: <dump number>
cg_count() {
  callgrind_control -z "$cg_pid" >/dev/null 2>&1
  callgrind_control -i on "$cg_pid" >/dev/null 2>&1
  redis-benchmark -p "$cg_port" -c 10 -n "$cg_requests" -r 100000 -t get -q >/dev/null 2>&1
  callgrind_control -i off "$cg_pid" >/dev/null 2>&1
  callgrind_control -d "$cg_pid" >/dev/null 2>&1
  for _ in $(seq 1 100); do [ -s "$cg_out.$1" ] && break; sleep 0.1; done
  awk -v a="$(cg_total "$cg_out.$1")" -v n="$cg_requests" 'BEGIN { printf "%.0f\n", a / n }'
}
# Starts an analysis at SAMPLE 0.05 on the callgrind Santral and waits until it samples.
cg_analyze() {
  redis-cli -p "$cg_port" SANTRAL ANALYZE 'key:*' SECONDS 3600 >/dev/null 2>&1 &
  for _ in $(seq 1 300); do
    redis-cli -p "$cg_port" info santral | grep -q '^analysis_sample_rate:0.05' && return
    sleep 0.1
  done
  echo "the analysis did not start under callgrind" >&2
  exit 1
}
redis-benchmark -p "$cg_port" -c 10 -n 2000 -r 100000 -t get -q >/dev/null 2>&1  # warm up
cg_idle="$(cg_count 1)"
cg_analyze
cg_busy="$(cg_count 2)"
echo
echo "Instructions per GET (valgrind --tool=callgrind, $cg_requests GETs, -c 10, -P 1, the Santral process):"
echo "idle $cg_idle, analyzing at SAMPLE 0.05 $cg_busy ($(ratio "$cg_busy" "$cg_idle")x idle)."
kill "$cg_pid" 2>/dev/null || true

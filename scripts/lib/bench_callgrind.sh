# scripts/bench.sh callgrind: instructions per proxied GET (valgrind --tool=callgrind, counted
# only while CALLGRIND_REQUESTS GETs at -P 1 run, not at start-up), Santral (workers: 1) beside
# nutcracker and predixy over the same shards, with each one's top functions by their own
# instructions; then Santral's allocations per GET and per SET (valgrind --tool=dhat).
# Sourced by bench.sh after the shards are up.

callgrind_requests="${CALLGRIND_REQUESTS:-20000}"

# <label> <port> <command...>: runs the proxy under callgrind and prints its figures.
callgrind_proxy() {
  local label="$1" port="$2"
  shift 2
  local out="$work_dir/callgrind-$port.out"
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" "$@" \
    >"$work_dir/callgrind-$port.log" 2>&1 &
  started_pids+=($!)
  local pid=$!
  for _ in $(seq 1 600); do [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
  redis-benchmark -p "$port" -c 10 -n 2000 -r 100000 -t get -q >/dev/null 2>&1  # warm up
  callgrind_control -i on "$pid" >/dev/null
  redis-benchmark -p "$port" -c 10 -n "$callgrind_requests" -r 100000 -t get -q >/dev/null 2>&1
  callgrind_control -i off "$pid" >/dev/null
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  local total
  total="$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')"
  echo
  echo "$label: $(awk -v t="$total" -v n="$callgrind_requests" 'BEGIN { printf "%.0f", t / n }') instructions per GET ($callgrind_requests GETs, -c 10, -P 1); top functions by own instructions:"
  echo
  callgrind_annotate --threshold=90 "$out" 2>/dev/null |
    awk -v n="$callgrind_requests" '/^ *[0-9,]+ .*\(/ && !/PROGRAM TOTALS/ {
        ir = $1; gsub(",", "", ir); $1 = ""; sub(/^ +\([ 0-9.%]+\) +/, "");
        sub(/^ +/, ""); if (length($0) > 90) $0 = substr($0, 1, 87) "...";
        printf "  %7.0f  %s\n", ir / n, $0; if (++shown == 15) exit }' || true  # awk stops reading after 15
}

cg_santral_port="$(free_port)"
santral_config "$cg_santral_port" 1 >"$work_dir/santral-cg.yaml"
callgrind_proxy "santral (workers: 1)" "$cg_santral_port" "$santral" --config "$work_dir/santral-cg.yaml"
cg_nc_port="$(free_port)"
nutcracker_config "$cg_nc_port" >"$work_dir/nutcracker-cg.yml"
callgrind_proxy "nutcracker" "$cg_nc_port" nutcracker -c "$work_dir/nutcracker-cg.yml" \
  -s "$(free_port)" -a 127.0.0.1 -o "$work_dir/nutcracker-cg.log"
if [ -n "$predixy" ]; then  # stripped: its totals count, its function names do not show
  cg_px_port="$(free_port)"
  predixy_config "$cg_px_port" 1 >"$work_dir/predixy-cg.conf"
  callgrind_proxy "predixy (WorkerThreads 1)" "$cg_px_port" "$predixy" "$work_dir/predixy-cg.conf"
fi

# Allocations per proxied GET (valgrind --tool=dhat): two runs that differ only in the number
# of GETs; the difference of their totals, over the difference of the GETs, is what a request
# allocates (start-up and the connections cancel out). <requests> <test> -> "<blocks> <bytes>"
dhat_totals() {
  local requests="$1" test="$2" port log pid
  port="$(free_port)"
  log="$work_dir/dhat-$requests.log"
  santral_config "$port" 1 >"$work_dir/santral-dhat.yaml"
  valgrind --tool=dhat --dhat-out-file=/dev/null "$santral" --config "$work_dir/santral-dhat.yaml" \
    >"$log" 2>&1 &
  pid=$!
  started_pids+=($pid)
  for _ in $(seq 1 600); do [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
  redis-benchmark -p "$port" -c 10 -n "$requests" -r 100000 -t "$test" -q >/dev/null 2>&1
  kill -INT "$pid"
  wait "$pid" 2>/dev/null || true
  awk '/Total:/ {gsub(",", ""); for (i = 1; i <= NF; i++) { if ($i == "bytes") b = $(i-1); if ($i == "blocks") k = $(i-1) } print k, b; exit}' "$log"
}
[ -n "${CALLGRIND_ONLY:-}" ] && return 0
small=5000 large=25000
for test in get set; do
  read -r small_blocks small_bytes <<<"$(dhat_totals "$small" "$test")"
  read -r large_blocks large_bytes <<<"$(dhat_totals "$large" "$test")"
  [ "$test" = get ] && echo
  awk -v b1="$small_blocks" -v b2="$large_blocks" -v y1="$small_bytes" -v y2="$large_bytes" \
    -v n="$((large - small))" -v t="${test^^}" 'BEGIN { printf "santral (workers: 1): %.3f allocations and %.1f bytes allocated per %s (valgrind --tool=dhat, %d %ss against %d, -c 10)\n", (b2 - b1) / n, (y2 - y1) / n, t, n + 5000, t, 5000 }'
done

# scripts/bench.sh cpu: CPU time each proxy spends per request (utime + stime of its process,
# from /proc, over a fixed number of redis-benchmark requests), Santral (workers: 1) beside
# nutcracker and predixy (one thread) over the same shards, and beside an earlier Santral
# binary when SANTRAL_BEFORE names one. Sourced by bench.sh after the shards are up.

# CPU ticks (utime + stime) of a process so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# µs of CPU per request of the proxy on <port> (- when there is none): <port> <pipeline> <test>
cpu_us() {
  local port="$1" pipeline="$2" test="$3" pid before after
  [ -z "$port" ] && { echo -; return; }
  pid="$(pid_on_port "$port")"
  before="$(cpu_ticks "$pid")"
  redis-benchmark -p "$port" -c "$clients" -n "$requests" -r 100000 -P "$pipeline" -q -t "$test" \
    >/dev/null 2>&1
  after="$(cpu_ticks "$pid")"
  awk -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" -v n="$requests" \
    'BEGIN { printf "%.2f", t / hz * 1e6 / n }'
}

cpu_port="$(free_port)"
santral_config "$cpu_port" 1 >"$work_dir/santral-cpu.yaml"
start_santral "$santral" "$work_dir/santral-cpu.yaml" "$cpu_port"
nc_cpu_port="$(free_port)"
nutcracker_config "$nc_cpu_port" >"$work_dir/nutcracker-cpu.yml"
start_nutcracker "$work_dir/nutcracker-cpu.yml" "$nc_cpu_port"
px_cpu_port=""
if [ -n "$predixy" ]; then
  px_cpu_port="$(free_port)"
  predixy_config "$px_cpu_port" 1 >"$work_dir/predixy-cpu.conf"
  start_predixy "$work_dir/predixy-cpu.conf" "$px_cpu_port"
fi
before_port=""
if [ -n "${SANTRAL_BEFORE:-}" ]; then
  before_port="$(free_port)"
  santral_config "$before_port" 1 >"$work_dir/santral-before.yaml"
  start_santral "$SANTRAL_BEFORE" "$work_dir/santral-before.yaml" "$before_port"
fi

echo
echo "CPU time per request (µs, utime+stime of the proxy process), workers: 1, $(date -u +%Y-%m-%d),"
echo "$(nproc) cores, redis-benchmark -c $clients -n $requests -r 100000, median of $repeat interleaved runs"
echo
printf "| %-4s | %3s | %10s | %10s | %14s | %13s | %7s | %7s | %9s |\n" test P nutcracker predixy \
  "santral before" "santral now" "now/nc" "now/px" "now/before"
printf "|%s|\n" "------|-----|------------|------------|----------------|---------------|---------|---------|-----------"
for pipeline in 1 16; do
  for t in get set incr; do
    nc="" px="" now="" before=""
    for _ in $(seq 1 "$repeat"); do
      nc+=" $(cpu_us "$nc_cpu_port" "$pipeline" "$t")"
      [ -n "$px_cpu_port" ] && px+=" $(cpu_us "$px_cpu_port" "$pipeline" "$t")"
      now+=" $(cpu_us "$cpu_port" "$pipeline" "$t")"
      [ -n "$before_port" ] && before+=" $(cpu_us "$before_port" "$pipeline" "$t")"
    done
    nc="$(median <<<"$nc")" now="$(median <<<"$now")"
    [ -n "$px" ] && px="$(median <<<"$px")"
    [ -n "$before" ] && before="$(median <<<"$before")"
    printf "| %-4s | %3s | %10s | %10s | %14s | %13s | %7s | %7s | %9s |\n" "${t^^}" "$pipeline" "$nc" \
      "${px:--}" "${before:--}" "$now" "$(ratio "$now" "$nc")" "$(ratio "$now" "${px:-0}")" \
      "$(ratio "$now" "${before:-0}")"
  done
done

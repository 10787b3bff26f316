# scripts/bench.sh cpu: CPU time each proxy spends per request (utime + stime of its process,
# from /proc, over a fixed number of redis-benchmark requests) and the requests/s of the same
# runs, Santral (workers: 1) beside nutcracker and predixy (one thread) over the same shards,
# and beside an earlier Santral binary when SANTRAL_BEFORE names one. Sourced by bench.sh after
# the shards are up (measure() is bench.sh's).

# "<requests/s> <µs of CPU per request>" of the proxy on <port>, nothing when there is none:
# <port> <pipeline> <test>
run_on() {
  [ -z "$1" ] && return
  measure "$1" "$(pid_on_port "$1")" "$2" "$3"
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

declare -A cpu rate
for pipeline in 1 16; do
  for t in get set incr; do
    for _ in $(seq 1 "$repeat"); do
      for proxy in nc px now before; do
        case "$proxy" in
          nc) port="$nc_cpu_port" ;;
          px) port="$px_cpu_port" ;;
          now) port="$cpu_port" ;;
          before) port="$before_port" ;;
        esac
        read -r r c <<<"$(run_on "$port" "$pipeline" "$t")"
        rate[$proxy.$t.$pipeline]+=" ${r:-}"
        cpu[$proxy.$t.$pipeline]+=" ${c:-}"
      done
    done
  done
done

# One table of medians: <title> <name of the array: cpu or rate>
print_table() {
  local -n cells="$2"
  echo
  echo "$1, workers: 1, $(date -u +%Y-%m-%d),"
  echo "$(nproc) cores, redis-benchmark -c $clients -n $requests -r 100000, median of $repeat interleaved runs"
  echo
  printf "| %-4s | %3s | %10s | %10s | %14s | %13s | %7s | %7s | %9s |\n" test P nutcracker predixy \
    "santral before" "santral now" "now/nc" "now/px" "now/before"
  printf "|%s|\n" "------|-----|------------|------------|----------------|---------------|---------|---------|-----------"
  for pipeline in 1 16; do
    for t in get set incr; do
      local -A m=()
      for proxy in nc px now before; do
        m[$proxy]=""
        [ -n "${cells[$proxy.$t.$pipeline]// /}" ] && m[$proxy]="$(median <<<"${cells[$proxy.$t.$pipeline]}")"
      done
      printf "| %-4s | %3s | %10s | %10s | %14s | %13s | %7s | %7s | %9s |\n" "${t^^}" "$pipeline" \
        "${m[nc]}" "${m[px]:--}" "${m[before]:--}" "${m[now]}" "$(ratio "${m[now]}" "${m[nc]}")" \
        "$(ratio "${m[now]}" "${m[px]:-0}")" "$(ratio "${m[now]}" "${m[before]:-0}")"
    done
  done
}
print_table "CPU time per request (µs, utime+stime of the proxy process)" cpu
print_table "Requests per second (the same runs)" rate

# scripts/bench.sh syscalls: system calls per request of each proxy (strace -c -f attached to
# the proxy over SYSCALL_REQUESTS GETs at -P 1), by call, Santral (workers: 1) beside
# nutcracker and predixy (one thread), and beside SANTRAL_BEFORE (an earlier santral binary)
# if set. strace slows every
# call, so this counts calls; it does not time them. Sourced by bench.sh after the shards are up.

syscall_requests="${SYSCALL_REQUESTS:-50000}"

# "<call> <count>" lines for the proxy on <port> over one run: <port> <pipeline> <get|set|mget>
# (mget: MGET of 10 keys)
syscall_counts() {
  local port="$1" pipeline="$2" test="$3" pid out what=(-t "$3")
  if [ "$test" = mget ]; then
    what=(MGET)
    for _ in $(seq 1 10); do what+=("key:__rand_int__"); done
  fi
  pid="$(pid_on_port "$port")"
  out="$work_dir/strace-$port.txt"
  strace -c -f -qq -o "$out" -p "$pid" &
  local tracer=$!
  # Counting starts once strace has attached (the proxy's TracerPid is set).
  for _ in $(seq 1 50); do grep -q TracerPid:.*[1-9] "/proc/$pid/status" && break; sleep 0.1; done
  redis-benchmark -p "$port" -c "$clients" -n "$syscall_requests" -r 100000 -P "$pipeline" -q \
    "${what[@]}" >/dev/null 2>&1
  kill -INT "$tracer"
  wait "$tracer" 2>/dev/null || true
  # Rows: % time, seconds, usecs/call, calls, [errors,] syscall; failed calls get their own row.
  awk '$1 ~ /^[0-9.]+$/ && $NF != "total" {
         print $NF, $4
         if (NF == 6) print $NF "(failed)", $5
       }' "$out"
}

# Prints "| call | per request ... |" rows of one proxy, a column per test and pipeline:
# <label> <port>
syscall_table() {
  local label="$1" port="$2" pipeline test files=()
  for test in get set mget; do
    for pipeline in 1 16; do
      syscall_counts "$port" "$pipeline" "$test" >"$work_dir/calls-$port-$test-$pipeline.txt"
      files+=("$work_dir/calls-$port-$test-$pipeline.txt")
    done
  done
  echo
  echo "$label: system calls per request (strace -c -f, $syscall_requests requests, -c $clients)"
  echo
  printf "| %-16s | %8s | %8s | %8s | %8s | %8s | %8s |\n" call "GET P1" "GET P16" "SET P1" "SET P16" \
    "MGET P1" "MGET P16"
  printf "|%s|\n" "------------------|----------|----------|----------|----------|----------|---------"
  awk -v n="$syscall_requests" '
    FNR == 1 { file++ }
    { calls[$1] = 1; count[file, $1] += $2; if ($1 !~ /failed/) total[file] += $2 }
    END {
      for (c in calls) {
        shown = 0
        for (f = 1; f <= file; f++) if (count[f, c] / n >= 0.005) shown = 1
        if (!shown) continue
        printf "| %-16s |", c
        for (f = 1; f <= file; f++) printf " %8.2f |", count[f, c] / n
        printf "\n"
      }
      printf "| %-16s |", "all"
      for (f = 1; f <= file; f++) printf " %8.2f |", total[f] / n
      printf "\n"
    }' "${files[@]}" | sort -t'|' -k3 -gr
}

sys_port="$(free_port)"
santral_config "$sys_port" 1 >"$work_dir/santral-sys.yaml"
start_santral "$santral" "$work_dir/santral-sys.yaml" "$sys_port"
nc_sys_port="$(free_port)"
nutcracker_config "$nc_sys_port" >"$work_dir/nutcracker-sys.yml"
start_nutcracker "$work_dir/nutcracker-sys.yml" "$nc_sys_port"
syscall_table "nutcracker" "$nc_sys_port"
if [ -n "$predixy" ]; then
  px_sys_port="$(free_port)"
  predixy_config "$px_sys_port" 1 >"$work_dir/predixy-sys.conf"
  start_predixy "$work_dir/predixy-sys.conf" "$px_sys_port"
  syscall_table "predixy (WorkerThreads 1)" "$px_sys_port"
fi
if [ -n "${SANTRAL_BEFORE:-}" ]; then
  before_sys_port="$(free_port)"
  santral_config "$before_sys_port" 1 >"$work_dir/santral-sys-before.yaml"
  start_santral "$SANTRAL_BEFORE" "$work_dir/santral-sys-before.yaml" "$before_sys_port"
  syscall_table "santral before (workers: 1)" "$before_sys_port"
fi
syscall_table "santral (workers: 1)" "$sys_port"

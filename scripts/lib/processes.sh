# Shell helpers for scripts that run local clusters (demo.sh, bench.sh). Source it.
# Everything started through here is stopped by stop_all (installed as an EXIT trap).

started_pids=()
work_dir="$(mktemp -d /tmp/santral-XXXXXX)"

stop_all() {
  for pid in "${started_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${started_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  started_pids=()
  rm -rf "$work_dir"
}
# Stops what was started since started_pids had <count> entries (a scenario's own processes).
stop_from() {
  local count="$1" pid
  for pid in "${started_pids[@]:$count}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${started_pids[@]:$count}"; do wait "$pid" 2>/dev/null || true; done
  started_pids=("${started_pids[@]:0:$count}")
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# A loopback TCP port nothing listens on.
free_port() {
  local port
  while :; do
    port=$((10000 + RANDOM % 22000))  # below the kernel's ephemeral range (32768+)
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

# Waits until something answers PING on the port.
wait_ping() {
  local port="$1"
  for _ in $(seq 1 200); do
    [ "$(redis-cli -p "$port" ping 2>/dev/null)" = "PONG" ] && return 0
    sleep 0.05
  done
  echo "nothing answered PING on port $port" >&2
  return 1
}

# start_redis <port> [redis-server options...]
start_redis() {
  local port="$1"
  shift
  mkdir -p "$work_dir/redis-$port"
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$work_dir/redis-$port" --logfile "$work_dir/redis-$port.log" "$@" &
  started_pids+=($!)
  wait_ping "$port"
}

# start_santral <binary> <config> <port> [args...]
start_santral() {
  local binary="$1" config="$2" port="$3"
  shift 3
  "$binary" --config "$config" "$@" >"$work_dir/santral-$port.log" 2>&1 &
  started_pids+=($!)
  wait_ping "$port"
}

# start_etcd <client port>: one etcd member (etcd-server 3.4) on loopback, ready when healthy.
start_etcd() {
  local port="$1" peer
  peer="$(free_port)"
  /usr/bin/etcd --name "etcd-$port" --data-dir "$work_dir/etcd-$port" \
    --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "etcd-$port=http://127.0.0.1:$peer" --log-level warn \
    >"$work_dir/etcd-$port.log" 2>&1 &
  started_pids+=($!)
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$port/health" 2>/dev/null | grep -q '"true"' && return 0
    sleep 0.05
  done
  echo "etcd did not become healthy on port $port (see $work_dir/etcd-$port.log)" >&2
  return 1
}

start_nutcracker() {
  local config="$1" port="$2"
  nutcracker -c "$config" -s "$(free_port)" -a 127.0.0.1 -o "$work_dir/nutcracker-$port.log" &
  started_pids+=($!)
  wait_ping "$port"
}

# The pid of the process listening on a local port.
pid_on_port() {
  ss -Hltnp "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1
}

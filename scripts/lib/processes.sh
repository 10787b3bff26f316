# Shell helpers for scripts that run local clusters (demo.sh, bench.sh). Source it.
# Everything started through here is stopped by stop_all (installed as an EXIT trap).
#
# Only the shell that sourced this file cleans up. A background job (`cmd &`, `$(...)`) is a
# fork of this shell and keeps its traps until it replaces itself with its command; a signal in
# that window (a job killed right after it started) would otherwise run stop_all in the child,
# which stops every process and removes the work directory under the live demo. So the traps
# check that they run in the shell that set them, and spawn starts jobs with the traps reset.

started_pids=()
work_dir="$(mktemp -d /tmp/santral-XXXXXX)"
traps_owner=$BASHPID

stop_all() {
  [ "$BASHPID" = "$traps_owner" ] || return 0
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
# A child still holding the traps dies of the signal as if it had none.
on_signal() {
  local signal="$1"
  if [ "$BASHPID" != "$traps_owner" ]; then
    trap - EXIT "$signal"
    kill -s "$signal" "$BASHPID"
  fi
  exit 130
}
trap stop_all EXIT
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM

# spawn <command> [args...]: runs it in the background, without this shell's traps, and records
# its pid for stop_all (the last one is ${started_pids[-1]}). Redirections of the call apply.
spawn() {
  (
    trap - EXIT TERM
    exec "$@"
  ) &
  started_pids+=($!)
}

# A loopback TCP port nothing listens on, and none handed out before: a port given to a process
# that is not listening yet must not be given again.
free_port() {
  local port
  while :; do
    port=$((10000 + RANDOM % 22000))  # below the kernel's ephemeral range (32768+)
    grep -qx "$port" "$work_dir/ports" 2>/dev/null && continue
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    echo "$port" >>"$work_dir/ports"
    echo "$port"
    return
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
  spawn redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$work_dir/redis-$port" --logfile "$work_dir/redis-$port.log" "$@"
  wait_ping "$port"
}

# start_santral <binary> <config> <port> [args...]
start_santral() {
  local binary="$1" config="$2" port="$3"
  shift 3
  spawn "$binary" --config "$config" "$@" >"$work_dir/santral-$port.log" 2>&1
  wait_ping "$port"
}

# start_etcd <client port>: one etcd member (etcd-server 3.4) on loopback, ready when healthy.
start_etcd() {
  local port="$1" peer
  peer="$(free_port)"
  spawn /usr/bin/etcd --name "etcd-$port" --data-dir "$work_dir/etcd-$port" \
    --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "etcd-$port=http://127.0.0.1:$peer" --log-level warn \
    >"$work_dir/etcd-$port.log" 2>&1
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$port/health" 2>/dev/null | grep -q '"true"' && return 0
    sleep 0.05
  done
  echo "etcd did not become healthy on port $port (see $work_dir/etcd-$port.log)" >&2
  return 1
}

start_nutcracker() {
  local config="$1" port="$2"
  spawn nutcracker -c "$config" -s "$(free_port)" -a 127.0.0.1 -o "$work_dir/nutcracker-$port.log"
  wait_ping "$port"
}

# predixy (a peer for benchmarks only: ../shared/peers/predixy/, or $PREDIXY), or nothing.
predixy_binary() {
  local candidate="${PREDIXY:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/peers/predixy/predixy}"
  [ -x "$candidate" ] && echo "$candidate"
  return 0
}

# start_predixy <config> <port>
start_predixy() {
  local config="$1" port="$2"
  spawn "$(predixy_binary)" "$config" >"$work_dir/predixy-$port.log" 2>&1
  wait_ping "$port"
}

# The pid of the process listening on a local port.
pid_on_port() {
  ss -Hltnp "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1
}

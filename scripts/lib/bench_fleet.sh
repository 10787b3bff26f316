# scripts/bench.sh fleet: sourced by bench.sh (root, santral, and processes.sh's helpers).
# A three-member etcd, 3 shards and three Santral routers of one fleet (workers: 1,
# cluster.poll_ms 100), beside one Santral without a fleet on the same shards:
# 1. SANTRAL MAP PUSH through one router of a change that moves nothing, and the time until
#    every router serves the new version; beside it, the lone router's SANTRAL RELOAD.
# 2. FLEET_KEYS keys loaded, then a third shard added through one router and approved through
#    another (max_keys_per_sec FLEET_THROTTLE), while one client GETs random keys through a
#    third: p50/p99/max before the move, and during it for the keys that moved and those that
#    stayed (a moving key's first request waits for every router to switch, then pulls it).
# 3. cluster.fence: acl: a router SIGSTOPped until it is shut out at every shard (FENCE_ROUNDS).
set -o errtrace
trap 'echo "bench.sh fleet: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR

fleet_keys="${FLEET_KEYS:-50000}"
fleet_throttle="${FLEET_THROTTLE:-10000}"
rounds="${ROUNDS:-20}"

# Three etcd members on loopback, one cluster.
etcd_ports=() peers=() initial=""
for i in 0 1 2; do
  etcd_ports+=("$(free_port)") peers+=("$(free_port)")
  initial+="${initial:+,}m$i=http://127.0.0.1:${peers[$i]}"
done
for i in 0 1 2; do
  /usr/bin/etcd --name "m$i" --data-dir "$work_dir/etcd-$i" \
    --listen-client-urls "http://127.0.0.1:${etcd_ports[$i]}" \
    --advertise-client-urls "http://127.0.0.1:${etcd_ports[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${peers[$i]}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${peers[$i]}" \
    --initial-cluster "$initial" --log-level warn >"$work_dir/etcd-$i.log" 2>&1 &
  started_pids+=($!)
done
for i in 0 1 2; do
  until curl -sf "http://127.0.0.1:${etcd_ports[$i]}/health" | grep -q '"true"'; do sleep 0.1; done
done
members="127.0.0.1:${etcd_ports[0]}, 127.0.0.1:${etcd_ports[1]}, 127.0.0.1:${etcd_ports[2]}"

shard_ports=()
for i in 0 1 2; do
  shard_ports+=("$(free_port)")
  start_redis "${shard_ports[$i]}"
done
shards_of() {  # shards_of <count>
  local i
  echo "shards:"
  for ((i = 0; i < $1; i++)); do
    printf '  - name: shard%d\n    address: 127.0.0.1:%s\n' "$i" "${shard_ports[$i]}"
  done
}
shards_of 2 >"$work_dir/map-a.yaml"
{ shards_of 2; echo "databases: 15"; } >"$work_dir/map-b.yaml"
{ shards_of 3; printf 'resharding:\n  max_keys_per_sec: %s\n' "$fleet_throttle"; } >"$work_dir/map-grown.yaml"

routers=()
for i in 0 1 2; do
  routers+=("$(free_port)")
  { echo "listen: 127.0.0.1:${routers[$i]}"; echo "workers: 1"; shards_of 2
    printf 'cluster:\n  etcd: [%s]\n  name: bench\n  poll_ms: 100\n' "$members"; } \
    >"$work_dir/router-$i.yaml"
  start_santral "$santral" "$work_dir/router-$i.yaml" "${routers[$i]}"
done
alone="$(free_port)"
{ shards_of 2; echo "listen: 127.0.0.1:$alone"; } >"$work_dir/alone.yaml"
start_santral "$santral" "$work_dir/alone.yaml" "$alone"

echo
echo "## A map change: from SANTRAL MAP PUSH to every router serving it"
echo
/usr/bin/python3 "$root/scripts/lib/fleet_probe.py" push "${routers[0]},${routers[1]},${routers[2]}" \
  "$alone" "$work_dir/alone.yaml" "$work_dir/map-b.yaml" "$work_dir/map-a.yaml" "$rounds"

echo
echo "## GET latency of keys that move, during a move of the whole fleet"
echo
awk -v n="$fleet_keys" 'BEGIN {
  for (i = 0; i < n; i++) { k = sprintf("key:%012d", i); printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$5\r\nvalue\r\n", length(k), k }
}' | redis-cli -p "${routers[0]}" --pipe >/dev/null
coproc probe { /usr/bin/python3 "$root/scripts/lib/fleet_probe.py" move "${routers[2]}" "$fleet_keys" "${shard_ports[2]}" 2; }
read -r go <&"${probe[0]}"
redis-cli -p "${routers[0]}" SANTRAL MAP PUSH "$(cat "$work_dir/map-grown.yaml")" >/dev/null
until [ "$(redis-cli -p "${routers[1]}" SANTRAL RESHARD STATUS | sed -n 2p)" = "planned" ]; do sleep 0.05; done
redis-cli -p "${routers[1]}" SANTRAL RESHARD APPROVE >/dev/null
cat <&"${probe[0]}"
wait "${probe_PID:-}" 2>/dev/null || true
echo
echo "(keys moved: $(redis-cli -p "${shard_ports[2]}" DBSIZE) of $fleet_keys; max_keys_per_sec $fleet_throttle)"

# 3. cluster.fence: acl on a second fleet of two routers over the same etcd and shards
#    (lease_ttl_s 2): one router SIGSTOPped FENCE_ROUNDS times; how long until the fleet sees
#    its lease gone, and from then until it is shut out at every shard.
fence_rounds="${FENCE_ROUNDS:-10}"
fenced=()
for i in 0 1; do
  fenced+=("$(free_port)")
  { echo "listen: 127.0.0.1:${fenced[$i]}"; echo "workers: 1"; shards_of 3
    printf 'cluster:\n  etcd: [%s]\n  name: fenced\n  poll_ms: 100\n  lease_ttl_s: 2\n  fence: acl\n' \
      "$members"; } >"$work_dir/fenced-$i.yaml"
  start_santral "$santral" "$work_dir/fenced-$i.yaml" "${fenced[$i]}"
done
frozen_pid="$(pgrep -f -- "--config $work_dir/fenced-1.yaml" | head -1)"
echo
echo "## cluster.fence: acl: from a router's lease expiry to the router shut out at the shards"
echo
/usr/bin/python3 "$root/scripts/lib/fleet_probe.py" fence "${fenced[0]}" "${fenced[1]}" \
  "${shard_ports[0]},${shard_ports[1]},${shard_ports[2]}" "$frozen_pid" "$fence_rounds"

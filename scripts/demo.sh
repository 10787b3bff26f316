#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs Santral with a local demo cluster, the topology of
# deploy/docker-compose.yml as local processes: 4 redis-server shards each with a replica, an
# etcd (one member here, three in compose) holding the shard map, two Santral routers of one
# fleet sharing config/examples/demo.yaml, and Chirp (deploy/chirp/chirp.py) telling
# its story step by step, with what each shard served:
#   1. users, follows and posts placed by namespaces; SANTRAL EXPLAIN of a targeted read, a
#      range scan and a broadcast
#   2. a post goes viral: SANTRAL HOTKEYS sees it, automatic salting spreads its INCRs from one
#      shard to all, the like count stays exact
#   3. everyone reads it: the near cache answers, the shards' GETs stay flat
#   4. the cluster grows: a fifth shard added through router A, its keys moved in online by the
#      whole fleet while Chirp writes, the move's state the same through router B
#   5. the dashboard's address
# then keeps Chirp's light load going until Ctrl-C, which stops everything it started.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build-release" Release santral-only
source "$root/scripts/lib/processes.sh"

echo "== starting 4 shards, each with a replica"
primaries=() replicas=()
for i in 0 1 2 3; do
  primaries+=("$(free_port)")
  start_redis "${primaries[$i]}" --repl-diskless-sync-delay 0
  replicas+=("$(free_port)")
  start_redis "${replicas[$i]}" --replicaof 127.0.0.1 "${primaries[$i]}"
  echo "   shard$i: primary 127.0.0.1:${primaries[$i]}, replica 127.0.0.1:${replicas[$i]}"
done

etcd_port="$(free_port)"
start_etcd "$etcd_port"
echo "== etcd on 127.0.0.1:$etcd_port: the fleet's shard map lives there (/santral/demo/)"

router_a="$(free_port)" router_b="$(free_port)" admin_a="$(free_port)" admin_b="$(free_port)"
config="$work_dir/demo.yaml"
substitutions=(-e "s/127.0.0.1:6380/127.0.0.1:$router_a/" -e "s/127.0.0.1:8080/127.0.0.1:$admin_a/")
for i in 0 1 2 3; do
  substitutions+=(-e "s/127.0.0.1:700$((i + 1))/127.0.0.1:${primaries[$i]}/")
  substitutions+=(-e "s/127.0.0.1:710$((i + 1))/127.0.0.1:${replicas[$i]}/")
done
sed "${substitutions[@]}" "$root/config/examples/demo.yaml" >"$config"
printf 'cluster:\n  etcd: [127.0.0.1:%s]\n  name: demo\n' "$etcd_port" >>"$config"
santral="$root/build-release/router/santral"
start_santral "$santral" "$config" "$router_a"
start_santral "$santral" "$config" "$router_b" --listen "127.0.0.1:$router_b" --admin-listen "127.0.0.1:$admin_b"
echo "== two routers of one fleet: A 127.0.0.1:$router_a and B 127.0.0.1:$router_b"
echo "   SANTRAL ROUTERS through B (each router registered in etcd on its own lease):"
redis-cli -p "$router_b" SANTRAL ROUTERS | paste -d' ' - - | awk '
  $1 == "name" { printf "     %s", $2 }
  $1 == "map_version" { printf ": map version %s", $2 }
  $1 == "lease_ttl_s" { printf ", lease of %s s\n", $2 }'

echo "   dashboards: http://127.0.0.1:$admin_a/ and http://127.0.0.1:$admin_b/"

shards=""
for i in 0 1 2 3; do shards+="${shards:+,}127.0.0.1:${primaries[$i]}+127.0.0.1:${replicas[$i]}"; done
chirp=(/usr/bin/python3 "$root/deploy/chirp/chirp.py" --routers "127.0.0.1:$router_a,127.0.0.1:$router_b"
  --shards "$shards")
# Steps 1 to 3.
"${chirp[@]}"
# From here on Chirp keeps a light load going, for the dashboard and for step 4.
"${chirp[@]}" --no-story --load &
started_pids+=($!)
load_pid=$!

# ---- 4. The cluster grows ----------------------------------------------------------------------
# A fifth shard joins the ring: the reload through router A proposes the new map to the fleet,
# which plans a move; it is approved and watched from the shell while Chirp writes through
# router A, and router B (taking part in the move) shows the same state. The background load
# stops meanwhile, so that Chirp can check the like count is exact.
grow_the_cluster() {
  echo
  echo "== 4. the cluster grows: a fifth shard starts, and the config gets it"
  kill "$load_pid" 2>/dev/null || true
  while kill -0 "$load_pid" 2>/dev/null; do sleep 0.1; done
  primaries+=("$(free_port)")
  start_redis "${primaries[4]}" --repl-diskless-sync-delay 0
  replicas+=("$(free_port)")
  start_redis "${replicas[4]}" --replicaof 127.0.0.1 "${primaries[4]}"
  echo "   shard4: primary 127.0.0.1:${primaries[4]}, replica 127.0.0.1:${replicas[4]}"
  # Reads go to replicas (read_from: prefer-replica): the new one must have synced first.
  until redis-cli -p "${replicas[4]}" INFO replication | grep -q "master_link_status:up"; do
    sleep 0.1
  done
  /usr/bin/python3 - "$config" "${primaries[4]}" "${replicas[4]}" <<'PY'
import sys
path, primary, replica = sys.argv[1:]
text = open(path).read()
shard = (f"  - name: shard4\n    address: 127.0.0.1:{primary}\n"
         f"    replicas: [127.0.0.1:{replica}]\n")
open(path, "w").write(text.replace("namespaces:\n", shard + "namespaces:\n", 1))
PY
  echo "   SANTRAL RELOAD through A: $(redis-cli -p "$router_a" SANTRAL RELOAD)"
  until [ "$(redis-cli -p "$router_b" SANTRAL RESHARD STATUS | sed -n 2p)" = "planned" ]; do
    sleep 0.1
  done
  echo "   SANTRAL RESHARD STATUS through B: $(redis-cli -p "$router_b" SANTRAL RESHARD STATUS | sed -n 2p)"
  shards+=",127.0.0.1:${primaries[4]}+127.0.0.1:${replicas[4]}"
  /usr/bin/python3 "$root/deploy/chirp/chirp.py" --routers "127.0.0.1:$router_a" --shards "$shards" \
    --grow --santral-bin "$santral"
  echo "   router B serves the new map too: $(redis-cli -p "$router_b" SANTRAL SHARDMAP | grep -c '^shard:.*role:primary') shards"
  # The light load again, through both routers.
  "${chirp[@]}" --shards "$shards" --no-story --load &
  started_pids+=($!)
}
grow_the_cluster

echo
echo "== 5. watch it live: the dashboard of router A is http://127.0.0.1:$admin_a/"
echo "   Chirp keeps a light load going through it."
echo
echo "Santral is serving on 127.0.0.1:$router_a. Try: redis-cli -p $router_a"
echo "Logs: $work_dir. Press Ctrl-C to stop everything."
while :; do sleep 3600; done

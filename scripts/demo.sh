#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs Santral with a local demo cluster, the topology of
# deploy/docker-compose.yml as local processes: 4 redis-server shards each with a replica, two
# Santral routers sharing config/examples/demo.yaml, and Chirp (deploy/chirp/chirp.py) telling
# its story step by step, with what each shard served:
#   1. users, follows and posts placed by namespaces; SANTRAL EXPLAIN of a targeted read, a
#      range scan and a broadcast
#   2. a post goes viral: SANTRAL HOTKEYS sees it, automatic salting spreads its INCRs from one
#      shard to all, the like count stays exact
#   3. everyone reads it: the near cache answers, the shards' GETs stay flat
#   4. the cluster grows: a fifth shard added, its keys moved in online while Chirp writes
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

router_a="$(free_port)" router_b="$(free_port)" admin_a="$(free_port)" admin_b="$(free_port)"
config="$work_dir/demo.yaml"
substitutions=(-e "s/127.0.0.1:6380/127.0.0.1:$router_a/" -e "s/127.0.0.1:8080/127.0.0.1:$admin_a/")
for i in 0 1 2 3; do
  substitutions+=(-e "s/127.0.0.1:700$((i + 1))/127.0.0.1:${primaries[$i]}/")
  substitutions+=(-e "s/127.0.0.1:710$((i + 1))/127.0.0.1:${replicas[$i]}/")
done
sed "${substitutions[@]}" "$root/config/examples/demo.yaml" >"$config"
santral="$root/build-release/router/santral"
start_santral "$santral" "$config" "$router_a"
start_santral "$santral" "$config" "$router_b" --listen "127.0.0.1:$router_b" --admin-listen "127.0.0.1:$admin_b"
router_b_pid="${started_pids[-1]}"
echo "== two routers on one config: A 127.0.0.1:$router_a and B 127.0.0.1:$router_b"
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
# A fifth shard joins the ring: the reload is a planned move, approved and watched from the
# shell while Chirp writes through router A. One router moves at a time until the fleet shares
# its map through etcd, so router B and the background load through it stop first.
grow_the_cluster() {
  echo
  echo "== 4. the cluster grows: router B steps aside (one router moves keys until the fleet"
  echo "   shares a map through etcd), a fifth shard starts, and the config gets it"
  kill "$load_pid" "$router_b_pid" 2>/dev/null || true
  while kill -0 "$load_pid" 2>/dev/null || kill -0 "$router_b_pid" 2>/dev/null; do sleep 0.1; done
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
  echo "   SANTRAL RELOAD: $(redis-cli -p "$router_a" SANTRAL RELOAD)"
  shards+=",127.0.0.1:${primaries[4]}+127.0.0.1:${replicas[4]}"
  /usr/bin/python3 "$root/deploy/chirp/chirp.py" --routers "127.0.0.1:$router_a" --shards "$shards" \
    --grow --santral-bin "$santral"
  # The light load again, through router A.
  /usr/bin/python3 "$root/deploy/chirp/chirp.py" --routers "127.0.0.1:$router_a" --shards "$shards" \
    --no-story --load &
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

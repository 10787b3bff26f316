#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs Santral with a local demo cluster, the topology of
# deploy/docker-compose.yml as local processes: 4 redis-server shards each with a replica (and
# a fifth for step 4), an etcd (one member here, three in compose) holding the shard map, two
# Santral routers of one fleet sharing config/examples/demo.yaml, and Chirp
# (deploy/chirp/chirp.py) telling its story step by step, with what each shard served, and
# checking each step:
#   1. users, follows and posts placed by namespaces; SANTRAL EXPLAIN of a targeted read, a
#      range scan and a broadcast
#   2. a post goes viral: SANTRAL HOTKEYS sees it, automatic salting spreads its INCRs from one
#      shard to all, the like count stays exact
#   3. everyone reads it: the near cache answers, the shards' GETs stay flat
#   4. the cluster grows: the fifth shard joins the fleet's map through router A, its keys are
#      moved in online by the whole fleet while Chirp writes (santral reshard status --watch),
#      the move's state the same through router B
#   5. the dashboards' address, each serving every shard
# then keeps Chirp's light load going until Ctrl-C, which stops everything it started.
#
#   scripts/demo.sh           the story, then serves until Ctrl-C
#   scripts/demo.sh --check   the story to the end of step 5, then stops; exits 0 only when
#                             every step's own check passed (CI runs it)
# SANTRAL=path/to/santral uses that binary instead of building build-release/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
check=""
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    *)
      echo "usage: scripts/demo.sh [--check]" >&2
      exit 2
      ;;
  esac
done
"$root/scripts/install-deps.sh"
santral="${SANTRAL:-}"
if [ -z "$santral" ]; then
  "$root/scripts/build.sh" "$root/build-release" Release santral-only
  santral="$root/build-release/app/santral"
fi
source "$root/scripts/lib/processes.sh"

echo "== starting 4 shards, each with a replica, and a fifth that joins in step 4"
primaries=() replicas=()
for i in 0 1 2 3 4; do
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
routers="127.0.0.1:$router_a,127.0.0.1:$router_b"
# Steps 1 to 5; step 4 proposes the routers' config with shard4 added (SANTRAL MAP PUSH), and
# approves and watches the move with santral's own CLI.
status=0
/usr/bin/python3 "$root/deploy/chirp/chirp.py" --routers "$routers" --shards "$shards" \
  --join "127.0.0.1:${primaries[4]}+127.0.0.1:${replicas[4]}" --config "$config" \
  --santral-bin "$santral" --admin "127.0.0.1:$admin_a,127.0.0.1:$admin_b" \
  --dashboard "http://127.0.0.1:$admin_a/" || status=$?

if [ -n "$check" ]; then
  if [ "$status" -ne 0 ]; then
    for log in "$work_dir"/santral-*.log; do
      echo "== the end of $log" >&2
      tail -20 "$log" >&2
    done
  fi
  echo
  echo "demo --check: $([ "$status" -eq 0 ] && echo "every step's checks passed" || echo FAILED)"
  exit "$status"
fi

# From here on Chirp keeps a light load going through both routers, for the dashboard.
spawn /usr/bin/python3 "$root/deploy/chirp/chirp.py" --routers "$routers" \
  --shards "$shards,127.0.0.1:${primaries[4]}+127.0.0.1:${replicas[4]}" --no-story --load
[ "$status" -eq 0 ] || echo "   (a check above FAILED; the cluster serves on so that you can look)"
echo "   Chirp keeps a light load going through both routers."
echo
echo "Santral is serving on 127.0.0.1:$router_a. Try: redis-cli -p $router_a"
echo "Logs: $work_dir. Press Ctrl-C to stop everything."
while :; do sleep 3600; done

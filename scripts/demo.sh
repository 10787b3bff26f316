#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs Santral in front of a local demo cluster:
# 4 redis-server shards on free loopback ports, Santral with config/examples/demo.yaml, a short
# workload through Santral, and how many keys landed on each shard. Runs until Ctrl-C, which
# stops everything it started.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build-release" Release santral-only
source "$root/scripts/lib/processes.sh"

echo "== starting 4 redis-server shards"
ports=()
for i in 0 1 2 3; do
  ports+=("$(free_port)")
  start_redis "${ports[$i]}"
  echo "   shard$i on 127.0.0.1:${ports[$i]}"
done

listen="$(free_port)"
config="$work_dir/demo.yaml"
# demo.yaml with the free ports put in place of its 6380 and 7001..7004.
sed -e "s/127.0.0.1:6380/127.0.0.1:$listen/" \
    -e "s/127.0.0.1:7001/127.0.0.1:${ports[0]}/" -e "s/127.0.0.1:7002/127.0.0.1:${ports[1]}/" \
    -e "s/127.0.0.1:7003/127.0.0.1:${ports[2]}/" -e "s/127.0.0.1:7004/127.0.0.1:${ports[3]}/" \
    "$root/config/examples/demo.yaml" >"$config"
start_santral "$root/build-release/router/santral" "$config" "$listen"
echo "== santral listening on 127.0.0.1:$listen"

echo "== workload through santral: 10,000 SETs, INCRs on a few counters, reads back"
for i in $(seq 1 10000); do echo "SET user:$i name-$i"; done | redis-cli -p "$listen" >/dev/null
for i in $(seq 1 1000); do echo "INCR post:$((i % 5)):likes"; done | redis-cli -p "$listen" >/dev/null
echo "   GET user:42            -> $(redis-cli -p "$listen" GET user:42)"
echo "   GET post:0:likes       -> $(redis-cli -p "$listen" GET post:0:likes)"
redis-cli -p "$listen" SET "user:{42}:email" "u42@example.com" >/dev/null
echo "   user:{42}:email        -> shares a shard with every key tagged {42}"

echo "== keys per shard (asked of each shard directly)"
total=0
for i in 0 1 2 3; do
  n="$(redis-cli -p "${ports[$i]}" DBSIZE)"
  total=$((total + n))
  printf "   shard%d  127.0.0.1:%-5s %6d keys\n" "$i" "${ports[$i]}" "$n"
done
echo "   total                   $total keys"

echo
echo "Santral is serving on 127.0.0.1:$listen. Try: redis-cli -p $listen"
echo "Logs: $work_dir. Press Ctrl-C to stop everything."
while :; do sleep 3600; done

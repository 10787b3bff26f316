# scripts/bench.sh placement: what building a request's plan costs on a map of 1,000 shards
# (santral-placement-bench: ketama, 16,384 slots, 10,000 ranges, 100,000 directory groups, in
# ns per route), how long such a map takes to load, and SANTRAL RELOAD of it in a running
# Santral (read, validate, build, swap on every worker: the time until the reply). Sourced by
# bench.sh; needs no shards (the map's shards are ports nothing listens on).

placement_bench="${PLACEMENT_BENCH:-$root/build-release/tools/placement_bench/santral-placement-bench}"
"$placement_bench"

map_port="$(free_port)"
map_file="$work_dir/big-map.yaml"
"$placement_bench" --write-config "$map_file"
# The map's own listen line is replaced; nothing listens on its shards' ports.
sed -i "s/^listen: .*/listen: 127.0.0.1:$map_port\nworkers: 2\nlog_level: error/" "$map_file"
start_santral "$santral" "$map_file" "$map_port"
echo
echo "SANTRAL RELOAD of that map ($(du -k "$map_file" | cut -f1) KiB), workers: 2, 5 reloads:"
for i in 1 2 3 4 5; do
  start_ns="$(date +%s%N)"
  answer="$(redis-cli -p "$map_port" SANTRAL RELOAD)"
  end_ns="$(date +%s%N)"
  version="$(redis-cli -p "$map_port" INFO santral | tr -d '\r' | sed -n 's/^config_version://p')"
  printf "  reload %d: %.0f ms (%s), config_version %s\n" "$i" \
    "$(awk -v a="$start_ns" -v b="$end_ns" 'BEGIN { print (b - a) / 1e6 }')" "$answer" "$version"
done

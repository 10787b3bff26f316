# scripts/bench.sh tls: what TLS costs. Requests/s and the proxy's CPU time per request (µs,
# utime+stime from /proc) of GET and SET at -P 1 and -P 16, Santral (workers: 1) with plain or
# TLS clients (redis-benchmark --tls) and plain or TLS shards, beside nutcracker, which has no
# TLS on either side (its row is the plain baseline). Sourced by bench.sh after the shards are up.

certs="$work_dir/certs"
mkdir -p "$certs"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=bench-ca -keyout "$certs/ca.key" -out "$certs/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
  -keyout "$certs/server.key" -out "$certs/server.csr" 2>/dev/null
openssl x509 -req -in "$certs/server.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" \
  -CAcreateserial -days 2 -out "$certs/server.crt" \
  -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1') 2>/dev/null

# Four more shards that also listen with TLS (their plain port answers the readiness PING).
tls_shard_ports=()
for i in 0 1 2 3; do
  plain="$(free_port)" tls="$(free_port)"
  start_redis "$plain" --tls-port "$tls" --tls-cert-file "$certs/server.crt" \
    --tls-key-file "$certs/server.key" --tls-ca-cert-file "$certs/ca.crt" --tls-auth-clients no
  tls_shard_ports+=("$tls")
done

# <port> <TLS client port, or -> <tls shards: yes|no>
santral_tls_config() {
  echo "listen: 127.0.0.1:$1"
  echo "workers: 1"
  echo "hash: murmur"
  echo "log_level: warn"
  if [ "$2" != - ]; then
    echo "tls: {listen: 127.0.0.1:$2, cert_file: $certs/server.crt, key_file: $certs/server.key}"
  fi
  echo "backend: {tls: {ca_file: $certs/ca.crt}}"
  echo "shards:"
  for i in 0 1 2 3; do
    if [ "$3" = yes ]; then
      echo "  - {name: shard$i, address: 127.0.0.1:${tls_shard_ports[$i]}, tls: true}"
    else
      echo "  - {name: shard$i, address: 127.0.0.1:${shard_ports[$i]}}"
    fi
  done
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# "<requests/s> <µs CPU/request>": <pid> <pipeline> <test> <redis-benchmark connection args...>
tls_measure() {
  local pid="$1" pipeline="$2" test="$3" before after rps
  shift 3
  before="$(cpu_ticks "$pid")"
  rps="$(redis-benchmark "$@" -c "$clients" -n "$requests" -r 100000 -P "$pipeline" -q -t "$test" \
    2>/dev/null | tr '\r' '\n' | awk '/requests per second/ {v = $2} END {print v + 0}')"
  after="$(cpu_ticks "$pid")"
  awk -v r="$rps" -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" -v n="$requests" \
    'BEGIN { printf "%d %.2f\n", r, t / hz * 1e6 / n }'
}

declare -A setup_args setup_pid
setups=(nutcracker plain tls-clients tls-shards tls-both)
nc_port="$(free_port)"
nutcracker_config "$nc_port" >"$work_dir/nutcracker.yml"
start_nutcracker "$work_dir/nutcracker.yml" "$nc_port"
setup_args[nutcracker]="-p $nc_port"
setup_pid[nutcracker]="$(pid_on_port "$nc_port")"
for setup in plain tls-clients tls-shards tls-both; do
  port="$(free_port)" tls_port=- shards_tls=no
  case "$setup" in
    tls-clients) tls_port="$(free_port)" ;;
    tls-shards) shards_tls=yes ;;
    tls-both) tls_port="$(free_port)" shards_tls=yes ;;
  esac
  santral_tls_config "$port" "$tls_port" "$shards_tls" >"$work_dir/santral-$setup.yaml"
  start_santral "$santral" "$work_dir/santral-$setup.yaml" "$port"
  setup_pid[$setup]="$(pid_on_port "$port")"
  if [ "$tls_port" = - ]; then
    setup_args[$setup]="-p $port"
  else
    setup_args[$setup]="-p $tls_port --tls --cacert $certs/ca.crt --sni localhost"
  fi
done

echo
echo "TLS: requests/s and CPU µs per request of the proxy, workers: 1, $(date -u +%Y-%m-%d), $(nproc) cores,"
echo "redis-benchmark -c $clients -n $requests -r 100000, median of $repeat runs; nutcracker has no TLS"
echo
printf "| %-4s | %2s |" test P
for setup in "${setups[@]}"; do printf " %-19s |" "$setup"; done
echo
printf "|------|----|"
for _ in "${setups[@]}"; do printf -- "---------------------|"; done
echo
for pipeline in 1 16; do
  for t in get set; do
    printf "| %-4s | %2s |" "${t^^}" "$pipeline"
    for setup in "${setups[@]}"; do
      rps="" cpu=""
      for _ in $(seq 1 "$repeat"); do
        # shellcheck disable=SC2086  # the connection arguments are words
        read -r r c < <(tls_measure "${setup_pid[$setup]}" "$pipeline" "$t" ${setup_args[$setup]})
        rps+=" $r" cpu+=" $c"
      done
      printf " %8s/s %6s µs |" "$(median <<<"$rps")" "$(median <<<"$cpu")"
    done
    echo
  done
done

# Open-loop latency beside nutcracker: santral-loadgen sends requests at fixed times (a share of
# the reference's closed-loop peak), whatever the replies do, and times each from its intended
# send time, so a proxy that stalls or queues shows in p99 and p99.9 (redis-benchmark, closed
# loop, would slow down instead and hide it). Sourced by bench.sh after the shards and proxies
# are up; defines latency_table:
#   latency_table nutcracker="$nc_port" "santral w=1"="$s1_port" "santral w=2"="$s2_port"
# The first target is the reference: the offered rate of each test is LATENCY_SHARE of its
# redis-benchmark -P 1 peak. Every target gets the same rate; runs are interleaved per test.
# Environment: LATENCY_RATE (req/s to offer instead of measuring a peak), LATENCY_SHARE (0.5),
# LATENCY_SECONDS (10 s measured per run, after LATENCY_WARMUP, 1 s), LATENCY_CONNECTIONS
# (CLIENTS, 50), LATENCY_REPEAT (1 run per cell; more: the median of each figure), LATENCY_TESTS
# ("set get"), LOADGEN (the santral-loadgen binary).

loadgen="${LOADGEN:-$root/build-release/tools/loadgen/santral-loadgen}"
latency_share="${LATENCY_SHARE:-0.5}"
latency_seconds="${LATENCY_SECONDS:-10}"
latency_warmup="${LATENCY_WARMUP:-1}"
latency_connections="${LATENCY_CONNECTIONS:-${clients:-50}}"
latency_repeat="${LATENCY_REPEAT:-1}"
latency_tests="${LATENCY_TESTS:-set get}"

# Closed-loop requests/s of redis-benchmark -P 1: <port> <test>
latency_peak() {
  redis-benchmark -p "$1" -c "${clients:-50}" -n "${requests:-200000}" -r 100000 -P 1 -q -t "$2" \
    2>/dev/null | tr '\r' '\n' |
    awk '/requests per second/ {for (i = 1; i <= NF; i++) if ($i == "requests") print $(i-1)}' | tail -1
}

# One open-loop run: <port> <test> <rate> -> "p50 p99 p99.9 behind_ms" (µs, µs, µs, ms), or
# "failed" with the generator's reason on stderr.
latency_run() {
  local out
  if ! out="$("$loadgen" --port "$1" --command "$2" --rate "$3" --duration "$latency_seconds" \
    --warmup "$latency_warmup" --connections "$latency_connections" 2>&1)"; then
    echo "santral-loadgen --port $1 --command $2 --rate $3 failed: $out" >&2
    echo failed
    return
  fi
  awk '/^loadgen: / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                      print v["p50_us"], v["p99_us"], v["p999_us"], v["behind_ms"] }' <<<"$out"
}

# The median of the numbers on stdin, one a line.
latency_median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# "p50 / p99 / p99.9" in ms from the runs of one cell (lines of latency_run), a * when the
# generator fell behind its schedule by more than 1 ms in one of them; "failed" if one failed.
latency_cell() {
  local runs="$1" column figures=()
  if grep -q failed <<<"$runs"; then
    echo failed
    return
  fi
  for column in 1 2 3; do
    figures+=("$(awk -v c="$column" '{print $c / 1000}' <<<"$runs" | latency_median)")
  done
  local behind=""
  awk '$4 > 1 {found = 1} END {exit !found}' <<<"$runs" && behind="*"
  printf "%.3f / %.3f / %.3f%s" "${figures[@]}" "$behind"
  # The generator's worst lateness, for the footnote.
  awk '{ if ($4 > m) m = $4 } END { print m + 0 }' <<<"$runs" >>"$work_dir/latency-behind"
}

latency_table() {  # <label>=<port> ...
  local labels=() ports=() target test rate i
  for target in "$@"; do
    labels+=("${target%=*}")
    ports+=("${target##*=}")
  done
  local width=() header="| test | offered req/s |" rule="|------|--------------:|"
  for i in "${!labels[@]}"; do
    local title="${labels[$i]} p50 / p99 / p99.9"
    width+=("$((${#title} > 24 ? ${#title} : 24))")
    header+="$(printf " %-${width[$i]}s |" "$title")"
    rule+="$(printf "%$((width[i] + 1))s:|" "" | tr ' ' '-')"
  done

  local rates=() how
  for test in $latency_tests; do
    if [ -n "${LATENCY_RATE:-}" ]; then
      rates+=("$LATENCY_RATE")
    else
      local peak
      peak="$(latency_peak "${ports[0]}" "$test")"
      rates+=("$(awk -v p="$peak" -v s="$latency_share" 'BEGIN { printf "%.0f", p * s }')")
      how+="${how:+, }${test^^} $(printf "%.0f" "$peak")"
    fi
  done

  echo
  echo "Open-loop latency (santral-loadgen, $(date -u +%Y-%m-%d), $(nproc) cores): requests sent at fixed"
  echo "times over $latency_connections connections whatever the replies do, each timed from its intended send"
  local runs_text="one run per cell"
  [ "$latency_repeat" -gt 1 ] && runs_text="median of $latency_repeat interleaved runs per cell"
  echo "time; ${latency_seconds} s measured after ${latency_warmup} s warm-up; in ms; $runs_text."
  if [ -n "${LATENCY_RATE:-}" ]; then
    echo "Offered: $LATENCY_RATE req/s (LATENCY_RATE)."
  else
    echo "Offered: $(awk -v s="$latency_share" 'BEGIN { printf "%g", s * 100 }')% of ${labels[0]}'s closed-loop peak (redis-benchmark -P 1 -c ${clients:-50}): $how req/s."
  fi
  echo
  echo "$header"
  echo "$rule"
  local t=0 behind_seen=""
  rm -f "$work_dir/latency-behind"
  for test in $latency_tests; do
    rate="${rates[$t]}"
    t=$((t + 1))
    local runs=()
    for _ in $(seq 1 "$latency_repeat"); do
      for i in "${!ports[@]}"; do runs[i]+="$(latency_run "${ports[$i]}" "$test" "$rate")"$'\n'; done
    done
    local row
    row="$(printf "| %-4s | %13s |" "${test^^}" "$rate")"
    for i in "${!ports[@]}"; do
      local cell
      cell="$(latency_cell "${runs[$i]%$'\n'}")"
      [[ "$cell" == *"*" ]] && behind_seen=1
      row+="$(printf " %${width[$i]}s |" "$cell")"
    done
    echo "$row"
  done
  if [ -n "$behind_seen" ]; then
    local worst
    worst="$(sort -g "$work_dir/latency-behind" | tail -1)"
    echo
    echo "\* the load generator fell more than 1 ms behind its schedule in that run (up to $worst ms in"
    echo "this table; the machine's other load): the delay is counted in the latencies."
  fi
  rm -f "$work_dir/latency-behind"
}

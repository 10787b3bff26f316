#!/usr/bin/env bash
# Santral's fault-injection harness (tests/chaos/): four redis-server shards (appendfsync
# always), one Santral whose shard links go through a TCP fault proxy, workloads over
# long-lived connections, and, chosen at random, moves (add/remove a shard, aborts: halfway, at
# once, with a source shard stopped), map edits, SIGSTOP/SIGKILL of Santral and of shards, and
# link delays, stalls and resets (some delivering late what Santral gave up on).
# Once every fault is lifted it checks what was acknowledged and where every key is, and ends
# with `chaos: N passed, M failed`; exit code 0 only when M is 0.
#   scripts/chaos.sh [seconds] [options]     seconds of faults, default 600
#   scripts/chaos.sh 75 --seed 42            a reproducible schedule of nemeses
#   scripts/chaos.sh 30 --self-test --no-nemesis   checks the checkers (damage behind
#                                            Santral's back must be reported)
#   scripts/chaos.sh 120 --fleet --fence acl  fleet mode: 3 routers on a 3-member etcd, 5 shards,
#                                            router and etcd faults (tests/chaos/fleet.py)
#   scripts/chaos.sh 90 --failover           failover mode: shards of a primary and a replica that
#                                            Redis Sentinel manages, write_concern, primaries killed
#                                            and stopped (tests/chaos/failover.py)
#   scripts/chaos.sh 150 --burners 2         two CPU burners (busy loops) beside the run
#   scripts/chaos.sh 150 --request-ms 300    Santral's timeouts.request_ms 300 (default 2000): most
#                                            shard stops and late link faults outlast it
# Other options: /usr/bin/python3 tests/chaos/chaos.py --help. SANTRAL_BINARY names the binary
# (default build/app/santral, built here if missing).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"

seconds=600
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
  seconds="$1"
  shift
fi

export SANTRAL_BINARY="${SANTRAL_BINARY:-$root/build/app/santral}"
if [ ! -x "$SANTRAL_BINARY" ]; then
  echo "chaos: building $SANTRAL_BINARY"
  cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$root/build" -j"$(nproc)" --target santral | { grep -E "error|warning" || true; }
fi

# Debian's python3 (it has python3-redis), whatever python3 comes first on PATH.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
# The fault proxy's and the harness client's own tests first: a broken proxy or client would
# make every finding suspect.
"$python" "$root/tests/chaos/test_fault_proxy.py"
"$python" "$root/tests/chaos/test_client.py"
exec "$python" "$root/tests/chaos/chaos.py" "$seconds" --keep-on-failure "$@"

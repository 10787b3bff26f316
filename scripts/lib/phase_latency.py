#!/usr/bin/env python3
"""Latency by phase and by key class from a santral-loadgen --log (scripts/bench.sh reshard).

  phase_latency.py <loadgen log> <moved keys file>

The log has 'phase <name> <ns>' lines and one '<intended ns> <key number> <latency µs> <error>'
line per answered request (tools/loadgen/open_loop_run.h). Each request belongs to the phase
whose start is the last at or before its intended send time (requests before the first phase
are left out). The moved keys file names the keys the move touched, one a line (key:<12 digits>
or the number): a request is "moving" when its key is there, "unrelated" otherwise.

Prints one line per phase and class (all, unrelated, moving):
  <phase> <class> <requests> <p50 ms> <p99 ms> <p99.9 ms> <max ms> <error replies>
"""
import bisect
import sys


def percentile(ordered, p):
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def main():
    log_path, moved_path = sys.argv[1], sys.argv[2]
    moved = set()
    with open(moved_path) as lines:
        for line in lines:
            name = line.strip()
            if name:
                moved.add(int(name.rsplit(":", 1)[-1]))
    phases, starts = [], []
    requests = []
    with open(log_path) as lines:
        for line in lines:
            fields = line.split()
            if fields[0] == "phase":
                phases.append(fields[1])
                starts.append(int(fields[2]))
            else:
                requests.append((int(fields[0]), int(fields[1]), int(fields[2]), fields[3] == "1"))
    classes = ("all", "unrelated", "moving")
    latencies = {(p, c): [] for p in phases for c in classes}
    errors = {(p, c): 0 for p in phases for c in classes}
    for intended, key, us, error in requests:
        i = bisect.bisect_right(starts, intended) - 1
        if i < 0:
            continue
        for c in ("all", "moving" if key in moved else "unrelated"):
            latencies[(phases[i], c)].append(us)
            errors[(phases[i], c)] += error
    for p in dict.fromkeys(phases):
        for c in classes:
            ordered = sorted(latencies[(p, c)])
            ms = [percentile(ordered, q) / 1000 for q in (0.50, 0.99, 0.999)]
            top = ordered[-1] / 1000 if ordered else 0.0
            print(f"{p} {c} {len(ordered)} {ms[0]:.3f} {ms[1]:.3f} {ms[2]:.3f} {top:.3f} "
                  f"{errors[(p, c)]}")


if __name__ == "__main__":
    main()

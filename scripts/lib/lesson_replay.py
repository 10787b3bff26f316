#!/usr/bin/python3
"""Replays the seed lesson's trace through a live Santral while SANTRAL ANALYZE samples it, and
compares ANALYZE's what-if table with santral-strategy-report --lesson's (scripts/analyze-lesson).

  lesson_replay.py --port P --shard-ports P0,P1,... --trace FILE --offline FILE
                   --sample RATE [--seconds N] [--json-out FILE]

The trace (santral-strategy-report --lesson --write-trace, one "key count" a line, in the order
the shipments were made, i.e. rising tracking numbers) is replayed in two phases:
  1. stored: every key of count 0 (the 25 older days of the report period) is SET, before the
     analysis starts;
  2. accessed: SANTRAL ANALYZE shipments SECONDS n SAMPLE rate KEY seller FORMAT json starts, and
     every key of count 1 (the last 5 days: each shipment accessed once) is SET in trace order, a
     new key each, so the numbers rise with time as the lesson's do. The replay must end inside
     the window; n defaults to twice the replay's expected time (from phase 1's throughput).
The offline table is strategy-report's --markdown output for 8 shards.
"""
import argparse
import json
import math
import sys
import threading
import time

import redis

BATCH = 2000

# The rows compared: (label, how to find ANALYZE's what-if row, strategy-report's row label).
ROWS = [
    ("range (current, by number)", lambda w: w["current"], "range (numeric, by number)"),
    ("hashed by number", lambda w: not w["current"] and w["strategy"] == "hashed"
     and "number" in w["key"], "hashed (ring, by number)"),
    ("slots by number", lambda w: not w["current"] and w["strategy"] == "slots"
     and "number" in w["key"], "slots (CRC16, by number)"),
    ("directory by seller", lambda w: not w["current"] and w["strategy"] == "directory"
     and "seller" in w["key"], "directory (by seller)"),
]


def read_trace(path):
    header, stored, accessed = {}, [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                parts = line[1:].split()
                if len(parts) == 2:
                    header[parts[0]] = parts[1]
                continue
            key, _, count = line.partition(" ")
            (accessed if int(count) > 0 else stored).append(key)
    return header, stored, accessed


def set_all(client, keys):
    """SETs every key (value "1"), pipelined; returns the seconds it took."""
    started = time.monotonic()
    pipe = client.pipeline(transaction=False)
    for i in range(0, len(keys), BATCH):
        for key in keys[i:i + BATCH]:
            pipe.set(key, "1")
        for reply in pipe.execute(raise_on_error=True):
            if reply is not True:
                raise RuntimeError(f"SET answered {reply!r}")
    return time.monotonic() - started


def read_offline(path):
    """strategy-report --markdown's 8-shard table: {row label: [cells]}."""
    rows = {}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 12 and not cells[1].startswith("-") and cells[0] != "8 shards":
                rows.setdefault(cells[0], cells)  # the first table is the 8-shard one
    return rows


def percent(text):
    return float(text.rstrip("%")) / 100


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--shard-ports", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--offline", required=True)
    parser.add_argument("--sample", type=float, required=True)
    parser.add_argument("--seconds", type=float, default=0)
    parser.add_argument("--json-out")
    args = parser.parse_args()

    header, stored, accessed = read_trace(args.trace)
    every = int(header.get("every", 1))
    print(f"trace: one shipment in {every} of the lesson's: {len(stored):,} stored-only keys "
          f"(days 1-25 of the 30-day period), {len(accessed):,} accessed keys (the last 5 days, "
          f"one access each)")

    client = redis.Redis(port=args.port, socket_timeout=120)
    took = set_all(client, stored)
    rate = len(stored) / max(took, 1e-3)
    print(f"phase 1: {len(stored):,} stored keys SET through Santral in {took:.1f} s "
          f"({rate:,.0f}/s)")

    seconds = args.seconds or max(8.0, math.ceil(2 * len(accessed) / rate + 3))
    answer = {}

    def analyze():
        c = redis.Redis(port=args.port, socket_timeout=seconds + 120)
        try:
            answer["json"] = c.execute_command(
                "SANTRAL", "ANALYZE", "shipments", "SECONDS", str(seconds), "SAMPLE",
                str(args.sample), "KEY", "seller", "FORMAT", "json")
        except Exception as e:  # reported below
            answer["error"] = e

    thread = threading.Thread(target=analyze)
    window_start = time.monotonic()
    thread.start()
    time.sleep(0.5)  # the window is open (ANALYZE is on the server's thread by now)
    took = set_all(client, accessed)
    replay_end = time.monotonic() - window_start
    print(f"phase 2: SANTRAL ANALYZE shipments SECONDS {seconds:g} SAMPLE {args.sample:g} KEY "
          f"seller FORMAT json; {len(accessed):,} new keys SET in number order in {took:.1f} s, "
          f"done {replay_end:.1f} s into the window")
    thread.join()
    if "error" in answer:
        sys.exit(f"SANTRAL ANALYZE failed: {answer['error']}")
    if replay_end > seconds - 0.2:
        sys.exit(f"the replay outlasted the {seconds:g} s window: pass a longer --seconds")
    raw = answer["json"]
    if args.json_out:
        with open(args.json_out, "wb" if isinstance(raw, bytes) else "w") as f:
            f.write(raw)
    report = json.loads(raw)

    sizes = [redis.Redis(port=int(p)).dbsize() for p in args.shard_ports.split(",")]
    print("keys per shard (DBSIZE): " + " ".join(f"{s:,}" for s in sizes))

    n = report["sampled"]
    drawn = report["stored"]
    print(f"ANALYZE: {n:,} sampled requests of shipments (expected ~{len(accessed) * args.sample:,.0f}), "
          f"{drawn:,} keys drawn from the shards, {report['shards']} shards")

    # Monotonicity of {number}.
    ok = True
    keys = {k["name"]: k for k in report["keys"]}
    number = next((k for name, k in keys.items() if "number" in name), None)
    seller = next((k for name, k in keys.items() if "seller" in name), None)
    if number is None:
        sys.exit("ANALYZE reported no {number} key")
    r = number["monotonicity"]
    flagged = number["monotonic"]
    print(f"{number['name']}: monotonicity r = {r if r is None else round(r, 4)} over "
          f"{number['new_keys']:,} new keys: {'flagged MONOTONIC' if flagged else 'NOT flagged'}"
          f" ({'ok' if flagged else 'FAIL'})")
    ok &= bool(flagged)
    if seller is not None:
        top = seller["top"][0] if seller["top"] else {"value": "-", "share": 0}
        print(f"{seller['name']}: distinct ~{seller['distinct']:.0f} (lesson: 4000), most "
              f"frequent {top['value']} with {top['share'] * 100:.2f}% of accesses (lesson 7.41%)"
              f", monotonic: {seller['monotonic']}")
    print(f"recommendation: {report['recommendation']}")
    print(f"SCAN MATCH pattern ANALYZE counts shards for: {report['scan_pattern']}")

    offline = read_offline(args.offline)
    whatifs = report["whatif"]
    # Tolerances (see scripts/analyze-lesson's header): hot-spot ratios are a busiest share of n
    # sampled accesses over P shards: 3 standard errors of that share, P * sqrt(p(1-p)/n) with
    # p = 1/P, i.e. 3 sqrt((P-1)/n). Moved shares are a weighted share of the N keys ANALYZE
    # drew from the shards (RANDOMKEY when the window closes; each stands for its shard's keys
    # over its draws): 3 sqrt(p(1-p)/N), at least 0.5 percentage points. Scan shards and store
    # touches are not sampled: exact.
    drawn_keys = max(drawn, 1)
    def hot_tol(shards):
        return 3 * math.sqrt((shards - 1) / max(n, 1))
    def moved_tol(p):
        return max(0.005, 3 * math.sqrt(max(p * (1 - p), 1e-4) / max(drawn_keys, 1)))

    head = ("strategy (8 shards)", "hot-spot", "scan", "touches", "moved +1", "hot-spot +1", "floor")
    lines = [head]
    verdicts = []
    for label, pick, offline_label in ROWS:
        live = next((w for w in whatifs if pick(w)), None)
        off = offline.get(offline_label)
        if live is None or off is None:
            sys.exit(f"no {'ANALYZE' if live is None else 'strategy-report'} row for {label}")
        pairs = [
            ("hot-spot", live["hot_spot"], float(off[1]), hot_tol(8), "{:.2f}"),
            ("scan", live["scan_shards"], int(off[9]), 0, "{}"),
            ("touches", live["store_touches"], int(off[7]), 0, "{}"),
            ("moved +1", live["moved"], percent(off[10]), moved_tol(percent(off[10])), "{:.1%}"),
            ("hot-spot +1", live["hot_spot_grown"], float(off[11]), hot_tol(9), "{:.2f}"),
        ]
        cells = [label]
        for name, mine, theirs, tol, fmt in pairs:
            agree = abs(mine - theirs) <= tol + 1e-9
            mark = "" if agree else " !"
            cells.append(f"{fmt.format(mine)} / {fmt.format(theirs)}{mark}")
            verdicts.append((label, name, mine, theirs, tol, agree, fmt))
        cells.append(f"{live['floor']:.2f}")
        lines.append(cells)
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    print("\nlive ANALYZE / strategy-report --lesson (8 shards); ! = outside the tolerance")
    for row in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print(f"\ntolerances: hot-spot {hot_tol(8):.3f} (8 shards), hot-spot +1 {hot_tol(9):.3f} "
          f"(9 shards) = 3 sqrt((P-1)/n), n = {n:,} sampled accesses; moved +1 = 3 sqrt(p(1-p)/N),"
          f" N = {drawn_keys:,} keys drawn from the shards, at least 0.5 points; scan and touches"
          f" exact")
    disagree = [v for v in verdicts if not v[5]]
    for label, name, mine, theirs, tol, _, fmt in disagree:
        print(f"DISAGREE {label} {name}: live {fmt.format(mine)}, offline {fmt.format(theirs)}, "
              f"tolerance {tol:.3f}")
    print(f"\nagreement: {len(verdicts) - len(disagree)} of {len(verdicts)} figures within "
          f"tolerance; {{number}} {'is' if flagged else 'is NOT'} flagged monotonic")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

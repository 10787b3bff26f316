"""scripts/bench.sh failover: Santral in front of shards that Redis Sentinel manages, while their
primaries fail (run by bench_failover.sh).

  run    Load through Santral: THREADS clients, each one request at a time, half INCR of one
         of COUNTERS_PER_SHARD counters on every shard, half SET unique:<n> <n> (n never used
         twice); every request's times and outcome are kept: acknowledged (OK, an integer),
         failed (an error reply; NOREPLICAS counted apart) or unknown (a timeout or a broken
         connection: it may or may not have run). Meanwhile --kills SIGKILLs and --stops
         SIGSTOPs of a shard's current primary (round-robin over the shards, the stops spread
         among the kills), one at a time, each once every shard has settled. A killed server is
         restarted once Santral serves its successor: this prints "restart <port>" and the shell
         answers "ok" when it answers PING. A stopped one gets SIGCONT once Sentinel has
         switched and down-after + 2 s have passed. From Santral's switch until every shard
         has settled, each poll SETs a probe key through Santral and reads it back from the
         primary Santral names (SANTRAL SHARDMAP, the same before and after the SET). At the
         end every counter and unique key is read from the final primaries. Writes a JSON
         summary to --out.
  table  The summaries of several runs side by side, then each run's failovers and errors.
"""
import argparse
import collections
import itertools
import json
import os
import random
import re
import signal
import statistics
import sys
import threading
import time

import redis

THREADS = 8
COUNTERS_PER_SHARD = 4
SETTLE_TIMEOUT = 120  # s: a restarted server waits ~8 s for Sentinel to make it a replica
SWITCH_TIMEOUT = 60   # s: from a fault to Sentinel naming a new primary, and to Santral following
POLL = 0.02
ACKED, FAILED, NOREPLICAS, UNKNOWN = range(4)


def log(message):
    print(f"[failover_probe {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def wait_for(what, condition, timeout):
    """Polls condition() (a falsy value or a reason string: not yet) until it returns True."""
    deadline = time.perf_counter() + timeout
    while True:
        reason = condition()
        if reason is True:
            return time.perf_counter()
        if time.perf_counter() > deadline:
            raise SystemExit(f"failover_probe: {what} did not happen within {timeout} s"
                             f" (last seen: {reason or 'not yet'})")
        time.sleep(POLL)


def pairs(reply):
    """A flat RESP2 map as a dict."""
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply) - 1, 2)}


class Cluster:
    """The shards as the sentinels, the servers and Santral see them."""

    def __init__(self, santral_port, sentinel_ports, shards):
        self.santral = redis.Redis(port=santral_port, socket_timeout=5)
        self.sentinels = {p: redis.Redis(port=p, socket_timeout=1) for p in sentinel_ports}
        self.shards = shards  # name -> the ports of its three servers
        self.servers = {}
        self.probe_key = {s: keys_on(self.santral, s, "probe:", 1)[0] for s in shards}
        self.tokens = itertools.count()
        self.probes = 0
        self.violations = 0
        self.violation_notes = []  # the first 20

    def server(self, address):
        if address not in self.servers:
            host, port = address.rsplit(":", 1)
            self.servers[address] = redis.Redis(host=host, port=int(port), socket_timeout=2)
        return self.servers[address]

    def sentinel_masters(self, shard):
        """Each sentinel's primary of the shard (None where it did not answer)."""
        out = {}
        for port, sentinel in self.sentinels.items():
            try:
                host, p = sentinel.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", shard)
                out[port] = f"{host.decode()}:{p.decode()}"
            except (redis.RedisError, TypeError, ValueError):
                out[port] = None
        return out

    def santral_primary(self, shard):
        """The shard's primary as SANTRAL SHARDMAP names it (None when it did not answer)."""
        try:
            text = self.santral.execute_command("SANTRAL", "SHARDMAP").decode()
        except redis.RedisError:
            return None
        found = re.search(rf"^shard:{shard} role:primary address:(\S+)", text, re.M)
        return found.group(1) if found else None

    def probe(self, shard):
        """A SET through Santral on the shard's probe key: True when acknowledged. When Santral
        named the same primary before and after it, that primary must hold the value, else a
        violation: the reply came from a server Santral no longer writes to."""
        before = self.santral_primary(shard)
        token = str(next(self.tokens))
        try:
            if not self.santral.set(self.probe_key[shard], token):
                return False
        except redis.RedisError:
            return False
        primary = self.santral_primary(shard)
        if primary is None or primary != before:
            return True
        self.probes += 1
        try:
            found = self.server(primary).get(self.probe_key[shard])
        except redis.RedisError as e:
            found = f"({e})".encode()
        if found != token.encode():
            self.violations += 1
            if self.violations <= 20:
                self.violation_notes.append(f"{time.strftime('%H:%M:%S')} {shard}: SET acknowledged"
                                            f" through Santral, {primary} holds {found!r}, not {token}")
                log(f"VIOLATION {self.violation_notes[-1]}")
        return True

    def unsettled(self, shard):
        """None once the shard has settled, else what is missing."""
        for port, sentinel in self.sentinels.items():
            try:
                master = pairs(sentinel.execute_command("SENTINEL", "MASTER", shard))
            except redis.RedisError as e:
                return f"sentinel {port}: {e}"
            if master["flags"] != b"master":
                return f"sentinel {port} flags {shard}'s primary {master['flags'].decode()}"
            if master["num-other-sentinels"] != b"2":
                return f"sentinel {port} knows {master['num-other-sentinels'].decode()} other sentinels"
        masters = set(self.sentinel_masters(shard).values())
        if len(masters) != 1 or None in masters:
            return f"the sentinels name {shard}'s primary {sorted(map(str, masters))}"
        primary = masters.pop()
        try:
            info = self.server(primary).info("replication")
        except redis.RedisError as e:
            return f"{shard}'s primary {primary}: {e}"
        replicas = {f"{v['ip']}:{v['port']}": v["state"] for k, v in info.items()
                    if re.fullmatch(r"slave\d+", k)}
        expected = {f"127.0.0.1:{p}" for p in self.shards[shard]} - {primary}
        if info.get("role") != "master" or set(replicas) != expected or \
                any(state != "online" for state in replicas.values()):
            return f"{shard}'s primary {primary} is {info.get('role')} with replicas {replicas}"
        if self.santral_primary(shard) != primary:
            return f"Santral's primary of {shard} is {self.santral_primary(shard)}, not {primary}"
        if not self.probe(shard):
            return f"a SET through Santral on {shard} failed"
        return None

    def settle(self, watch=None):
        """Waits until every shard has settled; returns when. watch() is called on every poll."""
        def all_settled():
            if watch:
                watch()
            for shard in self.shards:
                reason = self.unsettled(shard)
                if reason:
                    return reason
            return True
        return wait_for("every shard settling", all_settled, SETTLE_TIMEOUT)


def keys_on(santral, shard, prefix, count):
    """The first <count> keys <prefix><i> that Santral places on <shard> (SANTRAL EXPLAIN)."""
    out = []
    for i in itertools.count():
        if shard_of(santral, [f"{prefix}{i}"])[0] == shard:
            out.append(f"{prefix}{i}")
            if len(out) == count:
                return out


def shard_of(santral, keys):
    """Each key's shard, as SANTRAL EXPLAIN SET names it."""
    out = []
    for start in range(0, len(keys), 2000):
        pipe = santral.pipeline(transaction=False)
        for key in keys[start:start + 2000]:
            pipe.execute_command("SANTRAL", "EXPLAIN", "SET", key, "0")
        out += [pairs(r)["shards"][0].decode() for r in pipe.execute()]
    return out


class Load:
    """THREADS clients through Santral, <rate> requests a second in all, each request kept as
    (counter index or -1, unique n or -1, sent, answered, outcome, INCR's value)."""

    def __init__(self, port, counters, rate):
        self.port, self.counters, self.period = port, counters, THREADS / rate
        self.records = []
        self.errors = collections.Counter()  # answer text -> count, under self.lock
        self.lock = threading.Lock()
        self.unique = itertools.count()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(i,), daemon=True)
                        for i in range(THREADS)]

    def client(self, seed):
        # A bare connection: redis.Redis could retry a command after a broken connection.
        conn = redis.Connection(port=self.port, socket_timeout=5, socket_connect_timeout=2)
        rnd = random.Random(seed)
        due = time.perf_counter()
        while not self.stop.is_set():
            due += self.period
            now = time.perf_counter()
            if due > now:
                time.sleep(due - now)
            else:
                due = now  # no catching up after a stall
            counter = n = -1
            if rnd.random() < 0.5:
                counter = rnd.randrange(len(self.counters))
                args = ("INCR", self.counters[counter])
            else:
                n = next(self.unique)
                args = ("SET", f"unique:{n}", n)
            value = text = None
            sent = time.perf_counter()
            try:
                conn.send_command(*args)
                reply = conn.read_response()
                if reply == b"OK" or isinstance(reply, int):
                    outcome, value = ACKED, reply
                else:
                    outcome, text = FAILED, f"unexpected reply {reply!r:.60}"
            except (redis.ResponseError, redis.exceptions.BusyLoadingError) as e:
                outcome = NOREPLICAS if str(e).startswith("NOREPLICAS") else FAILED
                text = re.sub(r"127\.0\.0\.1:\d+", "<addr>", f"{type(e).__name__}: {e}")[:200]
            except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
                outcome, text = UNKNOWN, f"(client) {type(e).__name__}: {e}"[:200]
                conn.disconnect()
            self.records.append((counter, n, sent, time.perf_counter(), outcome, value))
            if text:
                with self.lock:
                    self.errors[text] += 1

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join()


def restart(port):
    """Has the shell restart the redis-server of <port> from its config file."""
    print(f"restart {port}", flush=True)
    if sys.stdin.readline().strip() != "ok":
        raise SystemExit(f"failover_probe: the shell did not restart the server on port {port}")


def faults_plan(kills, stops, shards):
    """[(kind, shard)]: kills and stops each round-robin over the shards, the stops spread
    evenly among the kills."""
    total = kills + stops
    stop_at = {int((j + 0.5) * total / stops) for j in range(stops)} if stops else set()
    plan, k, s = [], 0, 0
    for i in range(total):
        if i in stop_at:
            plan.append(("stop", shards[s % len(shards)]))
            s += 1
        else:
            plan.append(("kill", shards[k % len(shards)]))
            k += 1
    return plan


def fault(cluster, kind, shard, down_after_ms, stopped_pids):
    """One fault of the shard's current primary, until every shard has settled again; returns
    its times (perf_counter) and addresses."""
    old = cluster.sentinel_masters(shard).popitem()[1]
    pid = cluster.server(old).info("server")["process_id"]
    f = {"kind": kind, "shard": shard}
    f["at"] = time.perf_counter()
    if kind == "kill":
        os.kill(pid, signal.SIGKILL)
    else:
        os.kill(pid, signal.SIGSTOP)
        stopped_pids.add(pid)
    log(f"{kind} {shard}'s primary {old} (pid {pid})")

    f["switch"] = wait_for(f"a sentinel naming a new primary of {shard} after {old}'s {kind}",
                           lambda: any(a not in (None, old) for a in cluster.sentinel_masters(shard).values())
                           or None, SWITCH_TIMEOUT)
    f["path"] = [old]  # the primaries Santral served the shard from, in turn

    def note_path():
        """Notes a primary of Santral's new since the last look; True once it left the old."""
        now = cluster.santral_primary(shard)
        if now and now != f["path"][-1]:
            f["path"].append(now)
            if len(f["path"]) > 2:
                log(f"Santral switched {shard} again, to {now}")
        return len(f["path"]) > 1 or None

    def watch():
        cluster.probe(shard)
        note_path()
    f["follow"] = wait_for(f"Santral serving {shard} from a new primary", note_path, SWITCH_TIMEOUT)
    if kind == "kill":
        restart(old.rsplit(":", 1)[1])
    else:
        # Stopped past down-after + 2 s, while Santral is asked to write to the new primary.
        while time.perf_counter() < f["at"] + down_after_ms / 1000 + 2:
            watch()
            time.sleep(0.05)
        os.kill(pid, signal.SIGCONT)
        stopped_pids.discard(pid)
    f["resumed"] = time.perf_counter()
    f["settled"] = cluster.settle(watch=watch)
    return f


def analyse(cluster, load, counters, counter_shard, faults, end):
    """The summary: outcomes, what the final primaries hold, and each fault's failing window
    and the acknowledged writes it lost."""
    records = load.records
    attempted_n = sorted(r[1] for r in records if r[1] >= 0)
    unique_shard = dict(zip(attempted_n, shard_of(cluster.santral, [f"unique:{n}" for n in attempted_n])))
    outcomes = collections.Counter(r[4] for r in records)
    out = {"requests": len(records), "duration_s": end - records[0][2] if records else 0,
           "acked": outcomes[ACKED], "failed": outcomes[FAILED] + outcomes[NOREPLICAS],
           "noreplicas": outcomes[NOREPLICAS], "unknown": outcomes[UNKNOWN],
           "errors": load.errors.most_common(12)}

    # What the final primaries hold: every unique:* key on each, and the counters.
    primaries = {s: cluster.sentinel_masters(s).popitem()[1] for s in cluster.shards}
    present = {}  # n -> (shard, value)
    for shard, address in primaries.items():
        server = cluster.server(address)
        names = list(server.scan_iter(match="unique:*", count=1000))
        for start in range(0, len(names), 1000):
            batch = names[start:start + 1000]
            for name, value in zip(batch, server.mget(batch)):
                present[int(name.split(b":")[1])] = (shard, value)
    acked_n = {r[1] for r in records if r[1] >= 0 and r[4] == ACKED}
    attempted = set(attempted_n)
    lost = {n for n in acked_n if n not in present or present[n][0] != unique_shard[n]}
    out.update(
        unique_attempted=len(attempted), unique_acked=len(acked_n), unique_missing=len(lost),
        unique_phantom=sum(1 for n in present if n not in attempted),
        unique_misplaced=sum(1 for n, (s, _) in present.items() if n in attempted and s != unique_shard[n]),
        unique_wrong_value=sum(1 for n, (_, v) in present.items() if v != str(n).encode()),
        unique_unacked_applied=sum(1 for n in attempted - acked_n if n in present),
        unique_per_shard={s: sum(1 for sh, _ in present.values() if sh == s) for s in cluster.shards})
    deficit = above = short = 0
    stale = []  # INCRs acknowledged with a value not above one acknowledged before they were sent
    for i, name in enumerate(counters):
        final = int(cluster.server(primaries[counter_shard[i]]).get(name) or 0)
        mine = [r for r in records if r[0] == i]
        acks = [r for r in mine if r[4] == ACKED]
        deficit += max(0, len(acks) - final)
        short += len(acks) > final
        above += max(0, final - len(mine))
        by_end = sorted(acks, key=lambda r: r[3])
        j, highest = 0, 0
        for r in sorted(acks, key=lambda r: r[2]):
            while j < len(by_end) and by_end[j][3] < r[2]:
                highest = max(highest, by_end[j][5])
                j += 1
            if r[5] <= highest:
                stale.append(r)
    incrs = [r for r in records if r[0] >= 0]
    out.update(incr_attempted=len(incrs), incr_acked=sum(1 for r in incrs if r[4] == ACKED),
               counters=len(counters), incr_deficit=deficit, counters_short=short,
               incr_above=above, incr_stale=len(stale), probes=cluster.probes,
               probe_violations=cluster.violations, probe_violation_notes=cluster.violation_notes)

    def shard_of_record(r):
        return counter_shard[r[0]] if r[0] >= 0 else unique_shard[r[1]]
    by_shard = collections.defaultdict(list)
    for r in records:
        by_shard[shard_of_record(r)].append(r)

    def fault_of(r, t):
        """The fault a request answered (or sent) at t belongs to: the first on its shard that
        settled after t."""
        return next((i for i, f in enumerate(faults)
                     if f["shard"] == shard_of_record(r) and f["settled"] >= t), None)
    lost_in = collections.defaultdict(list)
    for r in records:
        if r[1] in lost and r[4] == ACKED:
            lost_in[fault_of(r, r[3])].append(r)
    stale_in = collections.defaultdict(list)
    for r in stale:
        stale_in[fault_of(r, r[2])].append(r)
    out["lost_after_last_fault"] = len(lost_in[None]) + len(stale_in[None])

    out["faults"] = []
    for i, f in enumerate(faults):
        until = faults[i + 1]["at"] if i + 1 < len(faults) else end
        mine = [r for r in by_shard[f["shard"]] if f["at"] <= r[3] < until]
        bad = [r for r in mine if r[4] != ACKED]
        # Acknowledged though sent after the fault and before any sentinel named a successor:
        # only the failed primary can have answered them.
        from_old = [r for r in mine if r[4] == ACKED and f["at"] <= r[2] < f["switch"]]
        row = {k: f[k] for k in ("kind", "shard", "path")}
        row.update(switch_s=f["switch"] - f["at"], follow_s=f["follow"] - f["switch"],
                   resumed_s=f["resumed"] - f["at"], settled_s=f["settled"] - f["at"],
                   failed=sum(1 for r in bad if r[4] in (FAILED, NOREPLICAS)),
                   unknown=sum(1 for r in bad if r[4] == UNKNOWN),
                   failed_other_shards=sum(1 for s, rs in by_shard.items() if s != f["shard"]
                                           for r in rs if f["at"] <= r[3] < until and r[4] != ACKED),
                   slowest_ack_s=max((r[3] - r[2] for r in mine if r[4] == ACKED), default=0),
                   acks_from_old=len(from_old),
                   acks_from_old_after_switch=sum(1 for r in from_old if r[3] > f["follow"]),
                   acks_from_old_answered_s=sorted(round(r[3] - f["at"], 3) for r in from_old)[:5],
                   lost_sets_acked_s=sorted(round(r[3] - f["at"], 3) for r in lost_in[i]),
                   stale_incrs_sent_s=sorted(round(r[2] - f["at"], 3) for r in stale_in[i]))
        if bad:
            first = min(bad, key=lambda r: r[2])
            later = [r[3] for r in mine if r[4] == ACKED and r[2] >= first[3]]
            row["window_s"] = (min(later) if later else until) - first[2]
            row["first_failure_s"] = first[2] - f["at"]
            row["last_failure_s"] = max(r[3] for r in bad) - f["at"]
        else:
            row["window_s"] = 0.0
        out["faults"].append(row)
    return out


def run(args):
    shards = {}
    for spec in args.shards.split():
        name, ports = spec.split("=")
        shards[name] = [int(p) for p in ports.split(",")]
    cluster = Cluster(args.santral, [int(p) for p in args.sentinels.split(",")], shards)
    names = list(shards)
    counters, counter_shard = [], []
    for shard in names:
        for key in keys_on(cluster.santral, shard, "counter:", COUNTERS_PER_SHARD):
            counters.append(key)
            counter_shard.append(shard)
    stopped = set()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        log("waiting for the cluster to settle")
        cluster.settle()
        load = Load(args.santral, counters, args.rate)
        load.start()
        faults = []
        plan = faults_plan(args.kills, args.stops, names)
        for i, (kind, shard) in enumerate(plan):
            f = fault(cluster, kind, shard, args.down_after_ms, stopped)
            faults.append(f)
            log(f"{i + 1}/{len(plan)}: {kind} {shard}: {' -> '.join(f['path'])}, Sentinel after"
                f" {f['switch'] - f['at']:.2f} s, Santral {1000 * (f['follow'] - f['switch']):.0f} ms"
                f" later, settled after {f['settled'] - f['at']:.1f} s")
        end = time.perf_counter()
        load.finish()
        cluster.settle()
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    summary = analyse(cluster, load, counters, counter_shard, faults, end)
    summary.update(label=args.label, kills=args.kills, stops=args.stops)
    with open(args.out, "w") as out:
        json.dump(summary, out, indent=1)


def p50_max(values, scale=1.0, fmt="{:.2f}"):
    """The median and the largest of the values, scaled, as "p50 / max"."""
    if not values:
        return "-"
    return f"{fmt.format(statistics.median(values) * scale)} / {fmt.format(max(values) * scale)}"


def times(count, seconds):
    """<count>, and the first few of its times (s from the fault)."""
    if not count:
        return "0"
    shown = ", ".join(f"{t:.2f}" for t in seconds[:5])
    return f"{count} ({shown}{', ...' if count > 5 else ''})"


def table(paths):
    runs = [json.load(open(p)) for p in paths]

    def of(run, kind, field):
        return [f[field] for f in run["faults"] if f["kind"] == kind]
    rows = [
        ("faults: SIGKILL + SIGSTOP", lambda r: f"{r['kills']} + {r['stops']}"),
        ("requests (load seconds)", lambda r: f"{r['requests']} ({r['duration_s']:.0f} s)"),
        ("acknowledged", lambda r: r["acked"]),
        ("failed: an error answer", lambda r: r["failed"]),
        ("  of which NOREPLICAS", lambda r: r["noreplicas"]),
        ("unknown: timeout / broken connection", lambda r: r["unknown"]),
        ("Sentinel names the new primary, s after a kill: p50 / max",
         lambda r: p50_max(of(r, "kill", "switch_s"))),
        ("  after a stop", lambda r: p50_max(of(r, "stop", "switch_s"))),
        ("Santral serves it, ms after Sentinel: p50 / max",
         lambda r: p50_max(of(r, "kill", "follow_s") + of(r, "stop", "follow_s"), 1000, "{:.0f}")),
        ("requests to the shard failing, s (kills): p50 / max",
         lambda r: p50_max(of(r, "kill", "window_s"))),
        ("requests to the shard failing, s (stops): p50 / max",
         lambda r: p50_max(of(r, "stop", "window_s"))),
        ("failed requests on the other shards", lambda r: sum(f["failed_other_shards"] for f in r["faults"])),
        ("acknowledged INCRs lost (deficit; counters short)",
         lambda r: f"{r['incr_deficit']} ({r['counters_short']} of {r['counters']})"),
        ("acknowledged unique SETs missing", lambda r: f"{r['unique_missing']} of {r['unique_acked']}"),
        ("  lost in kills / in stops",
         lambda r: f"{sum(len(f['lost_sets_acked_s']) for f in r['faults'] if f['kind'] == 'kill')} / "
                   f"{sum(len(f['lost_sets_acked_s']) for f in r['faults'] if f['kind'] == 'stop')}"),
        ("INCR acknowledged with a value not above an earlier one", lambda r: r["incr_stale"]),
        ("phantom: unique keys never SET / INCRs beyond attempts",
         lambda r: f"{r['unique_phantom']} / {r['incr_above']}"),
        ("unique keys on a wrong shard / with a wrong value",
         lambda r: f"{r['unique_misplaced']} / {r['unique_wrong_value']}"),
        ("unacknowledged unique SETs applied anyway",
         lambda r: f"{r['unique_unacked_applied']} of {r['unique_attempted'] - r['unique_acked']}"),
        # Only a stopped primary can answer after the switch; after a kill these are requests
        # held by failover.wait_ms and answered by the new primary.
        ("acknowledged by a stopped primary after Santral's switch",
         lambda r: sum(f["acks_from_old_after_switch"] for f in r["faults"] if f["kind"] == "stop")),
        ("probe SETs acknowledged but not on Santral's primary",
         lambda r: f"{r['probe_violations']} of {r['probes']}"),
        ("faults after which Santral switched twice (Sentinel again)",
         lambda r: sum(len(f["path"]) > 2 for f in r["faults"])),
        ("unique keys per shard at the end", lambda r: " / ".join(str(v) for v in r["unique_per_shard"].values())),
    ]
    width = max(len(r["label"]) for r in runs + [{"label": "x" * 24}])
    print(f"| {'':60} |" + "".join(f" {r['label']:>{width}} |" for r in runs))
    print(f"|{'-' * 62}|" + "".join(f"{'-' * (width + 1)}:|" for _ in runs))
    for name, cell in rows:
        print(f"| {name:60} |" + "".join(f" {str(cell(r)):>{width}} |" for r in runs))
    for r in runs:
        print(f"\nFailovers, {r['label']}: times in s from the fault; a fault's requests are those"
              " answered from it until the next fault; failing: from the first failed request's send"
              " to the first acknowledged reply, on that shard, to a request sent after it failed:\n")
        print("| # | fault | shard | Santral's primaries | Sentinel | +Santral ms | resumed | failing |"
              " failed / unknown | first / last failure | slowest ack | acked by the old primary"
              " (answered at) | acked SETs lost (acked at) | stale INCRs (sent at) | settled |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for i, f in enumerate(r["faults"]):
            first_last = (f"{f['first_failure_s']:.2f} / {f['last_failure_s']:.2f}"
                          if "first_failure_s" in f else "-")
            print(f"| {i + 1} | {f['kind']} | {f['shard']} | {' -> '.join(f['path'])} |"
                  f" {f['switch_s']:.2f} | {1000 * f['follow_s']:.0f} | {f['resumed_s']:.2f} |"
                  f" {f['window_s']:.2f} | {f['failed']} / {f['unknown']} | {first_last} |"
                  f" {f['slowest_ack_s']:.2f} | {times(f['acks_from_old'], f['acks_from_old_answered_s'])} |"
                  f" {times(len(f['lost_sets_acked_s']), f['lost_sets_acked_s'])} |"
                  f" {times(len(f['stale_incrs_sent_s']), f['stale_incrs_sent_s'])} | {f['settled_s']:.1f} |")
        if r["lost_after_last_fault"]:
            print(f"\n{r['lost_after_last_fault']} acknowledged writes lost after the last fault settled.")
        print(f"\nAnswers other than an acknowledgement, {r['label']}:\n")
        for text, count in r["errors"]:
            print(f"- {count} x {text}")
        for note in r["probe_violation_notes"]:
            print(f"- VIOLATION {note}")


def main():
    if sys.argv[1] == "table":
        table(sys.argv[2:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["run"])
    parser.add_argument("--santral", type=int, required=True)
    parser.add_argument("--sentinels", required=True, help="port,port,port")
    parser.add_argument("--shards", required=True, help="'s0=port,port,port s1=...'")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--stops", type=int, default=5)
    parser.add_argument("--down-after-ms", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=2000)
    parser.add_argument("--label", required=True)
    parser.add_argument("--out", required=True)
    run(parser.parse_args())


if __name__ == "__main__":
    main()

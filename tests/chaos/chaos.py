#!/usr/bin/python3
"""Santral's fault-injection harness: real redis-server shards, one Santral, a TCP fault proxy
on every shard link, workloads over long-lived connections, an operator who moves keys and
edits the map, and faults. At the end every fault is lifted, the move (if any) is let finish,
and a checker says what held.

    scripts/chaos.sh [seconds]                       # default 600
    /usr/bin/python3 tests/chaos/chaos.py [seconds] [--seed N] [--santral PATH] [--keep]
    /usr/bin/python3 tests/chaos/chaos.py 30 --self-test --no-nemesis   # the checkers' test

The processes (all on loopback, in a temporary directory):
  - four redis-server shards s0..s3 (`appendonly yes`, `appendfsync always`); the map starts
    with s0, s1, s2; s3 is the shard the operator adds and removes;
  - tests/support/fault_proxy.py with one link per shard: Santral's config names the proxy's
    ports, so each shard's link (Santral's connections, and the MIGRATEs a source sends to its
    target) can be delayed, stalled, reset or blackholed;
  - Santral ($SANTRAL_BINARY or --santral; default build/app/santral), two workers,
    `cross_shard_writes: allow`, `watch_file: false` (the operator reloads with SANTRAL
    RELOAD), the walk throttled (`resharding.max_keys_per_sec`, set at each move from the key
    count so that a move takes a few seconds).

Workloads (tests/chaos/workloads.py), nemeses (tests/chaos/nemesis.py): see those files.
Fleet mode (--fleet [--fence acl|lease]): three routers on a three-member etcd, five shards,
router and etcd faults; see tests/chaos/fleet.py.
Failover mode (--failover [--write-concern 1:500] [--failover-wait-ms 4000]): three shards of a
primary and a replica each that three Redis Sentinels manage, Santral following them (shards by
sentinel_master, write_concern, failover.wait_ms), no moves; faults SIGKILL or SIGSTOP a shard's
current primary (or kill its replica), one at a time once every shard has settled; the final
check waits until Santral serves the primary Sentinel names and the replica is in sync, and
reads placement from the current primaries; see tests/chaos/failover.py.

    scripts/chaos.sh 90 --failover [--seed N] [--faults primary-kill,primary-stop]

Options that make the faults hit Santral's timeouts harder: --request-ms N (Santral's
timeouts.request_ms, default 2000; most shard stops, 0.5-5 s, and the late-delivering link
faults outlast it), --burners N (N busy-loop processes beside the run, as on a loaded machine).

After each move has ended, before the operator's next action: every data key on exactly one
shard, the owner of the map in force (check_placement_after_move).

The checker, once faults are lifted and no move runs: each workload's end-state conditions;
then every key on every redis-server (SCAN on each, directly): on exactly one shard, and that
shard the owner the map in force names (SANTRAL EXPLAIN MGET <keys>, through Santral). It
prints per workload what it checked, counts (operations, moves, faults, anomalies by kind),
what each shard's append-only file holds for the keys anomalies named (tests/chaos/aof.py), and
ends with one line `chaos: N passed, M failed` (N checks that held, M anomalies); the exit code
is 0 only when M is 0 (with --self-test: only when every injected damage was reported). The
seed (--seed, else random) is printed first: the same seed gives the same sequence of operator
actions, faults and workload choices; their timing, and so what they meet, still varies.

Liveness: a move may take as long as it needs while it makes progress; one whose keys_moved
stays the same for --settle seconds (120) once every fault is lifted is an anomaly, and so is a
read never answered after healing.
"""

import argparse
import collections
import contextlib
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import aof  # noqa: E402
from client import NOTRUN, NOTSENT, OK, UNKNOWN, Client, ErrorLog  # noqa: E402
import cluster  # noqa: E402
import failover as failover_mode  # noqa: E402
import fleet as fleet_mode  # noqa: E402
import nemesis  # noqa: E402
import workloads  # noqa: E402

now = time.monotonic
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SHARDS = ["s0", "s1", "s2", "s3"]
# Faults that may run while an UNSALT folds a counter (every other fault waits until it is done).
UNSALT_ALLOWS = ("shard-stop",)


def is_internal(key):
    """Santral's own keys on the shards (a fleet's MIGRATE mark santral:receiving, receiving_mark.h,
    and any other santral: key but the marks of UNSALT's adds, santral:fold:..., which live with
    the key they fold and are placed like data): not data, not placed by the map."""
    return key.startswith("santral:") and not key.startswith("santral:fold:")


class Env:
    """What the workloads, the nemeses and the checker share."""

    def __init__(self, args, seed, workdir):
        self.args = args
        self.seed = seed
        self.workdir = workdir
        self.t0 = now()
        self.wall0 = time.time()  # the same instant on the wall clock (AOF #TS lines, santral.log)
        self.request_ms = args.request_ms
        self.stop_workloads = threading.Event()
        self.stop_nemeses = threading.Event()
        self.fault_lock = threading.Lock()  # one fault at a time (Env.fault)
        # UNSALT runs beside shard stops only: a fault of another kind waits for it, and it
        # waits for one (Env.fault, Env.unsalting).
        self._gate = threading.Condition()
        self._unsalting = 0
        self._heavy_fault = False
        self.salt_lock = threading.Lock()  # held while an UNSALT folds: no SIGKILL
        self.kill_pending = False  # a SIGKILL of Santral waits for salt_lock
        self.errors = ErrorLog()
        self._lock = threading.Lock()
        self._print_lock = threading.Lock()
        self.anomalies = collections.Counter()
        self.examples = collections.defaultdict(list)
        # key -> (the first anomaly kind that named it, when: seconds since the start), for
        # the report's AOF history
        self.anomaly_keys = {}
        self.placement_reported = set()  # (key, shards) found misplaced after a move
        self.lost_write_refusals = collections.Counter()  # failover mode: shard -> refusals
        self.checks = collections.Counter()
        self.counts = collections.Counter()
        self.faults = collections.Counter()
        self.last_event = ""
        self.clients = []
        self.max_moves_seen = 0
        self.long_lived = set()
        self._moves_switched = 0
        self.pace_s = args.pace
        self._state_lock = threading.Lock()
        self._state_client = None
        self._state_cache = (0.0, None)
        self.spawner = cluster.Spawner()
        self.shards = {}
        self.proxy = None
        self.santral = None
        self.fleet = None  # fleet mode (--fleet): fleet.Fleet, its routers and etcd
        self.failover = None  # failover mode (--failover): failover.Failover, Sentinel's shards
        self.burners = None  # --burners N: cluster.Burners
        self.quiet = args.quiet
        self.final_budget_end = None
        self.walk_rng = random.Random(seed * 13 + 3)

    # --- reporting ----------------------------------------------------------------------------
    def since_start(self, t):
        return t - self.t0

    def stamp(self):
        return f"[{now() - self.t0:7.1f}s]"

    def event(self, text):
        with self._lock:
            self.last_event = f"{self.stamp()} {text}"
        if not self.quiet:
            self.say(f"{self.stamp()} {text}")

    def anomaly(self, kind, detail, key=None):
        """An anomaly; `key`, when it is about one key, gets its AOF history in the report."""
        with self._lock:
            if key is not None and key not in self.anomaly_keys and len(self.anomaly_keys) < 12:
                self.anomaly_keys[key] = (kind, now() - self.t0)
            self.anomalies[kind] += 1
            n = self.anomalies[kind]
            if len(self.examples[kind]) < 6:
                self.examples[kind].append(f"{self.stamp()} {detail}  (last event: {self.last_event})")
        if n <= 3:
            self.say(f"{self.stamp()} ANOMALY {kind}: {detail}")
        elif n in (10, 100, 1000, 10000):
            self.say(f"{self.stamp()} ANOMALY {kind}: {n} so far")

    def say(self, line):
        with self._print_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def harness_error(self, text):
        self.anomaly("harness error (not Santral's)", text)

    def passed(self, kind, n=1):
        with self._lock:
            self.checks[kind] += n

    def count(self, name, n=1):
        with self._lock:
            self.counts[name] += n

    def count_fault(self, kind):
        with self._lock:
            self.faults[kind] += 1

    # --- clients ------------------------------------------------------------------------------
    @property
    def santral_port(self):
        return self.santral.port

    def port_for(self, client):
        """The port a client connects to: Santral's, or in fleet mode its router's."""
        if self.fleet is None:
            return self.santral.port
        return self.fleet.port_for(client)

    def nth_router(self, k):
        """Fleet mode: the index of router k (mod their number); single mode: None."""
        return None if self.fleet is None else k % len(self.fleet.routers)

    def register_client(self, client):
        if self.fleet is not None and client.router is None:
            client.router = client.bound = self.fleet.assign()
        with self._lock:
            self.clients.append(client)

    def note_client_lifetime(self, client):
        seen = client.moves_seen()
        with self._lock:
            self.max_moves_seen = max(self.max_moves_seen, seen)
            if seen >= 2:
                self.long_lived.add(client.name)

    def moves_switched(self):
        return self._moves_switched

    def moves_switched_add(self):
        with self._lock:
            self._moves_switched += 1

    # --- faults one at a time, UNSALT beside shard stops only --------------------------------
    def fault_begin(self, kind):
        """Takes the fault slot for a fault of `kind` (one fault at a time); one that is not a
        shard stop also waits until no UNSALT runs. Released by fault_end(kind), from any
        thread (a stop's watchdog may end it)."""
        self.fault_lock.acquire()
        if kind not in UNSALT_ALLOWS:
            with self._gate:
                while self._unsalting and not self.stop_nemeses.is_set():
                    self._gate.wait(0.2)
                self._heavy_fault = True

    def fault_end(self, kind):
        if kind not in UNSALT_ALLOWS:
            with self._gate:
                self._heavy_fault = False
                self._gate.notify_all()
        self.fault_lock.release()

    @contextlib.contextmanager
    def fault(self, kind):
        self.fault_begin(kind)
        try:
            yield
        finally:
            self.fault_end(kind)

    @contextlib.contextmanager
    def unsalting(self):
        """While an UNSALT runs: no fault but shard stops (UNSALT_ALLOWS)."""
        with self._gate:
            while self._heavy_fault:
                self._gate.wait(0.2)
            self._unsalting += 1
        try:
            yield
        finally:
            with self._gate:
                self._unsalting -= 1
                self._gate.notify_all()

    def note_lost_write_refusal(self, text):
        """Failover mode: Santral refused a write because a shard lost acknowledged writes
        (`SANTRAL FAILOVER ACCEPT <shard>` lifts it); counted per shard it names."""
        import re

        found = (re.search(r"FAILOVER ACCEPT ['\"]?([\w.-]+)", text)
                 or re.search(r"shard '([^']+)'", text))
        with self._lock:
            self.lost_write_refusals[found.group(1) if found else "?"] += 1

    def sleep_workload(self, seconds):
        return not self.stop_workloads.wait(seconds)

    def sleep_nemesis(self, seconds):
        return not self.stop_nemeses.wait(seconds)

    def pace(self):
        if self.pace_s > 0:
            self.stop_workloads.wait(self.pace_s)

    @staticmethod
    def as_map(value):
        if isinstance(value, dict):
            return value
        if isinstance(value, list):
            return {value[i]: value[i + 1] for i in range(0, len(value) - 1, 2)}
        return {}

    def reshard_state(self):
        """SANTRAL RESHARD STATUS's state (cached 100 ms), or None when Santral is down."""
        with self._state_lock:
            at, state = self._state_cache
            if now() - at < 0.1:
                return state
            if self._state_client is None:
                self._state_client = Client(self, "state-poll", timeout=5.0, router="any")
            out = self._state_client.call("SANTRAL", "RESHARD", "STATUS")
            state = self.as_map(out.value).get("state") if out.ok else None
            self._state_cache = (now(), state)
            return state

    def wait_shards_up(self, timeout_s):
        """Waits until SANTRAL SHARDMAP shows every shard's primary up (True), or the time."""
        client = Client(self, "shards-up", timeout=5.0, router="any")
        end = now() + timeout_s
        try:
            while now() < end:
                out = client.call("SANTRAL", "SHARDMAP")
                if out.ok and isinstance(out.value, str):
                    states = [line.split("state:")[1].split()[0]
                              for line in out.value.splitlines()
                              if line.startswith("shard:") and "state:" in line]
                    if states and all(s == "up" for s in states):
                        return True
                time.sleep(0.2)
            return False
        finally:
            client.drop()

    def final_read(self, *args, deadline_s=60.0):
        """A read of the final check, retried until answered; a read never answered is a
        liveness anomaly."""
        client = getattr(self, "_final_client", None)
        if client is None:
            client = self._final_client = Client(self, "final-check", timeout=30.0,
                                                        router="any")
        # One budget for every final read: a Santral that never answers again must not make
        # the check last for hours.
        if self.final_budget_end is None:
            self.final_budget_end = now() + 180.0
        end = now() + max(3.0, min(deadline_s, self.final_budget_end - now()))
        while True:
            out = client.call(*args)
            if out.ok or now() > end:
                break
            time.sleep(0.25)
        if not out.ok:
            self.anomaly("liveness: a read after healing was never answered",
                         f"{' '.join(args[:3])}: {out.error}")
        return out

    # --- the processes ------------------------------------------------------------------------
    def restart_santral(self):
        for attempt in range(30):
            if self.santral.start():
                return True
            if attempt == 0:
                self.anomaly("santral: did not start again on its config",
                             self.santral.log_tail(6).replace("\n", " | ")[-600:])
            self.santral.kill(signal.SIGKILL)
            time.sleep(1.0)
        raise RuntimeError("santral does not start: " + self.santral.log_tail(10))

    def walk_rate(self):
        keys = 0
        for shard in self.shards.values():
            try:
                keys += shard.client(timeout=2.0).dbsize()
            except Exception:
                pass
        # A walk of every key would take walk_seconds (a move walks a share of them); one move
        # in three is three times slower, for longer windows.
        seconds = self.args.walk_seconds * (3 if self.walk_rng.random() < 1 / 3 else 1)
        return int(max(20, min(3000, keys / seconds)))

    def owners(self, keys, expect=None):
        """key -> the shard name the map in force names, by SANTRAL EXPLAIN MGET. With `expect`
        (a MapModel): None unless the router that answers serves that map (SANTRAL SHARDMAP on
        the same connection before and after; in a fleet a router may lag a moment)."""
        client = Client(self, "explain", timeout=30.0, router="any")
        if expect is not None and nemesis.parse_shardmap(
                client.call("SANTRAL", "SHARDMAP")) != expect:
            client.drop()
            return None
        owners = {}
        for start in range(0, len(keys), 200):
            batch = keys[start:start + 200]
            for attempt in range(20):
                out = client.call("SANTRAL", "EXPLAIN", "MGET", *batch)
                if out.ok:
                    break
                time.sleep(0.5)
            if not out.ok:
                self.harness_error(f"SANTRAL EXPLAIN failed: {out.error}")
                continue
            for entry in self.as_map(out.value).get("keys", []):
                entry = self.as_map(entry)
                if "key" in entry and "shard" in entry:
                    owners[entry["key"]] = entry["shard"]
        if expect is not None and nemesis.parse_shardmap(
                client.call("SANTRAL", "SHARDMAP")) != expect:
            owners = None
        client.drop()
        return owners

    def placement_after_move(self, model, what):
        """The operator's check once a move has ended (check_placement_after_move)."""
        check_placement_after_move(self, model, what)

    def aof_dirs(self):
        """[(server name, its dir)] of every redis-server holding data (their AOFs)."""
        if self.failover is not None:
            return [(n, s.dir) for n, s in sorted(self.failover.servers.items())]
        return [(n, s.dir) for n, s in sorted(self.shards.items())]

    def shards_holding(self, key):
        return [name for name, shard in self.shards.items() if shard.client().exists(key)]

    def direct_on_owner(self, key, *command, require_key=True):
        """Self-test: runs `command` directly on the shard that holds `key` (or its owner)."""
        on = self.shards_holding(key)
        if not on:
            if require_key:
                return False
            on = [self.owners([key]).get(key)]
            if on[0] is None:
                return False
        self.shards[on[0]].client().execute_command(*command)
        return True

    def close(self):
        if self.burners is not None:
            self.burners.stop()
        if self.fleet is not None:
            self.fleet.close()
        elif self.failover is not None:
            self.failover.close()
        elif self.santral is not None:
            self.santral.close()
        if self.proxy is not None:
            self.proxy.close()
        for shard in self.shards.values():
            shard.close()


def _join_all(env, threads, seconds, what):
    """Waits for each thread up to `seconds`; one still running is the harness's own error."""
    for t in threads:
        t.join(seconds)
        if t.is_alive():
            env.harness_error(f"{what} {t.name} did not stop in {seconds} s")


def scan_shards(env, deadline_s=None):
    """key -> [shard names] for every data key on every shard (SCAN of each, directly). With
    deadline_s, a shard that does not answer (stopped or restarting under a fault) is asked
    again until then, and None says one never did."""
    where = collections.defaultdict(list)
    end = None if deadline_s is None else now() + deadline_s
    for name, shard in sorted(env.shards.items()):
        while True:
            try:
                keys = [k for k in shard.client(timeout=2.0 if end else 10.0).scan_iter(count=1000)
                        if not is_internal(k)]
                break
            except Exception:
                if end is None:
                    raise
                if now() > end or env.stop_nemeses.is_set():
                    return None
                time.sleep(0.3)
        for key in keys:
            where[key].append(name)
    return where


def check_placement_after_move(env, model, what):
    """Once a move has ended (the operator, before its next action): every data key on exactly
    one shard, the one `model` (the map in force) names. A key that a late write left on a
    shard it had left (or that a late MIGRATE carried off) is an anomaly with the time and the
    key, reported once per key and set of shards; the next move could overwrite the evidence
    (MIGRATE ... REPLACE), so the end's check alone would miss it. Skipped (counted) when a
    shard does not answer within 20 s or the router asked does not serve `model`."""
    where = scan_shards(env, deadline_s=20.0)
    owners = None if where is None else env.owners(sorted(where), expect=model)
    if owners is None:
        env.count("placement checks after a move skipped (a shard or the map not ready)")
        return
    env.count("placement checks after a move")
    misplaced = 0
    for key, on in sorted(where.items()):
        owner = owners.get(key)
        if owner is None or on == [owner]:
            continue
        misplaced += 1
        mark = (key, tuple(on))
        if mark in env.placement_reported:
            continue
        env.placement_reported.add(mark)
        if len(on) > 1:
            env.anomaly("placement after a move: a key on several shards",
                        f"{key} on {', '.join(on)}; the map in force names {owner} ({what})",
                        key=key)
        else:
            env.anomaly("placement after a move: a key not on its owner",
                        f"{key} on {on[0]}; the map in force names {owner} ({what})", key=key)
    if misplaced == 0:
        env.passed("placement after a move: every key on its owner alone")


def self_test_placement_after_move(env, wls, model, injected):
    """Self-test of check_placement_after_move: a key copied onto a second shard mid-run must
    be reported; the copy is removed again (the final check has a damage of its own)."""
    before = env.anomalies["placement after a move: a key on several shards"]
    for wl in wls:
        if not isinstance(wl, workloads.UniqueWrites):
            continue
        for key in list(wl.acked)[:50]:
            on = env.shards_holding(key)
            if len(on) != 1:
                continue
            other = next(n for n in sorted(env.shards) if n not in on)
            env.shards[other].client().set(key, wl.acked[key])
            what = f"{key} copied onto {other} mid-run"
            env.event(f"self-test: injected into placement (after a move): {what}")
            check_placement_after_move(env, model, "self-test")
            env.shards[other].client().delete(key)
            caught = env.anomalies["placement after a move: a key on several shards"] - before
            injected["placement (after a move)"] = (what, caught)
            return


def check_placement(env):
    """Every key on exactly one shard, the owner the map in force names."""
    where = scan_shards(env)
    owners = env.owners(sorted(where))
    for key, on in sorted(where.items()):
        owner = owners.get(key)
        if len(on) > 1:
            env.anomaly("placement: a key on several shards",
                        f"{key} on {', '.join(on)}; the map in force names {owner}", key=key)
        elif owner is None:
            continue
        elif on[0] != owner:
            env.anomaly("placement: a key not on its owner",
                        f"{key} on {on[0]}; the map in force names {owner}", key=key)
        else:
            env.passed("placement: key on its owner alone")
    return len(where)


def run(args, seed):
    workdir = args.workdir or tempfile.mkdtemp(prefix="santral-chaos-")
    os.makedirs(workdir, exist_ok=True)
    env = Env(args, seed, workdir)
    print(f"chaos: seed {seed}; {args.seconds} s of faults; santral {args.santral}; "
          f"work dir {workdir}", flush=True)
    threads = []
    wls = []
    final_line = None
    try:
        if args.fleet:
            env.fleet = fleet_mode.Fleet(env, args)
            model = cluster.MapModel(fleet_mode.INITIAL)
            env.fleet.start(model)
            env.event(f"started: shards {', '.join(f'{n}:{s.port}' for n, s in env.shards.items())}; "
                      f"proxy control :{env.proxy.control_port}; {env.fleet.describe()}; "
                      f"fence {args.fence}")
        elif args.failover:
            env.failover = failover_mode.Failover(env, args)
            model = cluster.MapModel(failover_mode.SHARDS)
            env.failover.start(model)
            env.event(f"started (failover mode): {env.failover.describe()}")
        else:
            for name in SHARDS:
                env.shards[name] = cluster.Shard(env.spawner, name, workdir)
                env.shards[name].start()
            env.proxy = cluster.Proxy(env.spawner, [env.shards[n] for n in SHARDS])
            env.santral = cluster.Santral(env.spawner, args.santral, workdir, env.proxy)
            env.santral.request_ms = args.request_ms
            model = cluster.MapModel(["s0", "s1", "s2"])
            env.santral.write_config(model)
            if not env.santral.start():
                raise RuntimeError("santral did not start: " + env.santral.log_tail(20))
            env.event(f"started: shards {', '.join(f'{n}:{s.port}' for n, s in env.shards.items())}; "
                      f"proxy links {env.proxy.ports} (control :{env.proxy.control_port}); "
                      f"santral :{env.santral.port}")

        wanted = set(args.workloads.split(",")) if args.workloads else None
        if wanted is None and args.failover:
            wanted = set(failover_mode.WORKLOADS)
        for cls in workloads.ALL:
            if wanted is None or cls.name.split()[0] in wanted or cls.__name__.lower() in wanted:
                wls.append(cls(env, seed))
        for wl in wls:
            if isinstance(wl, workloads.UniqueWrites):
                wl.preload(args.preload)
        env.event(f"preloaded {args.preload} keys; workloads: {', '.join(w.name for w in wls)}")

        def guarded(name, fn):
            def body():
                try:
                    fn()
                except Exception as e:
                    env.harness_error(f"thread {name}: {type(e).__name__}: {e}\n"
                                      f"{traceback.format_exc()[-1500:]}")
            t = threading.Thread(target=body, name=name, daemon=True)
            t.start()
            return t

        for wl in wls:
            for name, fn in wl.threads():
                threads.append(guarded(name, fn))
        if env.failover is not None:
            for name, fn in env.failover.probe_threads():
                threads.append(guarded(name, fn))
        if env.failover is not None and args.failover_accept:
            threads.append(guarded("failover-accept", env.failover.accept_lost_writes))
        if args.burners > 0:
            env.burners = cluster.Burners(env.spawner, args.burners)
            env.event(f"started {args.burners} CPU burners (busy loops) beside the run")
        nemeses = []
        if args.failover and not args.no_nemesis:
            # No operator: no moves, no map edits; Sentinel's shards fail instead.
            faults = failover_mode.FailoverFaults(env, seed,
                                                  args.faults.split(",") if args.faults else None)
            nemeses = [guarded("faults", faults.run)]
        elif not args.no_nemesis:
            operator_cls = fleet_mode.FleetOperator if args.fleet else nemesis.Operator
            faults_cls = fleet_mode.FleetFaults if args.fleet else nemesis.Faults
            operator = operator_cls(env, seed, model,
                                    args.operator.split(",") if args.operator else None)
            faults = faults_cls(env, seed, args.faults.split(",") if args.faults else None)
            nemeses = [guarded("operator", operator.run), guarded("faults", faults.run)]

        end = now() + args.seconds
        damaged = False
        injected = {}
        next_progress = now() + 30
        while now() < end:
            time.sleep(min(1.0, max(0.0, end - now())))
            if args.self_test and not damaged and now() > end - args.seconds / 2:
                for wl in wls:
                    if isinstance(wl, workloads.Sets) and wl.damage_mid_run():
                        env.event(f"self-test: {wl.mid_run_damage} (mid-run)")
                        damaged = True
                if damaged and env.failover is None:
                    self_test_placement_after_move(env, wls, model, injected)
            if now() >= next_progress:
                next_progress += 30
                ops = sum(sum(w.ops.values()) for w in wls)
                print(f"{env.stamp()} progress: {ops} requests, moves {env.counts['moves started']} "
                      f"started / {env.counts['moves finished']} finished / "
                      f"{env.counts['moves aborted']} aborted, {sum(env.faults.values())} faults, "
                      f"{sum(env.anomalies.values())} anomalies", flush=True)

        # ---- the end: lift every fault, let the move finish, stop, check --------------------
        env.event("final: stopping the nemeses")
        env.stop_nemeses.set()
        _join_all(env, nemeses, 120, "nemesis")
        if env.burners is not None:
            env.burners.stop()
            env.event("final: CPU burners stopped")
        if env.fleet is not None:
            env.fleet.heal()
        elif env.failover is not None:
            env.failover.heal()
        else:
            env.proxy.heal()
            for shard in env.shards.values():
                if shard.running():
                    shard.resume()
                else:
                    shard.start()
            if env.santral.running():
                env.santral.signal(signal.SIGCONT)
            else:
                env.restart_santral()
        env.event("final: every fault lifted; waiting until no move runs")
        # A move may take as long as it needs while it makes progress; one that makes none for
        # --settle seconds is a liveness anomaly.
        settled = False
        admin = Client(env, "final-admin", timeout=10.0, router="any")
        state = None
        progress = (None, now())
        while now() - progress[1] < args.settle:
            out = admin.call("SANTRAL", "RESHARD", "STATUS")
            st = env.as_map(out.value) if out.ok else {}
            state = st.get("state")
            if state in ("idle", "planned"):
                settled = True
                break
            mark = (state, st.get("keys_moved"), st.get("units_done"))
            if mark != progress[0]:
                progress = (mark, now())
            time.sleep(0.5)
        if not settled:
            env.anomaly("liveness: a move made no progress after every fault was lifted",
                        f"state {state}, keys_moved {progress[0][1] if progress[0] else None} "
                        f"for {args.settle:.0f} s")
        env.event(f"final: move state {state}")
        # Santral answers again: a fresh connection writes and reads.
        probe = Client(env, "probe", router="any")
        end_probe = now() + 30
        ok = False
        while now() < end_probe and not ok:
            ok = probe.call("SET", "chaos:probe", "1").ok and probe.call("GET", "chaos:probe").ok
            if not ok:
                time.sleep(0.5)
        if ok:
            env.passed("liveness: answers after healing")
        else:
            env.anomaly("liveness: no answer 30 s after healing", "SET/GET chaos:probe")
        probe.call("DEL", "chaos:probe")
        time.sleep(2.0)
        env.event("final: stopping the workloads")
        env.stop_workloads.set()
        _join_all(env, threads, 60, "workload thread")
        for c in list(env.clients):
            env.note_client_lifetime(c)

        if args.self_test:
            for wl in wls:
                what = wl.inject()
                if what:
                    injected[wl.name] = what
                    env.event(f"self-test: injected into {wl.name}: {what}")
            # A key copied onto a second shard.
            for wl in wls:
                if not isinstance(wl, workloads.UniqueWrites):
                    continue
                for key in list(wl.acked)[-50:]:
                    on = env.shards_holding(key)
                    if len(on) == 1:
                        other = next(n for n in sorted(env.shards) if n not in on)
                        env.shards[other].client().set(key, wl.acked[key])
                        injected["placement"] = f"{key} copied onto {other}"
                        env.event(f"self-test: injected into placement: {key} copied onto {other}")
                        break

        print("\n== checks ==", flush=True)
        caught = {}
        for name, value in list(injected.items()):
            if isinstance(value, tuple):  # damaged and checked mid-run
                injected[name], caught[name] = value
        for wl in wls:
            before = sum(env.anomalies.values())
            checks_before = sum(env.checks.values())
            try:
                wl.final_check()
            except (ValueError, TypeError, IndexError, KeyError, AttributeError) as e:
                env.anomaly("final check: stopped on an unexpected answer (or a harness bug)",
                            f"{wl.name}: {type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}")
            new = sum(env.anomalies.values()) - before
            caught[wl.name] = new
            print(f"{wl.name}: {wl.ops_line()}\n    {wl.summary()}\n    final check: "
                  f"{sum(env.checks.values()) - checks_before} held, {new} anomalies", flush=True)
        before = sum(env.anomalies.values())
        checks_before = sum(env.checks.values())
        if settled and state == "idle":
            nkeys = check_placement(env)
            caught["placement"] = sum(env.anomalies.values()) - before
            print(f"placement: {nkeys} keys found on the shards (SCAN of each); "
                  f"{sum(env.checks.values()) - checks_before} on their owner alone, "
                  f"{caught['placement']} anomalies", flush=True)
        else:
            print(f"placement: not checked (move state {state})", flush=True)
        if env.fleet is not None:
            seen = env.fleet.check_agreement()
            print("fleet: map version and move state per router: "
                  + ", ".join(f"{n} {v}/{s}" for n, (v, s) in seen.items()), flush=True)

        report(env, wls)
        if env.failover is not None:
            env.failover.report()
        n_passed = sum(env.checks.values())
        n_failed = sum(env.anomalies.values())
        if args.self_test:
            missed = [name for name in injected if caught.get(name, 0) == 0]
            sets_mid = [w for w in wls if isinstance(w, workloads.Sets) and w.mid_run_damage]
            print("\n== self-test ==")
            for name, what in injected.items():
                print(f"  {name}: injected {what}: {'caught' if caught.get(name) else 'NOT CAUGHT'}"
                      f" ({caught.get(name, 0)} anomalies)")
            for w in sets_mid:
                n = sum(v for k, v in env.anomalies.items()
                        if k.startswith("sets: SUNION missed") or k.startswith("sets: SINTER missed"))
                print(f"  sets (mid-run read): {w.mid_run_damage}: "
                      f"{'caught' if n else 'NOT CAUGHT'} ({n} incomplete answers)")
                if not n:
                    missed.append("sets (mid-run)")
            print(f"self-test: {len(injected) + len(sets_mid) - len(missed)} of "
                  f"{len(injected) + len(sets_mid)} injected losses caught")
        final_line = f"chaos: {n_passed} passed, {n_failed} failed"
        if args.self_test:
            return 0 if not missed and injected else 1
        return 0 if n_failed == 0 else 1
    except Exception as e:
        print(f"chaos: harness failure: {type(e).__name__}: {e}", flush=True)
        traceback.print_exc()
        final_line = (f"chaos: {sum(env.checks.values())} passed, "
                      f"{sum(env.anomalies.values()) + 1} failed")
        return 2
    finally:
        env.stop_nemeses.set()
        env.stop_workloads.set()
        env.close()
        failed = sum(env.anomalies.values()) > 0 or final_line is None
        if args.keep or (failed and args.keep_on_failure):
            print(f"chaos: work dir kept: {workdir} (santral.log, s*/redis.log, santral.yaml)")
        elif not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        # The last line, always: N checks that held, M anomalies.
        print(final_line or f"chaos: {sum(env.checks.values())} passed, "
                            f"{sum(env.anomalies.values()) + 1} failed", flush=True)


def report(env, wls):
    print("\n== counts ==")
    ops = collections.Counter()
    for wl in wls:
        ops.update(wl.ops)
    total = sum(ops.values())
    print(f"operations: {total} requests through Santral: {ops[OK]} answered, {ops[UNKNOWN]} of "
          f"unknown outcome, {ops[NOTRUN]} answered did-not-run (TRYAGAIN/EXECABORT/...), "
          f"{ops[NOTSENT]} not sent (Santral down)")
    c = env.counts
    print(f"moves: {c['moves started']} started (approved), {c['moves finished']} finished, "
          f"{c['moves aborted']} aborted; {c['reloads']} reloads; "
          f"{c['placement changes in force without a move']} placement changes put in force "
          f"without a move")
    print(f"faults injected: {sum(env.faults.values())}"
          + (": " + ", ".join(f"{k} {v}" for k, v in sorted(env.faults.items())) if env.faults else ""))
    conns = sum(cl.connects for cl in env.clients)
    print(f"client connections: {conns} opened; the longest-lived saw {env.max_moves_seen} moves; "
          f"{len(env.long_lived)} workload connections lived across 2 or more moves")
    if env.errors.counts:
        top = sorted(env.errors.counts.items(), key=lambda kv: -kv[1])[:10]
        print("errors answered (most frequent):")
        for text, n in top:
            print(f"  {n:6d}  {text}")
    print("checks that held:")
    for kind, n in sorted(env.checks.items()):
        print(f"  {n:7d}  {kind}")
    if env.anomalies:
        print("anomalies by kind:")
        for kind, n in sorted(env.anomalies.items(), key=lambda kv: -kv[1]):
            print(f"  {n:7d}  {kind}")
            for example in env.examples[kind][:4]:
                print(f"             e.g. {example}")
        aof_report(env)
    else:
        print("anomalies: none")


def aof_report(env):
    """The AOF history (tests/chaos/aof.py) of the keys anomalies named: when each write ran."""
    if not env.anomaly_keys:
        return
    print(f"\n== the AOFs of anomalous keys ([seconds since the run began, wall clock]; the run "
          f"began at {time.strftime('%H:%M:%S', time.localtime(env.wall0))}, santral.log's clock) ==")
    dirs = env.aof_dirs()
    for key, (kind, at) in env.anomaly_keys.items():
        print(f"  {key} ({kind}, first at [{at:.1f}s]; the AOFs from 60 s before to 15 s after):")
        try:
            for line in aof.describe(dirs, key, env.wall0, at=at):
                print(f"    {line}")
        except Exception as e:  # the report must not hide the verdict
            print(f"    (AOF not read: {type(e).__name__}: {e})")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("seconds", nargs="?", type=float, default=600.0,
                   help="how long the faults run (default 600); setup and the final check add "
                        "some")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--santral", default=os.environ.get("SANTRAL_BINARY") or
                   os.path.join(ROOT, "build", "router", "santral"))
    p.add_argument("--workdir", default="", help="keep everything here (default: a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the work dir")
    p.add_argument("--keep-on-failure", action="store_true",
                   help="keep the work dir when an anomaly was found")
    p.add_argument("--preload", type=int, default=1500, help="keys written before the run")
    p.add_argument("--pace", type=float, default=0.01,
                   help="pause between a workload thread's requests, seconds")
    p.add_argument("--walk-seconds", type=float, default=8.0,
                   help="the walk's throttle: all keys in this many seconds (a move walks a "
                        "share of them; one move in three is three times slower)")
    p.add_argument("--settle", type=float, default=120.0,
                   help="how long a move may make no progress (keys_moved the same) once every "
                        "fault is lifted before it counts as a liveness anomaly")
    p.add_argument("--workloads", default="",
                   help="comma-separated subset: counters,unique,registers,queues,sets,"
                        "cross-shard,transactions,salted")
    p.add_argument("--operator", default="", help="subset of operator actions: "
                   + ",".join(a for a, _ in nemesis.OPERATOR_ACTIONS))
    p.add_argument("--faults", default="", help="subset of faults: "
                   + ",".join(f for f, _ in nemesis.FAULTS) + "; with --fleet: "
                   + ",".join(f for f, _ in fleet_mode.FAULTS) + "; with --failover: "
                   + ",".join(f for f, _ in failover_mode.FAULTS) + " ('none' for none)")
    p.add_argument("--no-nemesis", action="store_true", help="no moves, no faults")
    p.add_argument("--self-test", action="store_true",
                   help="damage acknowledged data behind Santral's back and check that every "
                        "checker reports it (use with --no-nemesis)")
    p.add_argument("--fleet", action="store_true",
                   help="fleet mode: 3 routers on a 3-member etcd, 5 shards, fleet nemeses "
                        "(tests/chaos/fleet.py)")
    p.add_argument("--fence", choices=("lease", "acl"), default="lease",
                   help="fleet mode: the routers' cluster.fence (default lease)")
    p.add_argument("--failover", action="store_true",
                   help="failover mode: 3 shards of a primary and a replica each, followed "
                        "through 3 Redis Sentinels, write_concern, primaries killed and stopped; "
                        "no moves (tests/chaos/failover.py)")
    p.add_argument("--write-concern", default="1:500", metavar="REPLICAS[:TIMEOUT_MS]",
                   help="failover mode: Santral's write_concern (default 1:500; 0 turns it off)")
    p.add_argument("--failover-wait-ms", type=int, default=4000,
                   help="failover mode: Santral's failover.wait_ms (default 4000)")
    p.add_argument("--request-ms", type=int, default=2000,
                   help="Santral's timeouts.request_ms (default 2000); e.g. 300: most shard "
                        "stops and late-delivering link faults outlast it")
    p.add_argument("--source-stop-hold", type=float, default=None, metavar="S",
                   help="source-stop-abort keeps the shard stopped until request_ms + S seconds "
                        "after the ABORT (default 1.5; with --fleet 8: a fleet's abort walks "
                        "the old target for seconds, and a late MIGRATE that lands before it is "
                        "done is walked back)")
    p.add_argument("--burners", type=int, default=0, metavar="N",
                   help="N CPU burners (busy-loop processes) beside the run, started once the "
                        "cluster is up and stopped when the faults stop")
    p.add_argument("--failover-accept", action="store_true",
                   help="failover mode: when Santral refuses writes because a shard lost "
                        "acknowledged writes, send SANTRAL FAILOVER ACCEPT <shard> so that the "
                        "run goes on")
    p.add_argument("--quiet", action="store_true", help="do not print each nemesis event")
    args = p.parse_args(argv)
    if args.faults == "none":
        args.faults = "-"
    if args.fleet and args.failover:
        p.error("--fleet and --failover are separate modes")
    if args.source_stop_hold is None:
        args.source_stop_hold = 8.0 if args.fleet else 1.5
    if not os.access(args.santral, os.X_OK):
        print(f"chaos: no santral binary at {args.santral} (build it, or set SANTRAL_BINARY)")
        print("chaos: 0 passed, 1 failed")
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10**6)
    return run(args, seed)


if __name__ == "__main__":
    sys.exit(main())

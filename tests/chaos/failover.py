"""The chaos harness's failover mode (`chaos.py --failover`): shards that outlive their primary
(issue 28). Santral follows Redis Sentinel's elections and confirms writes with a write concern;
the faults kill and stop primaries, and the checker says whether an acknowledged write was lost.

The processes (all on 127.0.0.1, in the work dir):
  - three shards s0..s2, each two redis-servers sNa (the first primary) and sNb (its replica),
    each from a config file of its own (sNa/redis.conf: `appendonly yes`, `appendfsync always`,
    `repl-diskless-sync-delay 0`; the replica's `replicaof` its primary), which Sentinel
    rewrites as it reconfigures the server; a killed server is restarted on its file (and its
    append-only file): a demoted primary comes back as a master and Sentinel turns it into a
    replica of the new primary;
  - three sentinels (sentinel-N/sentinel.conf, sentinel-N/sentinel.log), quorum 2, each
    monitoring the three masters: `down-after-milliseconds` 1000, `failover-timeout` 3000;
    started once every replica is in sync (`master_link_status:up`), and waited for until each
    logged `+monitor master` for every shard and knows the two other sentinels and the replica;
  - one Santral (two workers, santral.yaml, santral.log) with `sentinel: {addresses: [...]}`,
    `write_concern: {replicas: 1, timeout_ms: 500}` (--write-concern), `failover: {wait_ms:
    4000}` (--failover-wait-ms) and shards `{name: sN, sentinel_master: sN}`. No fault proxy:
    Sentinel announces the servers' real addresses. No operator: no moves, no map edits.

Faults (FailoverFaults; one at a time, 0.5-3 s apart, each only once every shard has settled:
every sentinel names the same primary and flags it `master`, it is a master with its replica
online, the replica's `master_link_status:up`, and SANTRAL SHARDMAP names that primary):
  primary-kill   SIGKILL a shard's current primary (SENTINEL GET-MASTER-ADDR-BY-NAME), wait
                 until Sentinel names the other server and Santral serves it (up to 60 s),
                 then 0-1 s later restart the killed one on its config file
  primary-stop   SIGSTOP the current primary for 2-4 s and at least until Sentinel has switched
                 and Santral serves the new primary (up to 60 s), then SIGCONT: it wakes up as a
                 master, and Sentinel makes it a replica
  replica-kill   SIGKILL a shard's replica, restart it on its file 0-2 s later
  replica-wipe   the same, restarted without its data (AOF and RDB removed): a full resync
  primary-wipe   SIGKILL the primary and restart it at once without its data, before Sentinel's
                 down-after-milliseconds: an empty master that its replica resyncs from (every
                 acknowledged write of the shard is lost unless Santral notices)
  kill-chain     kills faster than a resync: SIGKILL the primary, wait until Sentinel names the
                 replica and Santral serves it, restart the old primary (half the time without
                 its data) and SIGKILL the new primary as soon as Sentinel has made the old one
                 its replica (within 5 s), before its resync is over; it is restarted once
                 Sentinel names another primary (or 15 s)
A failover that Sentinel does not run within 60 s is noted (Sentinel's doing, not Santral's);
one that Santral does not follow within 30 s of Sentinel is an anomaly; so is a shard that does
not settle within 120 s.

Per failover the report gives when Sentinel switched, when Santral served the new primary, when
the shard settled, and what a probe saw: one connection per shard SETs a key of that shard
every 50 ms; the failed probes (and their span) and the slowest answer (a request held by
failover.wait_ms answers late) between the fault and the settling.

Workloads (default): counters, unique writes, registers, queues, sets, cross-shard stores and
transactions; salted counters (their point is UNSALT during a move) only with --workloads.
Outcomes as in single mode, plus NOREPLICAS (the write ran on the primary and a failover may
lose it: unknown), a request held past failover.wait_ms ("... the command was not sent":
did not run) and a write refused because the shard's failover lost acknowledged writes (an
error naming the shard and SANTRAL FAILOVER ACCEPT or lost writes, failover.on_lost_writes:
refuse: did not run). With --failover-accept a thread sends SANTRAL FAILOVER ACCEPT <shard> once
it sees such refusals (the report lists them); what was lost still counts as lost. A safety anomaly is an acknowledged write lost (with write_concern replicas: 1
the goal is none). The final check: every server SIGCONTed and running, every shard settled
(Santral's SHARDMAP, asked on four fresh connections, names the primary Sentinel names), then
the workloads' end-state checks through Santral, and placement read from each shard's current
primary (env.shards holds a view that asks the sentinels at each use).
"""

import collections
import os
import random
import re
import shutil
import signal
import subprocess
import time

import redis

import cluster
import nemesis
from client import NOTSENT, OK, UNKNOWN, Client
from cluster import answers_ping, free_port

now = time.monotonic
SHARDS = ["s0", "s1", "s2"]
SENTINELS = 3
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 3000
SWITCH_TIMEOUT = 60.0  # s: from a fault to Sentinel naming a new primary
FOLLOW_TIMEOUT = 30.0  # s: from Sentinel's new primary to Santral serving it
SETTLE_TIMEOUT = 120.0  # s: a restarted server waits for Sentinel to make it a replica
FAULTS = [("primary-kill", 2), ("primary-stop", 1.5), ("replica-kill", 0.5), ("kill-chain", 1),
          ("primary-wipe", 0.5), ("replica-wipe", 0.3)]
WORKLOADS = ["counters", "unique", "registers", "queues", "sets", "cross-shard", "transactions"]


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _pairs(reply):
    if isinstance(reply, dict):
        return reply
    return {reply[i]: reply[i + 1] for i in range(0, len(reply) - 1, 2)}


# ---------------------------------------------------------------------------------------------
class Server(cluster.Signalled):
    """One redis-server from its own config file (which Sentinel may rewrite)."""

    def __init__(self, spawner, name, workdir):
        self.spawner = spawner
        self.name = name
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.dir = os.path.join(workdir, name)
        self.conf = os.path.join(self.dir, "redis.conf")
        self.log_path = os.path.join(self.dir, "redis.log")
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None
        self.stopped = False

    def write_config(self, primary=None):
        lines = [f"port {self.port}", "bind 127.0.0.1", 'save ""', "appendonly yes",
                 "appendfsync always", f"dir {self.dir}", f"logfile {self.log_path}",
                 "repl-diskless-sync-delay 0"]
        if primary is not None:
            lines.append(f"replicaof 127.0.0.1 {primary.port}")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self, timeout=30.0):
        if self.spawn_redis(self.spawner, ["redis-server", self.conf], timeout):
            return
        raise RuntimeError(f"redis-server {self.name} did not start on port {self.port}: "
                           + _read(self.log_path)[-600:])

    def client(self, timeout=10.0):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=timeout,
                           socket_connect_timeout=2.0, decode_responses=True)

    def wipe(self):
        """Removes its data (the append-only dir and any RDB) while it is not running: it
        restarts empty, as a server on a disk that was replaced would."""
        shutil.rmtree(os.path.join(self.dir, "appendonlydir"), ignore_errors=True)
        for name in os.listdir(self.dir):
            if name.endswith(".rdb") or name.startswith("temp-"):
                try:
                    os.remove(os.path.join(self.dir, name))
                except OSError:
                    pass

    def replication(self):
        """INFO replication as a dict, or None when it does not answer."""
        try:
            return self.client(timeout=2.0).info("replication")
        except (redis.RedisError, OSError):
            return None

    def close(self):
        cluster._kill(self.proc)


class Sentinel:
    def __init__(self, spawner, index, workdir):
        self.spawner = spawner
        self.name = f"sentinel-{index}"
        self.port = free_port()
        self.dir = os.path.join(workdir, self.name)
        self.conf = os.path.join(self.dir, "sentinel.conf")
        self.log_path = os.path.join(self.dir, "sentinel.log")
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None
        self._client = None

    def write_config(self, primaries):
        lines = [f"port {self.port}", "bind 127.0.0.1", f"dir {self.dir}",
                 f"logfile {self.log_path}"]
        for shard, server in primaries.items():
            lines += [f"sentinel monitor {shard} 127.0.0.1 {server.port} 2",
                      f"sentinel down-after-milliseconds {shard} {DOWN_AFTER_MS}",
                      f"sentinel failover-timeout {shard} {FAILOVER_TIMEOUT_MS}",
                      f"sentinel parallel-syncs {shard} 1"]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self, shards, timeout=30.0):
        self.proc = self.spawner.popen(["redis-server", self.conf, "--sentinel"],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        deadline = now() + timeout
        while now() < deadline:
            if self.proc.poll() is not None:
                break
            log = _read(self.log_path)
            if all(f"+monitor master {s} " in log for s in shards) and answers_ping(self.port):
                return
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not start: " + _read(self.log_path)[-600:])

    def client(self):
        if self._client is None:
            self._client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2.0,
                                       socket_connect_timeout=2.0, decode_responses=True)
        return self._client

    def master_addr(self, shard):
        """SENTINEL GET-MASTER-ADDR-BY-NAME as host:port, or None."""
        try:
            host, port = self.client().execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                                        shard)
            return f"{host}:{port}"
        except (redis.RedisError, OSError, TypeError, ValueError):
            return None

    def master(self, shard):
        """SENTINEL MASTER as a dict, or None."""
        try:
            return _pairs(self.client().execute_command("SENTINEL", "MASTER", shard))
        except (redis.RedisError, OSError):
            return None

    def close(self):
        cluster._kill(self.proc)


class FailoverSantral(cluster.Santral):
    """Santral on shards named by sentinel_master."""

    def __init__(self, spawner, binary, workdir, sentinels, concern, wait_ms):
        super().__init__(spawner, binary, workdir, None)
        self.sentinels = sentinels
        self.concern = concern  # (replicas, timeout_ms)
        self.wait_ms = wait_ms

    def config_text(self, model):
        addresses = ", ".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        lines = self.common_lines(model, ", --failover") + [
            f"sentinel: {{addresses: [{addresses}]}}",
            f"write_concern: {{replicas: {self.concern[0]}, timeout_ms: {self.concern[1]}}}",
            f"failover: {{wait_ms: {self.wait_ms}}}",
            "shards:",
        ]
        for name in model.shards:
            lines.append(f"  - {{name: {name}, sentinel_master: {name}}}")
        return "\n".join(lines) + "\n"


class ShardView:
    """What env.shards holds in failover mode: the shard's current primary, as the sentinels
    name it at each use (the placement check and the self-test read and write through it)."""

    def __init__(self, failover, name):
        self.failover = failover
        self.name = name

    def client(self, timeout=10.0):
        server = self.failover.server_at(self.failover.primary(self.name))
        if server is None:
            raise RuntimeError(f"no sentinel names a primary of {self.name}")
        return server.client(timeout)

    def running(self):
        return True

    def resume(self):
        pass

    def close(self):
        pass


class Fault:
    """What one fault did, for the report."""

    def __init__(self, kind, shard, server, old):
        self.kind, self.shard, self.server, self.old = kind, shard, server, old
        self.at = now()
        self.new = None
        self.switched = None  # Sentinel names another primary
        self.followed = None  # Santral serves it
        self.settled = None


# ---------------------------------------------------------------------------------------------
class Failover:
    def __init__(self, env, args):
        self.env = env
        self.args = args
        self.servers = {}  # name -> Server: sNa, sNb
        self.sentinels = []
        self.santral = None
        self.faults = []  # Fault, in order
        self.probes = {}  # shard -> [(sent, answered, status)]
        self.probe_keys = {}
        self._admin = None
        self.accepts = []  # --failover-accept: (when, shard, refusals seen, the answer)

    # --- the processes ----------------------------------------------------------------------
    def start(self, model):
        env, args = self.env, self.args
        for shard in SHARDS:
            primary = self.servers[shard + "a"] = Server(env.spawner, shard + "a", env.workdir)
            replica = self.servers[shard + "b"] = Server(env.spawner, shard + "b", env.workdir)
            primary.write_config()
            replica.write_config(primary)
            primary.start()
            replica.start()
        # The sentinels start once every replica is in sync.
        end = now() + 60.0
        while True:
            lagging = [s.name for n, s in self.servers.items() if n.endswith("b")
                       and (s.replication() or {}).get("master_link_status") != "up"]
            if not lagging:
                break
            if now() > end:
                raise RuntimeError(f"replicas {lagging} not in sync after 60 s")
            time.sleep(0.05)
        primaries = {shard: self.servers[shard + "a"] for shard in SHARDS}
        for i in range(SENTINELS):
            sentinel = Sentinel(env.spawner, i, env.workdir)
            sentinel.write_config(primaries)
            self.sentinels.append(sentinel)
        for sentinel in self.sentinels:
            sentinel.start(SHARDS)
        # Each sentinel must know the others (a failover needs a majority's vote) and the
        # replica (Santral asks for the replicas at its start).
        end = now() + 60.0
        while True:
            missing = []
            for sentinel in self.sentinels:
                for shard in SHARDS:
                    m = sentinel.master(shard) or {}
                    if str(m.get("num-other-sentinels")) != str(SENTINELS - 1) or \
                            str(m.get("num-slaves")) != "1":
                        missing.append(f"{sentinel.name}/{shard}: {m.get('num-other-sentinels')} "
                                       f"sentinels, {m.get('num-slaves')} replicas")
            if not missing:
                break
            if now() > end:
                raise RuntimeError("the sentinels did not find each other: " + "; ".join(missing))
            time.sleep(0.1)
        wc = args.write_concern.split(":")
        concern = (int(wc[0]), int(wc[1]) if len(wc) > 1 else 500)
        self.santral = FailoverSantral(env.spawner, args.santral, env.workdir, self.sentinels,
                                       concern, args.failover_wait_ms)
        self.santral.request_ms = args.request_ms
        env.santral = self.santral
        self.santral.write_config(model)
        if not self.santral.start():
            raise RuntimeError("santral did not start: " + self.santral.log_tail(20))
        for shard in SHARDS:
            env.shards[shard] = ShardView(self, shard)

    def describe(self):
        servers = ", ".join(f"{n}:{s.port}" for n, s in sorted(self.servers.items()))
        sentinels = ", ".join(f":{s.port}" for s in self.sentinels)
        c = self.santral.concern
        return (f"servers {servers}; sentinels {sentinels}; santral :{self.santral.port} "
                f"(write_concern {c[0]}/{c[1]} ms, failover.wait_ms {self.santral.wait_ms})")

    def close(self):
        if self.santral is not None:
            self.santral.close()
        for sentinel in self.sentinels:
            sentinel.close()
        for server in self.servers.values():
            server.close()

    # --- what Sentinel, the servers and Santral say -----------------------------------------
    def server_at(self, address):
        for server in self.servers.values():
            if server.address == address:
                return server
        return None

    def primary(self, shard):
        """The shard's primary as the sentinels name it (the most named; None if none)."""
        named = [a for a in (s.master_addr(shard) for s in self.sentinels) if a]
        if not named:
            return None
        return max(set(named), key=named.count)

    def santral_primary(self, shard, fresh=False):
        """The primary SANTRAL SHARDMAP names (a fresh connection each time with `fresh`: the
        workers each answer from their own view)."""
        if self._admin is None:
            self._admin = Client(self.env, "failover-admin", timeout=5.0)
        out = self._admin.call("SANTRAL", "SHARDMAP")
        if fresh:
            self._admin.drop()
        if not out.ok or not isinstance(out.value, str):
            return None
        found = re.search(rf"^shard:{shard} role:primary address:(\S+)", out.value, re.M)
        return found.group(1) if found else None

    def unsettled(self, shard, fresh=1):
        """None once the shard has settled, else what is missing."""
        named = {s.name: s.master_addr(shard) for s in self.sentinels}
        if len(set(named.values())) != 1 or None in named.values():
            return f"the sentinels name {named}"
        primary = next(iter(named.values()))
        for s in self.sentinels:
            flags = (s.master(shard) or {}).get("flags")
            if flags != "master":
                return f"{s.name} flags {shard}'s primary {primary} {flags}"
        server = self.server_at(primary)
        if server is None:
            return f"the sentinels name {primary}, not one of {shard}'s servers"
        info = server.replication()
        if info is None or info.get("role") != "master":
            return f"{primary} is {None if info is None else info.get('role')}"
        others = [s for n, s in self.servers.items() if n.startswith(shard) and s is not server]
        for other in others:
            rinfo = other.replication() or {}
            if rinfo.get("role") != "slave" or int(rinfo.get("master_port", 0)) != server.port \
                    or rinfo.get("master_link_status") != "up":
                return (f"{other.name} ({other.address}) role {rinfo.get('role')}, master port "
                        f"{rinfo.get('master_port')}, link {rinfo.get('master_link_status')}")
        for _ in range(fresh):
            serves = self.santral_primary(shard, fresh=fresh > 1)
            if serves != primary:
                return f"Santral serves {shard} from {serves}, Sentinel names {primary}"
        return None

    def wait_settled(self, shards, timeout_s, stop=None, fresh=1):
        """Waits until every shard has settled: (True, None) or (False, the last reason)."""
        end = now() + timeout_s
        while True:
            reason = None
            for shard in shards:
                reason = self.unsettled(shard, fresh)
                if reason:
                    reason = f"{shard}: {reason}"
                    break
            if reason is None:
                return True, None
            if now() > end or (stop is not None and stop.is_set()):
                return False, reason
            time.sleep(0.1)

    def sentinel_switches(self):
        """+switch-master events in the first sentinel's log, per shard."""
        log = _read(self.sentinels[0].log_path) if self.sentinels else ""
        return {s: len(re.findall(rf"\+switch-master {s} ", log)) for s in SHARDS}

    # --- healing ---------------------------------------------------------------------------
    def heal(self):
        """Every server SIGCONTed and running, Santral too; then every shard settled (its
        primary per Sentinel served by Santral, as four fresh connections see it)."""
        env = self.env
        for server in self.servers.values():
            if server.running():
                server.resume()
            else:
                server.start()
        for sentinel in self.sentinels:
            if sentinel.proc is None or sentinel.proc.poll() is not None:
                sentinel.start(SHARDS)
        if self.santral.running():
            self.santral.signal(signal.SIGCONT)
        else:
            env.restart_santral()
        ok, reason = self.wait_settled(SHARDS, SETTLE_TIMEOUT, fresh=4)
        if ok:
            env.passed("failover: every shard has a primary Sentinel and Santral agree on, its "
                       "replica in sync")
            env.event("final: every shard settled: "
                      + ", ".join(f"{s} {self.primary(s)}" for s in SHARDS))
        else:
            env.anomaly("liveness: a shard did not settle after healing",
                        f"{SETTLE_TIMEOUT:.0f} s after every fault was lifted: {reason}")

    # --- --failover-accept ------------------------------------------------------------------
    def accept_lost_writes(self):
        """--failover-accept: once Santral has refused writes to a shard because its failover
        lost acknowledged writes (client.lost_write_refusal), send SANTRAL FAILOVER ACCEPT
        <shard> (again at most every 2 s while refusals keep coming), so that the run goes on.
        What was lost still counts as lost: the workloads' checks do not know about it."""
        env = self.env
        admin = Client(env, "failover-accept", timeout=10.0)
        seen = collections.Counter()
        last = {}
        while env.sleep_workload(0.3):
            for shard, n in sorted(env.lost_write_refusals.items()):
                if n <= seen[shard] or now() - last.get(shard, -10.0) < 2.0:
                    continue
                seen[shard] = n
                last[shard] = now()
                out = admin.call("SANTRAL", "FAILOVER", "ACCEPT", shard)
                answer = out.value if out.ok else out.error
                self.accepts.append((now(), shard, n, answer))
                env.count("failover: SANTRAL FAILOVER ACCEPT sent")
                env.event(f"failover: {n} writes to {shard} refused for lost writes so far; "
                          f"SANTRAL FAILOVER ACCEPT {shard}: {str(answer)[:200]}")

    # --- probes: how long a shard's requests failed -----------------------------------------
    def probe_threads(self):
        env = self.env
        candidates = [f"foprobe:{i}" for i in range(60)]
        owners = env.owners(candidates)
        for shard in SHARDS:
            key = next((k for k in candidates if owners.get(k) == shard), None)
            if key is not None:
                self.probe_keys[shard] = key
                self.probes[shard] = []
        return [(f"probe-{shard}", lambda shard=shard: self.probe(shard))
                for shard in self.probe_keys]

    def probe(self, shard):
        env = self.env
        client = Client(env, f"probe-{shard}", timeout=10.0)
        key = self.probe_keys[shard]
        records = self.probes[shard]
        n = 0
        while not env.stop_workloads.is_set():
            n += 1
            sent = now()
            out = client.call("SET", key, str(n))
            records.append((sent, now(), out.status,
                            (out.error or "").startswith("NOREPLICAS")))
            if out.status == NOTSENT:
                env.sleep_workload(0.1)
            env.sleep_workload(0.05)

    def probe_window(self, fault):
        """The probe SETs of the fault's shard sent between the fault and the settling ->
        (failed otherwise than NOREPLICAS, their span in s, unknown among them, NOREPLICAS,
        slowest answer in s)."""
        end = fault.settled or now()
        recs = [r for r in self.probes.get(fault.shard, []) if fault.at <= r[0] <= end]
        failed = [r for r in recs if r[2] != OK and not r[3]]
        span = (max(r[1] for r in failed) - min(r[0] for r in failed)) if failed else 0.0
        unknown = sum(1 for r in failed if r[2] == UNKNOWN)
        noreplicas = sum(1 for r in recs if r[3])
        slowest = max((r[1] - r[0] for r in recs), default=0.0)
        return len(failed), span, unknown, noreplicas, slowest

    def report(self):
        print("\n== failovers ==")
        if not self.faults:
            print("  none")
        for f in self.faults:
            parts = [f"[{self.env.since_start(f.at):7.1f}s] {f.shard} {f.kind} {f.server} "
                     f"({f.old})"]
            if not f.kind.startswith("replica-"):
                if f.switched is None:
                    parts.append("Sentinel named no new primary")
                else:
                    parts.append(f"Sentinel named {f.new} after {f.switched - f.at:.1f} s")
                if f.followed is not None:
                    parts.append(f"Santral served it {1000 * (f.followed - f.switched):.0f} ms "
                                 f"later")
            if f.settled is not None:
                parts.append(f"settled after {f.settled - f.at:.1f} s")
            if self.probes.get(f.shard) is not None:
                n, span, unknown, noreplicas, slowest = self.probe_window(f)
                parts.append(f"probe SETs: {n} failed ({unknown} unknown) within {span:.2f} s, "
                             f"{noreplicas} NOREPLICAS, slowest answer {slowest:.2f} s")
            print("  " + "; ".join(parts))
        switches = self.sentinel_switches()
        log = _read(self.santral.log_path)
        followed = {s: len(re.findall(rf"shard '{s}': Sentinel \(\S+\) elected ", log))
                    for s in SHARDS}
        print(f"Sentinel's failovers (+switch-master in {self.sentinels[0].name}'s log): "
              + ", ".join(f"{s} {n}" for s, n in switches.items())
              + "; Santral's switches (its log: 'Sentinel (...) elected'): "
              + ", ".join(f"{s} {n}" for s, n in followed.items())
              + f"; primary faults {sum(1 for f in self.faults if not f.kind.startswith('replica-'))}")
        refusals = self.env.lost_write_refusals
        print("writes refused for lost writes (failover.on_lost_writes): "
              + (", ".join(f"{s} {n}" for s, n in sorted(refusals.items())) or "none")
              + (f"; SANTRAL FAILOVER ACCEPT sent {len(self.accepts)} times: "
                 + ", ".join(f"[{self.env.since_start(t):.1f}s] {s} ({str(a)[:60]})"
                             for t, s, _, a in self.accepts[:8]) if self.accepts else ""))


# ---------------------------------------------------------------------------------------------
class FailoverFaults:
    def __init__(self, env, seed, kinds=None):
        self.env = env
        self.fo = env.failover
        self.rng = random.Random(seed * 11 + 2)
        self.kinds = [(k, w) for k, w in FAULTS if kinds is None or k in kinds]

    def run(self):
        env = self.env
        while self.kinds and env.sleep_nemesis(self.rng.uniform(0.5, 3.0)):
            # Every choice first, so that a seed gives the same sequence whatever the waits.
            kind = nemesis.weighted(self.rng, self.kinds)
            shard = self.rng.choice(SHARDS)
            d = self.rng.uniform(2.0, 4.0)
            delay = self.rng.uniform(0.0, 1.0 if kind == "primary-kill" else 2.0)
            wipe = self.rng.random() < 0.5
            ok, reason = self.fo.wait_settled(SHARDS, SETTLE_TIMEOUT, stop=env.stop_nemeses)
            if env.stop_nemeses.is_set():
                return
            if not ok:
                env.anomaly("liveness: a shard did not settle between faults",
                            f"{SETTLE_TIMEOUT:.0f} s: {reason}")
                continue
            try:
                with env.fault(kind):
                    if env.stop_nemeses.is_set():
                        return
                    self.inject(kind, shard, d, delay, wipe)
            except Exception as e:
                env.harness_error(f"fault {kind}: {type(e).__name__}: {e}")
                return

    def wait_switch(self, fault, deadline_s):
        """Until a sentinel names another primary than the old one and Santral serves it."""
        end = now() + deadline_s
        while now() < end and fault.switched is None:
            for s in self.fo.sentinels:
                addr = s.master_addr(fault.shard)
                if addr not in (None, fault.old):
                    fault.new, fault.switched = addr, now()
                    break
            else:
                time.sleep(0.05)
        if fault.switched is None:
            self.env.event(f"fault: Sentinel named no new primary of {fault.shard} within "
                           f"{deadline_s:.0f} s")
            self.env.count("faults without a failover")
            return False
        end = now() + FOLLOW_TIMEOUT
        while now() < end:
            serves = self.fo.santral_primary(fault.shard)
            if serves not in (None, fault.old):
                fault.followed = now()
                if serves != fault.new:
                    fault.new = serves
                self.env.event(f"fault: Sentinel named {fault.new} after "
                               f"{fault.switched - fault.at:.1f} s; Santral serves it "
                               f"{1000 * (fault.followed - fault.switched):.0f} ms later")
                return True
            time.sleep(0.05)
        serves = self.fo.santral_primary(fault.shard)
        self.env.anomaly("failover: Santral did not follow Sentinel's new primary",
                         f"{fault.shard}: Sentinel named {fault.new} (after {fault.old}'s "
                         f"{fault.kind}); Santral still serves {serves} {FOLLOW_TIMEOUT:.0f} s "
                         f"later")
        return False

    def inject(self, kind, shard, d, delay, wipe=False):
        env, fo = self.env, self.fo
        primary = fo.primary(shard)
        server = fo.server_at(primary)
        if server is None:
            env.harness_error(f"fault {kind}: no server at {shard}'s primary {primary}")
            return
        if kind in ("replica-kill", "replica-wipe"):
            server = next(s for n, s in fo.servers.items() if n.startswith(shard)
                          and s is not server)
        fault = Fault(kind, shard, server.name, server.address)
        fo.faults.append(fault)
        env.count_fault(kind)
        if kind == "primary-kill":
            env.event(f"fault: SIGKILL {shard}'s primary {server.name} ({server.address})")
            server.kill()
            self.wait_switch(fault, SWITCH_TIMEOUT)
            time.sleep(delay)
            env.event(f"fault: restart {server.name} on its config file")
            server.start()
        elif kind == "primary-stop":
            env.event(f"fault: SIGSTOP {shard}'s primary {server.name} ({server.address}) for "
                      f"{d:.1f} s at least, until Sentinel has switched")
            server.pause()
            try:
                self.wait_switch(fault, SWITCH_TIMEOUT)
                while now() < fault.at + d:
                    time.sleep(0.05)
            finally:
                server.resume()
            env.event(f"fault: SIGCONT {server.name}")
        elif kind in ("replica-kill", "replica-wipe"):
            wiped = kind == "replica-wipe"
            env.event(f"fault: SIGKILL {shard}'s replica {server.name} ({server.address}), "
                      f"restart in {delay:.1f} s" + (" without its data" if wiped else ""))
            server.kill()
            if wiped:
                server.wipe()
            time.sleep(delay)
            server.start()
        elif kind == "primary-wipe":
            # Back before Sentinel's down-after-milliseconds: an empty master its replica
            # resyncs from (everything acknowledged is gone, unless something notices).
            env.event(f"fault: SIGKILL {shard}'s primary {server.name} ({server.address}), "
                      f"restart it at once without its data (AOF and RDB removed)")
            server.kill()
            server.wipe()
            server.start()
        elif kind == "kill-chain":
            # Kills faster than a resync: the primary killed; once the replica is promoted and
            # served, the old primary restarted (it must resync from the new one; half the time
            # without its data) and the new primary killed before that resync is over.
            env.event(f"fault: SIGKILL {shard}'s primary {server.name} ({server.address}), then "
                      f"its successor before {server.name} has resynced"
                      + (" (restarted without its data)" if wipe else ""))
            server.kill()
            self.wait_switch(fault, SWITCH_TIMEOUT)
            if wipe:
                server.wipe()
            server.start()
            successor = fo.server_at(fault.new) if fault.new else None
            if successor is not None and successor is not server:
                # Once Sentinel has made it a replica of the successor (its resync starting),
                # or 5 s.
                end = now() + 5.0
                while now() < end:
                    info = server.replication() or {}
                    if info.get("role") == "slave" and \
                            int(info.get("master_port", 0) or 0) == successor.port:
                        break
                    time.sleep(0.02)
                info = server.replication() or {}
                link = (f"role {info.get('role')}, link {info.get('master_link_status')}, "
                        f"sync in progress {info.get('master_sync_in_progress')}")
                env.event(f"fault: SIGKILL {shard}'s new primary {successor.name} "
                          f"({successor.address}); {server.name}: {link}")
                successor.kill()
                # Restarted once Sentinel has named another primary, or after 15 s.
                end = now() + 15.0
                while now() < end and fo.primary(shard) == successor.address:
                    time.sleep(0.1)
                time.sleep(delay)
                env.event(f"fault: restart {successor.name} on its config file (Sentinel names "
                          f"{fo.primary(shard)})")
                successor.start()
        else:
            raise ValueError(f"unknown fault {kind}")
        ok, reason = fo.wait_settled([shard], SETTLE_TIMEOUT, stop=env.stop_nemeses)
        if ok:
            fault.settled = now()
            env.event(f"fault: {shard} settled after {fault.settled - fault.at:.1f} s: primary "
                      f"{fo.primary(shard)}")
        elif not env.stop_nemeses.is_set():
            env.anomaly("liveness: a shard did not settle after a fault",
                        f"{SETTLE_TIMEOUT:.0f} s after {kind} of {server.name}: {reason}")

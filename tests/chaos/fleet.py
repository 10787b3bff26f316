"""The chaos harness's fleet mode (`chaos.py --fleet [--fence acl|lease]`): three Santral
routers share one shard map in a three-member etcd cluster, over five redis-server shards.

The processes (all on 127.0.0.1, in the work dir):
  - etcd members m0..m2 (/usr/bin/etcd 3.4, `--heartbeat-interval 50 --election-timeout 500`,
    as tests/support/etcd_cluster.cpp starts them), each on its data dir etcd/mN (a killed
    member is restarted on it); logs etcd/mN.log;
  - shards s0..s4; the map starts with s0..s3 (the operator removes one and adds it back);
  - the fault proxy: a link per shard (as in single mode), and a link per router and etcd
    member (rN-mM): router N's `cluster.etcd` names its own three links, so that one router
    alone can be cut from etcd (blackhole or reset) while the others keep their lease;
  - routers r0..r2 (santral-rN.yaml, santral-rN.log), each with its own listen port and the
    default router name (its address and a per-start id: a router restarted at once is never
    refused as a live name), `cluster: {name: chaos, lease_ttl_s: 3, fence: <--fence>}`.
    r0 starts first and publishes its file's map; the others take it from etcd.

Clients: every long-lived workload connection is bound to one router (round robin); the
registers read back through a router other than the writer's. The operator, the state polls
and the final check use a connection that goes to whichever router is not faulted.

Operator (FleetOperator): one action at a time; each picks three routers in a random order:
the move is planned through the first (SANTRAL MAP PUSH <map text>), approved (and sometimes
aborted) through the second, its status read through the third (the next one when that one does
not answer or a fault is on it: a router that was away answers from its own, old view until it
has caught up). A move counts as over once its state is idle and a router serves its map (the
old one after an abort). Actions: remove a shard / add it back (grow/shrink), the same aborted halfway
or at once (abort, abort-now), source-stop-abort (a shard of the map SIGSTOPped before APPROVE,
or right after it, while a removed shard is added back, a plain move removing one first when
all five are in, until request_ms + 8 s after the ABORT: --source-stop-hold), `hash:` murmur <-> fnv1a_64, `hash_tag:` "{}" <-> "[]". Placement is checked after each
move, through a router that serves the map in force. Before each action the map a router
serves (SANTRAL SHARDMAP) must be the one the last move left in force (a router may take a
moment to catch up: it is asked again for up to 30 s).

Faults (FleetFaults; one at a time, 0.5-3 s apart), in addition to single mode's shard faults
(shard-stop, shard-kill, link-delay/delay-late/stall/stall-deliver/stall-next/reset/blackhole on
shard links; nemesis.py):
  router-freeze     SIGSTOP a router for twice its lease (it must find itself left out, and
                    its writes refused, when it wakes)
  router-stop       SIGSTOP a router 0.5-2 s (well within its lease)
  router-kill       SIGKILL a router, restart it on its file
  router-term       SIGTERM a router (graceful), restart it
  etcd-kill         SIGKILL an etcd member, restart it on its data dir after 0-2 s
  etcd-cut-blackhole  one router's etcd links blackholed for 0.5-3 leases, then healed
  etcd-cut-reset    one router's etcd links reset (every connection refused with RST) likewise
  etcd-no-quorum    two etcd members SIGSTOPped (or SIGKILLed and restarted) for 1-8 s
"""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import cluster
from client import Client, Outcome, UNKNOWN
from cluster import free_port
import nemesis

now = time.monotonic
ETCD = "/usr/bin/etcd"
LEASE_TTL_S = 3
SHARDS = ["s0", "s1", "s2", "s3", "s4"]
INITIAL = ["s0", "s1", "s2", "s3"]
ROUTERS = 3
MEMBERS = 3

FAULTS = [("router-freeze", 1.5), ("router-stop", 1), ("router-kill", 1), ("router-term", 0.5),
          ("etcd-kill", 1), ("etcd-cut-blackhole", 1), ("etcd-cut-reset", 1),
          ("etcd-no-quorum", 1), ("shard-stop", 1.5), ("shard-kill", 1), ("link-delay", 0.5),
          ("link-delay-late", 0.5), ("link-stall", 0.5), ("link-stall-deliver", 0.75),
          ("link-stall-next", 0.5), ("link-reset", 1), ("link-blackhole", 0.5)]
OPERATOR_ACTIONS = nemesis.OPERATOR_ACTIONS


# ---------------------------------------------------------------------------------------------
class EtcdMember(cluster.Signalled):
    def __init__(self, spawner, name, workdir):
        self.spawner = spawner
        self.name = name
        self.client_port = free_port()
        self.peer_port = free_port()
        self.dir = os.path.join(workdir, "etcd", name)
        self.log_path = os.path.join(workdir, "etcd", name + ".log")
        os.makedirs(os.path.dirname(self.dir), exist_ok=True)
        self.proc = None
        self.stopped = False
        self.argv = None

    def configure(self, initial_cluster, token):
        client = f"http://127.0.0.1:{self.client_port}"
        self.argv = [ETCD, "--name", self.name, "--data-dir", self.dir,
                     "--listen-client-urls", client, "--advertise-client-urls", client,
                     "--listen-peer-urls", f"http://127.0.0.1:{self.peer_port}",
                     "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer_port}",
                     "--initial-cluster", initial_cluster, "--initial-cluster-state", "new",
                     "--initial-cluster-token", token,
                     "--heartbeat-interval", "50", "--election-timeout", "500",
                     "--log-level", "warn"]

    def start(self):
        log = open(self.log_path, "a")
        log.write(f"\n===== chaos: start at {time.strftime('%H:%M:%S')} =====\n")
        log.flush()
        self.proc = self.spawner.popen(self.argv, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=log)
        log.close()
        self.stopped = False

    def healthy(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.client_port}/health",
                                        timeout=1.0) as r:
                return r.status == 200 and '"true"' in r.read().decode()
        except Exception:
            return False

    def close(self):
        cluster._kill(self.proc)


class Router(cluster.Santral):
    """One router of the fleet: its own file, log and listen port; etcd through the proxy."""

    def __init__(self, spawner, binary, workdir, proxy, index, etcd_ports, fence):
        super().__init__(spawner, binary, workdir, proxy)
        self.index = index
        self.name = f"r{index}"
        self.config_path = os.path.join(workdir, f"santral-{self.name}.yaml")
        self.log_path = os.path.join(workdir, f"santral-{self.name}.log")
        self.etcd_ports = etcd_ports  # this router's proxy links to the members
        self.fence = fence
        self.stopped = False  # SIGSTOPped by a fault
        self.cut = False  # its etcd links faulted

    def config_text(self, model):
        text = super().config_text(model)
        etcd = ", ".join(f"127.0.0.1:{p}" for p in self.etcd_ports)
        return (text + "cluster:\n"
                f"  etcd: [{etcd}]\n"
                "  name: chaos\n"
                f"  lease_ttl_s: {LEASE_TTL_S}\n"
                f"  fence: {self.fence}\n")

    def usable(self):
        return self.running() and not self.stopped and not self.cut


def map_text(model, max_keys_per_sec):
    """The shared part of a router's config, as SANTRAL MAP PUSH takes it."""
    lines = [
        "cross_shard_writes: allow",
        f"hash: {model.hash}",
        "distribution: ketama",
        f'hash_tag: "{model.hash_tag}"',
        f"resharding: {{max_keys_per_sec: {max_keys_per_sec}, batch_keys: 25}}",
        "shards:",
    ]
    return lines


class SteadyProxy(cluster.Proxy):
    """The proxy, driven through a control connection that is opened again when a command
    times out (a proxy starved of CPU on a loaded machine): a fault must always be lifted."""

    def fault(self, link, fault, arg=None):
        return self._steady(lambda: self.control.fault(link, fault, arg))

    def kill(self, link):
        return self._steady(lambda: self.control.command(f"KILL {link}"))

    def _steady(self, command):
        import fault_proxy  # noqa: E402 (cluster.Proxy put its directory on sys.path)

        for attempt in range(5):
            with self._lock:
                try:
                    return command()
                except (OSError, ConnectionError):
                    if attempt == 4:
                        raise
                    try:
                        self.control.close()
                    except Exception:
                        pass
                    try:
                        self.control = fault_proxy.ProxyControl(self.control_port, timeout=30.0)
                    except OSError:
                        pass
            time.sleep(1.0)


class EtcdProxy(SteadyProxy):
    """A second fault proxy, for the routers' etcd links alone (rN-mM), its stderr in the work
    dir. Routers open a connection per etcd request; while members are frozen or dead the
    proxy can hold thousands of them (a connection whose target does not answer is kept until
    its connect times out), and its running out of descriptors must not starve the shard
    links."""

    def __init__(self, spawner, workdir):
        self.log = open(os.path.join(workdir, "etcd-proxy.log"), "a")
        self.proc = spawner.popen([sys.executable, cluster.PROXY], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.ports = {}
        self.control_port = None
        for line in self.proc.stdout:
            words = line.split()
            if words and words[0] == "control":
                self.control_port = int(words[1])
            elif words and words[0] == "ready":
                break
        if self.control_port is None:
            raise RuntimeError("the etcd fault proxy did not start")
        sys.path.insert(0, os.path.dirname(cluster.PROXY))
        import fault_proxy  # noqa: E402

        self.control = fault_proxy.ProxyControl(self.control_port)
        self._lock = threading.Lock()

    def add(self, name, target_port):
        with self._lock:
            port = int(self.control.command(f"ADD {name} {target_port}"))
        self.ports[name] = port
        return port


class Fleet:
    def __init__(self, env, args):
        self.env = env
        self.args = args
        self.members = []
        self.routers = []
        self.etcd_proxy = None
        self._rr = 0
        self._any = 0
        self._lock = threading.Lock()

    # --- setup --------------------------------------------------------------------------------
    def start(self, model):
        env, args = self.env, self.args
        workdir = env.workdir
        for name in SHARDS:
            env.shards[name] = cluster.Shard(env.spawner, name, workdir)
            env.shards[name].start()
        env.proxy = SteadyProxy(env.spawner, [env.shards[n] for n in SHARDS])
        self.members = [EtcdMember(env.spawner, f"m{i}", workdir) for i in range(MEMBERS)]
        initial = ",".join(f"{m.name}=http://127.0.0.1:{m.peer_port}" for m in self.members)
        token = f"santral-chaos-{self.members[0].client_port}"
        for m in self.members:
            m.configure(initial, token)
            m.start()
        self.wait_etcd(60.0, fail=True)
        self.etcd_proxy = EtcdProxy(env.spawner, workdir)
        for i in range(ROUTERS):
            ports = [self.etcd_proxy.add(f"r{i}-{m.name}", m.client_port) for m in self.members]
            r = Router(env.spawner, args.santral, workdir, env.proxy, i, ports, args.fence)
            r.max_keys_per_sec = 300
            r.request_ms = args.request_ms
            r.write_config(model)
            self.routers.append(r)
        for r in self.routers:
            if not r.start(timeout=30.0):
                raise RuntimeError(f"router {r.name} did not start: " + r.log_tail(20))
        env.santral = self.routers[0]  # for what single mode asks of "the" Santral

    def wait_etcd(self, timeout_s, fail=False):
        end = now() + timeout_s
        while now() < end:
            if all(m.healthy() for m in self.members):
                return True
            time.sleep(0.2)
        if fail:
            raise RuntimeError("etcd did not become healthy: " + " | ".join(
                open(m.log_path, errors="replace").read()[-400:] for m in self.members))
        return False

    def describe(self):
        return (f"etcd {', '.join(f'{m.name}:{m.client_port}' for m in self.members)}; routers "
                + ", ".join(f"{r.name}:{r.port} (etcd via {r.etcd_ports})" for r in self.routers))

    # --- which router a client talks to --------------------------------------------------------
    def assign(self):
        with self._lock:
            self._rr += 1
            return (self._rr - 1) % len(self.routers)

    def port_for(self, client):
        if client.router == "any":
            # The first usable router from a rotating start (so that the operator and the
            # checks do not all lean on r0); if none is usable, any running one.
            with self._lock:
                start = self._any
                self._any += 1
            order = [self.routers[(start + k) % len(self.routers)] for k in range(len(self.routers))]
            for r in order:
                if r.usable():
                    client.bound = r.index
                    return r.port
            for r in order:
                if r.running():
                    client.bound = r.index
                    return r.port
            return self.routers[0].port
        client.bound = client.router
        return self.routers[client.router].port

    # --- process control ----------------------------------------------------------------------
    def restart_router(self, r):
        for attempt in range(30):
            if r.start(timeout=30.0):
                r.stopped = False
                return True
            if attempt == 0:
                self.env.anomaly("router: did not start again on its config",
                                 f"{r.name}: " + r.log_tail(6).replace("\n", " | ")[-600:])
            r.kill(signal.SIGKILL)
            time.sleep(1.0)
        raise RuntimeError(f"router {r.name} does not start: " + r.log_tail(10))

    def heal(self):
        """Every fault lifted: links pass, members and routers running and resumed."""
        env = self.env
        env.proxy.heal()
        self.etcd_proxy.heal()
        for m in self.members:
            if m.running():
                m.resume()
            else:
                m.start()
        self.wait_etcd(30.0)
        for shard in env.shards.values():
            if shard.running():
                shard.resume()
            else:
                shard.start()
        for r in self.routers:
            r.cut = False
            if r.running():
                r.signal(signal.SIGCONT)
                r.stopped = False
            else:
                self.restart_router(r)

    def close(self):
        for r in self.routers:
            r.close()
        for m in self.members:
            m.close()
        if self.etcd_proxy is not None:
            self.etcd_proxy.close()

    # --- the final agreement check ------------------------------------------------------------
    def versions(self):
        """router name -> (config_version, move state) as each router answers, or None."""
        out = {}
        for r in self.routers:
            c = Client(self.env, f"final-{r.name}", timeout=5.0, router=r.index)
            info = c.call("INFO")
            version = None
            if info.ok:
                text = info.value if isinstance(info.value, str) else ""
                if isinstance(info.value, dict):
                    version = info.value.get("config_version")
                for line in text.splitlines():
                    if line.startswith("config_version:"):
                        version = line.split(":", 1)[1].strip()
            st = c.call("SANTRAL", "RESHARD", "STATUS")
            state = self.env.as_map(st.value).get("state") if st.ok else None
            out[r.name] = (version, state)
            c.drop()
        return out

    def check_agreement(self, timeout_s=60.0):
        env = self.env
        end = now() + timeout_s
        while True:
            seen = self.versions()
            versions = {v for v, _ in seen.values()}
            if None not in versions and len(versions) == 1:
                env.passed("fleet: every router serves the same map version")
                return seen
            if now() > end:
                env.anomaly("fleet: routers disagree on the map version after healing",
                            ", ".join(f"{n}: version {v} state {s}" for n, (v, s) in seen.items()))
                return seen
            time.sleep(0.5)


# ---------------------------------------------------------------------------------------------
class FleetOperator(nemesis.Operator):
    """Moves planned (SANTRAL MAP PUSH) through one router, approved or aborted through
    another, watched through a third."""

    def __init__(self, env, seed, model, actions=None):
        super().__init__(env, seed, model, actions)
        self.fleet = env.fleet
        self.admin.router = "any"
        self.clients = [Client(env, f"operator-{r.name}", timeout=15.0, router=r.index)
                        for r in self.fleet.routers]
        self.roles = [0, 1, 2]
        self.max_keys_per_sec = 300

    def via(self, role, *args, deadline_s=60.0, idempotent=True):
        """A command through the router of `role` (0 plan, 1 approve/abort, 2 status); when it
        does not answer (down, frozen, out of touch with etcd: CLUSTERDOWN) an idempotent one
        is sent through the next router. -> (outcome, router name)"""
        env = self.env
        end = now() + deadline_s
        order = self.roles[role:] + self.roles[:role]
        k = 0
        while True:
            r = self.fleet.routers[order[k % len(order)]]
            client = self.clients[r.index]
            out = client.call(*args)
            down = out.broken or (out.error or "").startswith("CLUSTERDOWN")
            if not down or now() > end or env.stop_nemeses.is_set():
                return out, r.name
            if not idempotent:
                return out, r.name
            k += 1
            time.sleep(0.2)

    def command(self, *args, deadline_s=60.0):
        return self.via(2, *args, deadline_s=deadline_s)[0]

    def status(self):
        """SANTRAL RESHARD STATUS through the status router, or, while a fault is on it (frozen,
        cut from etcd: its view may be old; a router that was away answers from its own view
        until it has caught up), through the next router that is not faulted."""
        order = self.roles[2:] + self.roles[:2]
        for k in order:
            r = self.fleet.routers[k]
            if not r.usable():
                continue
            out = self.clients[k].call("SANTRAL", "RESHARD", "STATUS")
            if out.ok:
                return self.env.as_map(out.value)
        out = self.command("SANTRAL", "RESHARD", "STATUS", deadline_s=30.0)
        return self.env.as_map(out.value) if out.ok else {}

    def wait_idle(self, stall_s=180.0, approve_planned=True, expect=None):
        """As single mode's; with `expect`, idle counts only once a router that is not faulted
        serves that map (a router that was away may answer "idle" before it has seen the move):
        asked again for up to 60 s while no move runs."""
        while True:
            if not super().wait_idle(stall_s, approve_planned):
                return False
            if expect is None:
                return True
            end = now() + 60.0
            while now() < end and not self.env.stop_nemeses.is_set():
                k = next((i for i in self.roles[2:] + self.roles[:2]
                          if self.fleet.routers[i].usable()), self.roles[2])
                if nemesis.parse_shardmap(self.clients[k].call("SANTRAL", "SHARDMAP")) == expect:
                    return True
                if self.status().get("state") not in ("idle", None):
                    break  # a move runs after all: wait for it
                time.sleep(0.3)
            else:
                if self.env.stop_nemeses.is_set():
                    return False
                self.env.event(f"operator: no router serves {expect.describe()} 60 s after "
                               f"the move ended")
                return True

    def served(self):
        """The map the plan router serves; a router that has not caught up yet (it polls etcd,
        or was away) is asked again for up to 30 s."""
        end = now() + 30.0
        while True:
            out, _ = self.via(0, "SANTRAL", "SHARDMAP", deadline_s=30.0)
            model = nemesis.parse_shardmap(out)
            if model == self.in_force or now() > end or self.env.stop_nemeses.is_set():
                return model
            time.sleep(0.5)

    def approve(self):
        out, name = self.via(1, "SANTRAL", "RESHARD", "APPROVE", idempotent=False)
        if out.ok:
            self.env.count("moves started")
            self.env.event(f"operator: approved through {name}")
            # The status router takes the change at its next read of etcd (poll_ms).
            self.wait_state(lambda s: s != "planned")
            return True
        # Unknown (the router died or froze meanwhile) or refused: what runs now says.
        st = self.status()
        if st.get("state") in ("moving", "finishing"):
            self.env.count("moves started")
            self.env.event(f"operator: APPROVE through {name} answered {out.error}; the move "
                           f"runs ({st.get('state')})")
            return True
        if st.get("state") == "planned":
            first = out.error
            out, name2 = self.via(2, "SANTRAL", "RESHARD", "APPROVE", idempotent=False)
            if out.ok:
                self.env.count("moves started")
                self.env.event(f"operator: APPROVE through {name} answered {first}; approved "
                               f"through {name2}")
                self.wait_state(lambda s: s != "planned")
                return True
        self.env.event(f"operator: APPROVE through {name} answered {out.error}")
        return False

    def wait_state(self, condition, seconds=5.0):
        """Waits until the status router shows a state for which condition holds."""
        end = now() + seconds
        while now() < end and not self.env.stop_nemeses.is_set():
            if condition(self.status().get("state")):
                return True
            time.sleep(0.1)
        return False

    def grows(self, m):
        return len(m.shards) < len(SHARDS)

    def target(self, action):
        m = self.in_force
        if action in ("grow/shrink", "abort", "abort-now"):
            if len(m.shards) >= len(SHARDS):
                gone = self.rng.choice(m.shards)
                return m.copy(shards=[s for s in m.shards if s != gone])
            return m.copy(shards=list(SHARDS))
        return super().target(action)

    def push(self, model):
        """SANTRAL MAP PUSH through the plan router -> ('planned'|'applied'|'rejected'|
        'failed', text, router name)."""
        lines = map_text(model, self.max_keys_per_sec)
        for name in model.shards:
            lines.append(f"  - {{name: {name}, address: 127.0.0.1:{self.env.proxy.ports[name]}}}")
        text = "\n".join(lines) + "\n"
        out, name = self.via(0, "SANTRAL", "MAP", "PUSH", text, idempotent=False)
        self.env.count("reloads")
        if out.ok:
            value = out.value if isinstance(out.value, str) else str(out.value)
            return ("planned" if "planned" in value else "applied"), value, name
        if out.error and ("not proposed" in out.error or "reject" in out.error):
            return "rejected", out.error, name
        st = self.status()
        if st.get("state") == "planned":
            return "planned", f"(push answered {out.error}; a move is planned)", name
        return "failed", out.error or "", name

    def send_abort(self):
        out, name = self.via(1, "SANTRAL", "RESHARD", "ABORT", idempotent=False)
        if out.broken:
            # Unknown: aborted or not, what runs says; ABORT again where it answers.
            out, name = self.via(2, "SANTRAL", "RESHARD", "ABORT")
        return out, name

    def after_abort(self, old, keep_file):
        if self.wait_idle(approve_planned=False, expect=old):
            self.env.moves_switched_add()
            self.in_force = old
            self.file_model = old
            self.last_move = f"an abort back to {old.describe()} ended at {self.env.stamp()}"

    def act(self, action, abort_at, keep_file, room_made=False):
        env = self.env
        self.rng.shuffle(self.roles)
        begun = self.begin(action, "a router", f"r{self.roles[0]}")
        if begun is None:
            return
        old, new, action, style = begun
        if self.make_room(action, style, old, abort_at, keep_file, room_made):
            return
        self.max_keys_per_sec = env.walk_rate()
        self.file_model = new
        verdict, text, via = self.push(new)
        env.event(f"operator: {action}: {old.describe()} -> {new.describe()} (walk "
                  f"{self.max_keys_per_sec} keys/s): push through {via}: {verdict}: "
                  f"{text.splitlines()[0][:160] if text else ''}")
        if verdict == "applied":
            env.anomaly("map push: a placement change went in force without a move",
                        f"{action}: {old.describe()} -> {new.describe()}: {text[:200]}")
            self.in_force = new
            env.count("placement changes in force without a move")
            return
        if verdict != "planned":
            self.file_model = old
            return
        self.wait_state(lambda s: s == "planned")
        # source-stop-abort stops the source before APPROVE (findings F1: the new direction's
        # walk of it never starts) or, half the time, right after (its pulls are then queued
        # on connections made before the stop; a fleet fenced by ACL users fails its
        # connections to a shard it cannot make its user on at the switch).
        early = style == "source-stop" and self.rng.random() < 0.5
        stop = self.stop_source(old, new, action, "before APPROVE") if early else None
        try:
            if not self.approve():
                if stop is not None:
                    stop.resume("APPROVE failed")
                # Left planned: abort it so that the next action starts from idle.
                self.via(1, "SANTRAL", "RESHARD", "ABORT")
                self.wait_idle(approve_planned=False)
                if self.status().get("state") == "planned":
                    # The ABORT did not take either (etcd without quorum): the move to `new`
                    # stays planned, and the next action's wait_idle approves it (file_model
                    # is `new`).
                    return
                self.file_model = old
                return
            started = now()
            if style == "source-stop" and stop is None:
                stop = self.stop_source(old, new, action, "right after APPROVE")
            if style is not None:
                out = self.abort(style, started, abort_at, stop)
                if out.ok:
                    self.after_abort(old, keep_file)
                    return
        finally:
            if stop is not None:
                stop.resume("the operator's action ended")
        if self.wait_idle(expect=new):
            env.count("moves finished")
            env.moves_switched_add()
            self.in_force = new
            self.file_model = new
            self.last_move = f"{action} to {new.describe()} ended at {env.stamp()}"
            env.event(f"operator: move to {new.describe()} finished in {now() - started:.1f} s "
                      f"(status through r{self.roles[2]})")


# ---------------------------------------------------------------------------------------------
class FleetFaults(nemesis.Faults):
    def __init__(self, env, seed, kinds=None):
        super().__init__(env, seed, kinds)
        self.fleet = env.fleet
        self.kinds = [(k, w) for k, w in FAULTS if kinds is None or k in kinds]

    def inject(self, kind, shard, d):
        env, rng, fleet = self.env, self.rng, self.fleet
        if kind.startswith("shard-") or kind.startswith("link-"):
            return super().inject(kind, shard, d)
        env.count_fault(kind)
        r = rng.choice(fleet.routers)
        if kind == "router-freeze":
            d = 2 * LEASE_TTL_S
        if kind in ("router-freeze", "router-stop"):
            env.event(f"fault: SIGSTOP router {r.name} {d:.1f} s")
            r.stopped = True
            r.signal(signal.SIGSTOP)
            try:
                time.sleep(d)
            finally:
                r.signal(signal.SIGCONT)
                r.stopped = False
        elif kind in ("router-kill", "router-term"):
            sig = signal.SIGKILL if kind == "router-kill" else signal.SIGTERM
            env.event(f"fault: {'SIGKILL' if sig == signal.SIGKILL else 'SIGTERM'} router "
                      f"{r.name}, restart")
            r.kill(sig)
            time.sleep(rng.uniform(0.0, 1.0))
            fleet.restart_router(r)
        elif kind == "etcd-kill":
            m = rng.choice(fleet.members)
            env.event(f"fault: SIGKILL etcd {m.name}, restart on its data dir")
            m.kill()
            time.sleep(rng.uniform(0.0, 2.0))
            m.start()
            fleet.wait_etcd(30.0)
        elif kind in ("etcd-cut-blackhole", "etcd-cut-reset"):
            fault = kind.rsplit("-", 1)[1]
            length = rng.uniform(0.5, 3.0) * LEASE_TTL_S
            env.event(f"fault: {fault} router {r.name}'s etcd links for {length:.1f} s")
            r.cut = True
            try:
                for m in fleet.members:
                    fleet.etcd_proxy.fault(f"{r.name}-{m.name}", fault)
                time.sleep(length)
            finally:
                for m in fleet.members:
                    fleet.etcd_proxy.fault(f"{r.name}-{m.name}", "pass")
                r.cut = False
        elif kind == "etcd-no-quorum":
            two = rng.sample(fleet.members, 2)
            length = rng.uniform(1.0, 8.0)
            how = rng.choice(["SIGSTOP", "SIGKILL"])
            env.event(f"fault: {how} etcd {two[0].name} and {two[1].name} (no quorum) for "
                      f"{length:.1f} s")
            try:
                for m in two:
                    m.pause() if how == "SIGSTOP" else m.kill()
                time.sleep(length)
            finally:
                for m in two:
                    m.resume() if how == "SIGSTOP" else m.start()
            fleet.wait_etcd(30.0)
        else:
            raise ValueError(f"unknown fault {kind}")

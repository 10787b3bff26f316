#!/usr/bin/python3
"""Client-side caching (CLIENT TRACKING, RESP3) through Santral, with real clients.

  tracking_test.py --santral build/app/santral   # 3 redis-server shards, Santral (workers: 2)
  tracking_test.py --direct                          # one redis-server, no Santral

Every check passes against a plain redis-server (--direct), which proves the checks right; the
same checks then run through Santral. Santral-only checks (a lost shard connection's null
invalidation) are skipped in --direct mode; tracking_table_max_keys runs
there against Redis's own tracking-table-max-keys.

The client here is a small raw-socket RESP3 client (Debian's python3-redis 4.3 has no RESP3).
It keeps a cache per client with the rule client libraries use: a value is cached when its reply
arrives, a key is dropped when an `invalidate` push naming it arrives, the whole cache when a
null invalidation arrives. Replies and pushes are handled strictly in the order they arrive, so
a push that overtakes a reply it should follow leaves a stale value, which the checks find.

Then tests/clients/node_cache_test.mjs runs node-redis 5's clientSideCache against the same
port; its npm package goes to tests/clients/node_modules (not committed) on first run. That part
alone is skipped when npm cannot reach the registry.

  --seed N     replays the fuzz-style checks' random choices (printed at start)
  --only a,b   runs only the named checks (names as printed)

Exits 1 when a check failed; 77 (ctest: skipped) when every check passed but the node-redis part
could not run; 0 when everything ran and passed.
"""
import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
SKIP = 77
SHARDS = 3
PUSH_TIMEOUT = 5.0      # how long a push that must come may take
LATE_WAIT = 3.0         # after a drain, how long a stale cached value may wait for its push


# ---- a raw RESP3 client -----------------------------------------------------------------------

class CheckFailed(Exception):
    pass


class RespError(str):
    """An error reply (- or !), kept as a value so that checks can look at it."""


class Push(list):
    """A RESP3 push (>)."""


class Incomplete(Exception):
    pass


class ConnectionLost(Exception):
    pass


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


def parse(buf, pos):
    """One RESP2/RESP3 value from buf at pos: (value, next position), or Incomplete."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete
    kind = buf[pos:pos + 1]
    line = bytes(buf[pos + 1:end])
    pos = end + 2
    if kind == b"+":
        return line.decode(), pos
    if kind == b"-":
        return RespError(line.decode()), pos
    if kind in (b":", b"("):
        return int(line), pos
    if kind in (b"$", b"=", b"!"):
        n = int(line)
        if n < 0:
            return None, pos
        if len(buf) < pos + n + 2:
            raise Incomplete
        data = bytes(buf[pos:pos + n]).decode(errors="surrogateescape")
        pos += n + 2
        if kind == b"!":
            return RespError(data), pos
        return (data[4:] if kind == b"=" else data), pos
    if kind in (b"*", b"~", b">"):
        n = int(line)
        if n < 0:
            return None, pos
        items = []
        for _ in range(n):
            item, pos = parse(buf, pos)
            items.append(item)
        return (Push(items) if kind == b">" else items), pos
    if kind == b"%":
        out = {}
        for _ in range(int(line)):
            k, pos = parse(buf, pos)
            v, pos = parse(buf, pos)
            out[k if not isinstance(k, list) else tuple(k)] = v
        return out, pos
    if kind == b"|":  # an attribute: skip it, the value follows
        for _ in range(2 * int(line)):
            _, pos = parse(buf, pos)
        return parse(buf, pos)
    if kind == b"_":
        return None, pos
    if kind == b"#":
        return line == b"t", pos
    if kind == b",":
        return float(line), pos
    raise CheckFailed(f"protocol error: unexpected type byte {kind!r} in "
                      f"{bytes(buf[max(0, pos - 40):pos + 40])!r}")


class Client:
    """One connection. Pushes are handled as they are read, in stream order with the replies.

    cache: key -> value; the caller caches a value when its reply arrives (cache on reply);
    an invalidate push drops its keys, a null invalidation clears it (drop on push).
    pushes: every invalidation in arrival order, a list of keys or None for the null form.
    With record=True, events also lists ("push", keys|None) and ("reply", value) in order."""

    def __init__(self, port, name, protocol=3, timeout=5.0):
        self.name = name
        self.port = port
        self.timeout = timeout
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0
        self.cache = {}
        self.pushes = []
        self.other_pushes = []
        self.invalidated_keys = 0
        self.null_invalidations = 0
        self.record = False
        self.events = []
        if protocol == 3:
            hello = self.call("HELLO", "3")
            if not isinstance(hello, dict):
                raise CheckFailed(f"{name}: HELLO 3 on port {port} answered {hello!r}, not a map")
            self.hello = hello

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, *commands):
        self.sock.sendall(b"".join(encode(c) for c in commands))

    def _parse_one(self):
        value, pos = parse(self.buf, self.pos)
        self.last_raw = bytes(self.buf[self.pos:pos])
        self.pos = pos
        if self.pos == len(self.buf):
            self.buf.clear()
            self.pos = 0
        elif self.pos > (1 << 20):
            del self.buf[:self.pos]
            self.pos = 0
        return value

    def _next(self, deadline):
        while True:
            try:
                return self._parse_one()
            except Incomplete:
                pass
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                raise TimeoutError from None
            except (ConnectionResetError, BrokenPipeError) as e:
                raise ConnectionLost(f"{self.name}: {e}") from None
            if not data:
                raise ConnectionLost(f"{self.name}: the connection was closed")
            self.buf += data

    def _on_push(self, push):
        if self.record:
            self.events.append(("push", push[1] if len(push) > 1 else push))
        if len(push) >= 2 and push[0] == "invalidate":
            keys = push[1]
            if keys is None:
                self.cache.clear()
                self.null_invalidations += 1
                self.pushes.append(None)
            else:
                for k in keys:
                    self.cache.pop(k, None)
                self.invalidated_keys += len(keys)
                self.pushes.append(list(keys))
        else:
            self.other_pushes.append(push)

    def reply(self, timeout=None, what="a reply"):
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            try:
                m = self._next(deadline)
            except TimeoutError:
                raise CheckFailed(f"{self.name}: no answer within {timeout or self.timeout:.0f} s "
                                  f"waiting for {what}") from None
            if isinstance(m, Push):
                self._on_push(m)
                continue
            if self.record:
                self.events.append(("reply", m))
            return m

    def call(self, *args, timeout=None):
        self.send(args)
        return self.reply(timeout, what=" ".join(map(str, args))[:80])

    def raw_call(self, *args):
        """The reply's bytes exactly as they came (pushes before it are handled)."""
        self.call(*args)
        return self.last_raw

    def poll(self):
        """Handles the pushes already received, without waiting (as redis-py does before a hit)."""
        self.sock.setblocking(False)
        try:
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    raise ConnectionLost(f"{self.name}: the connection was closed")
                self.buf += data
        except (BlockingIOError, InterruptedError):
            pass
        finally:
            self.sock.setblocking(True)
        while True:
            try:
                m = self._parse_one()
            except Incomplete:
                return
            if not isinstance(m, Push):
                raise CheckFailed(f"{self.name}: a reply {m!r} arrived while no command was "
                                  "outstanding")
            self._on_push(m)

    def wait_for(self, predicate, timeout=PUSH_TIMEOUT):
        """Reads pushes until predicate() holds or the deadline passes; no command may be
        outstanding. True when it held."""
        deadline = time.monotonic() + timeout
        while not predicate():
            try:
                m = self._next(deadline)
            except TimeoutError:
                return predicate()
            if not isinstance(m, Push):
                raise CheckFailed(f"{self.name}: a reply {m!r} arrived while waiting for pushes "
                                  "with no command outstanding")
            self._on_push(m)
        return True

    def drain(self, timeout=None):
        """PING and read until PONG: the pushes sent before PING's reply are handled."""
        r = self.call("PING", timeout=timeout)
        if r != "PONG":
            raise CheckFailed(f"{self.name}: PING answered {r!r}")

    def invalidated_since(self, since, key):
        return any(p is not None and key in p for p in self.pushes[since:])


def expect(value, wanted, what):
    if value != wanted:
        raise CheckFailed(f"{what}: got {value!r}, expected {wanted!r}")
    return value


def not_error(value, what):
    if isinstance(value, RespError):
        raise CheckFailed(f"{what} answered the error {value!r}")
    return value


def track(c, *options):
    r = c.call("CLIENT", "TRACKING", "ON", *options)
    if r != "OK":
        raise CheckFailed(f"{c.name}: CLIENT TRACKING ON {' '.join(options)} answered {r!r}, "
                          "expected OK")


def cached_get(c, key, what=None):
    """GET that caches on reply."""
    v = not_error(c.call("GET", key), what or f"{c.name}: GET {key}")
    c.cache[key] = v
    return v


def expect_push(c, key, since, what, timeout=PUSH_TIMEOUT):
    if not c.wait_for(lambda: c.invalidated_since(since, key), timeout):
        got = c.pushes[since:]
        raise CheckFailed(f"{what}: {c.name} got no invalidate push naming {key!r} within "
                          f"{timeout:.0f} s (pushes since: {got[:6]!r})")


def forbid_push(c, keys, since, what):
    for p in c.pushes[since:]:
        if p is None:
            raise CheckFailed(f"{what}: {c.name} got a null invalidation")
        bad = [k for k in keys if k in p]
        if bad:
            raise CheckFailed(f"{what}: {c.name} got an invalidate push naming {bad!r} "
                              f"(push {p!r})")


# ---- the cluster ------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, lines=30):
    try:
        return "".join(Path(path).read_text(errors="replace").splitlines(True)[-lines:])
    except OSError:
        return ""


def wait_ping(port, what, process=None, log=None, timeout=15):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise CheckFailed(f"{what} exited with status {process.returncode} before answering "
                              f"PING on port {port}" + (f"; its log:\n{tail(log)}" if log else ""))
        try:
            c = Client(port, what, protocol=2, timeout=1)
            r = c.call("PING", timeout=1)
            c.close()
            if r == "PONG":
                return
            last = r
        except (OSError, CheckFailed, ConnectionLost) as e:
            last = e
        time.sleep(0.05)
    raise CheckFailed(f"{what} on port {port} did not answer PING within {timeout} s ({last!r})"
                      + (f"; its log:\n{tail(log)}" if log else ""))


def santral_config(port, shard_ports, extra=""):
    shards = "".join(f"  - name: shard{i}\n    address: 127.0.0.1:{p}\n"
                     for i, p in enumerate(shard_ports))
    return f"""listen: 127.0.0.1:{port}
workers: 2
hash: murmur
distribution: ketama
hash_tag: "{{}}"
watch_file: false
{extra}shards:
{shards}"""


class Cluster:
    """Where clients connect (router_port) and the servers that hold the keys (shard_ports).
    In --direct mode both are one redis-server; keys are still grouped in 3 as if on 3 shards."""

    def __init__(self, mode, work, santral=None, redis_server="redis-server"):
        self.mode = mode
        self.work = work
        self.santral_binary = santral
        self.redis_server = redis_server
        self.processes = []
        self.logs = {}
        self._direct = {}
        self._owner = {}

    @property
    def santral(self):
        return self.mode == "santral"

    def start_redis(self, count):
        ports = [free_port() for _ in range(count)]
        for p in ports:
            self.processes.append(subprocess.Popen(
                [self.redis_server, "--port", str(p), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(self.work)],
                stdout=subprocess.DEVNULL))
        for p, proc in zip(ports, self.processes[-count:]):
            wait_ping(p, "redis-server", proc)
        return ports

    def start_santral(self, name, extra=""):
        port = free_port()
        config = self.work / f"{name}.yaml"
        config.write_text(santral_config(port, self.shard_ports, extra))
        log = self.work / f"{name}.log"
        try:
            proc = subprocess.Popen([self.santral_binary, "--config", str(config)],
                                    stdout=open(log, "w"), stderr=subprocess.STDOUT)
        except OSError as e:
            raise CheckFailed(f"cannot run {self.santral_binary}: {e}") from None
        self.processes.append(proc)
        self.logs[name] = log
        wait_ping(port, f"santral ({name})", proc, log, timeout=30)
        return port, proc

    def start(self):
        if self.santral:
            self.shard_ports = self.start_redis(SHARDS)
            self.router_port, self.santral_process = self.start_santral("santral")
        else:
            self.shard_ports = self.start_redis(1)
            self.router_port = self.shard_ports[0]
        self.router = Client(self.router_port, "harness", protocol=2)

    def stop(self):
        for c in list(self._direct.values()) + [getattr(self, "router", None)]:
            if c:
                c.close()
        for p in reversed(self.processes):
            if p.poll() is None:
                p.terminate()
        for p in self.processes:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

    def direct(self, port, *args):
        """A command sent straight to a server (reconnecting once if a check killed the link)."""
        for attempt in (0, 1):
            c = self._direct.get(port)
            if c is None:
                c = self._direct[port] = Client(port, f"direct:{port}", protocol=2)
            try:
                return c.call(*args)
            except (ConnectionLost, OSError):
                c.close()
                del self._direct[port]
                if attempt:
                    raise

    def direct_pipeline(self, port, commands):
        c = self._direct.get(port)
        if c is None:
            self.direct(port, "PING")
            c = self._direct[port]
        c.send(*commands)
        return [c.reply() for _ in commands]

    def owner(self, key):
        """The shard that holds key (which must exist): asks every shard."""
        if key in self._owner:
            return self._owner[key]
        if not self.santral:
            self._owner[key] = self.shard_ports[0]
            return self.shard_ports[0]
        holders = [p for p in self.shard_ports if self.direct(p, "EXISTS", key) == 1]
        if len(holders) != 1:
            raise CheckFailed(f"key {key!r} written through Santral is on {len(holders)} shards "
                              f"({holders}), expected exactly one")
        self._owner[key] = holders[0]
        return holders[0]

    def shard_name(self, port):
        return f"shard{self.shard_ports.index(port)}" if self.santral else f"redis:{port}"

    def place(self, prefix, per_group=1, value="seed"):
        """Keys `prefix<n>` written through the router, per_group of them on each of the 3
        shards (in --direct mode 3 groups on the one server): [(port, [keys]), ...]."""
        if not self.santral:
            groups = []
            for g in range(SHARDS):
                keys = [f"{prefix}{g}.{j}" for j in range(per_group)]
                for k in keys:
                    expect(self.router.call("SET", k, value), "OK", f"SET {k}")
                    self._owner[k] = self.shard_ports[0]
                groups.append((self.shard_ports[0], keys))
            return groups
        found = {p: [] for p in self.shard_ports}
        n = 0
        while any(len(v) < per_group for v in found.values()):
            if n > 2000:
                raise CheckFailed(f"could not place keys {prefix}* on every shard: {found}")
            k = f"{prefix}{n}"
            n += 1
            expect(self.router.call("SET", k, value), "OK", f"SET {k} through Santral")
            p = self.owner(k)
            if len(found[p]) < per_group:
                found[p].append(k)
        return [(p, found[p]) for p in self.shard_ports]

    def consecutive_clients(self, name, count, protocol=2):
        """count connections opened one after another: Santral accepts connections round-robin
        over its workers, so with workers: 2 two consecutive ones are on different workers."""
        out = []
        for i in range(count):
            c = Client(self.router_port, f"{name}{i}", protocol=protocol)
            c.call("PING")
            out.append(c)
        return out


# ---- the checks -------------------------------------------------------------------------------

def check_default_mode(cl):
    """Default mode: GET caches; a SET through another client (one on each worker), a SET
    directly on the shard holding the key and the client's own SET each send an invalidate
    push; keys on all 3 shards."""
    c = Client(cl.router_port, "cacher")
    track(c)
    writers = cl.consecutive_clients("writer", 2)
    ids = [w.call("CLIENT", "ID") for w in writers]
    for port, (key,) in cl.place("default:"):
        where = f"key {key!r} on {cl.shard_name(port)}"
        for w, wid in zip(writers, ids):
            cached_get(c, key)
            since = len(c.pushes)
            expect(w.call("SET", key, f"by-{w.name}"), "OK", f"{w.name}: SET {key}")
            expect_push(c, key, since, f"{where}: SET through another client ({w.name}, client "
                                       f"id {wid})")
            if key in c.cache:
                raise CheckFailed(f"{where}: still cached after its invalidation")
            expect(cached_get(c, key), f"by-{w.name}", f"{where}: GET after {w.name}'s SET")
        since = len(c.pushes)
        expect(cl.direct(port, "SET", key, "by-shard"), "OK", f"SET {key} on the shard")
        expect_push(c, key, since, f"{where}: SET directly on the shard")
        expect(cached_get(c, key), "by-shard", f"{where}: GET after the shard's SET")
        since = len(c.pushes)
        expect(c.call("SET", key, "own"), "OK", f"{c.name}: SET {key}")
        expect_push(c, key, since, f"{where}: the tracking client's own SET (no NOLOOP)")
    c.drain()
    return f"{c.invalidated_keys} invalidations over {SHARDS} shards, writer ids {ids}"


def check_optin(cl):
    """OPTIN: a read without CLIENT CACHING yes is not tracked; one right after it is; the yes
    applies to the next command only, or to a whole MULTI ... EXEC."""
    c = Client(cl.router_port, "optin")
    track(c, "OPTIN")
    w = Client(cl.router_port, "writer", protocol=2)
    for port, (plain, cached, after, m1, m2) in cl.place("optin:", 5):
        where = cl.shard_name(port)
        since = len(c.pushes)
        not_error(c.call("GET", plain), f"GET {plain}")          # not tracked
        c.send(("CLIENT", "CACHING", "yes"), ("GET", cached), ("GET", after))
        expect(c.reply(), "OK", "CLIENT CACHING yes")
        c.cache[cached] = not_error(c.reply(), f"GET {cached}")  # tracked
        not_error(c.reply(), f"GET {after}")                     # not tracked: yes was used up
        c.send(("CLIENT", "CACHING", "yes"), ("MULTI",), ("GET", m1), ("GET", m2), ("EXEC",))
        for what, wanted in (("CLIENT CACHING yes", "OK"), ("MULTI", "OK"),
                             (f"GET {m1} in MULTI", "QUEUED"), (f"GET {m2} in MULTI", "QUEUED")):
            expect(c.reply(), wanted, what)
        execed = c.reply()
        if not isinstance(execed, list) or len(execed) != 2:
            raise CheckFailed(f"{where}: EXEC of two GETs answered {execed!r}")
        for k in (plain, after, m1, m2, cached):  # the last key's push fences the others
            expect(w.call("SET", k, "new"), "OK", f"SET {k}")
        expect_push(c, cached, since, f"{where}: OPTIN read after CLIENT CACHING yes, then SET")
        for k in (m1, m2):
            expect_push(c, k, since, f"{where}: OPTIN, CLIENT CACHING yes then MULTI, GET {m1}, "
                                     f"GET {m2}, EXEC: SET {k}")
        forbid_push(c, [plain], since, f"{where}: OPTIN read without CLIENT CACHING yes")
        forbid_push(c, [after], since, f"{where}: OPTIN, the read after the one CLIENT "
                                       "CACHING yes applied to")
    c.drain()
    return f"{c.invalidated_keys} invalidations"


def check_optout(cl):
    """OPTOUT: every read is tracked except the one right after CLIENT CACHING no."""
    c = Client(cl.router_port, "optout")
    track(c, "OPTOUT")
    w = Client(cl.router_port, "writer", protocol=2)
    for port, (exempt, tracked) in cl.place("optout:", 2):
        where = cl.shard_name(port)
        since = len(c.pushes)
        c.send(("CLIENT", "CACHING", "no"), ("GET", exempt), ("GET", tracked))
        expect(c.reply(), "OK", "CLIENT CACHING no")
        not_error(c.reply(), f"GET {exempt}")
        c.cache[tracked] = not_error(c.reply(), f"GET {tracked}")
        for k in (exempt, tracked):
            expect(w.call("SET", k, "new"), "OK", f"SET {k}")
        expect_push(c, tracked, since, f"{where}: OPTOUT read (no CLIENT CACHING no), then SET")
        forbid_push(c, [exempt], since, f"{where}: OPTOUT read right after CLIENT CACHING no")
    c.drain()
    return f"{c.invalidated_keys} invalidations"


def check_noloop(cl):
    """NOLOOP: the client's own write does not invalidate it; another client's write does."""
    c = Client(cl.router_port, "noloop")
    track(c, "NOLOOP")
    w = Client(cl.router_port, "writer", protocol=2)
    for port, (own, fence) in cl.place("noloop:", 2):
        where = cl.shard_name(port)
        cached_get(c, own)
        cached_get(c, fence)
        since = len(c.pushes)
        expect(c.call("SET", own, "mine"), "OK", f"{c.name}: SET {own}")
        expect(w.call("SET", fence, "theirs"), "OK", f"SET {fence}")
        expect_push(c, fence, since, f"{where}: NOLOOP, another client's SET")
        forbid_push(c, [own], since, f"{where}: NOLOOP, the client's own SET")
        # Redis forgets the key on a write, even one NOLOOP does not report: read it again.
        cached_get(c, own)
        since = len(c.pushes)
        expect(w.call("SET", own, "theirs"), "OK", f"SET {own}")
        expect_push(c, own, since, f"{where}: NOLOOP, another client's SET of a key the "
                                   "client had written itself and read again")
    c.drain()
    return f"{c.invalidated_keys} invalidations"


def check_bcast(cl):
    """BCAST PREFIX user: PREFIX acct: : a write to a key under a prefix invalidates without any
    read (through Santral and on the shard); a write under no prefix does not."""
    other = cl.place("other:")     # placed (written) before tracking starts
    users = cl.place("user:", 2)
    accts = cl.place("acct:")
    c = Client(cl.router_port, "bcast")
    track(c, "BCAST", "PREFIX", "user:", "PREFIX", "acct:")
    w = Client(cl.router_port, "writer", protocol=2)
    for (port, (o,)), (_, (u1, u2)), (_, (a,)) in zip(other, users, accts):
        where = cl.shard_name(port)
        since = len(c.pushes)
        expect(w.call("SET", o, "x"), "OK", f"SET {o}")
        expect(w.call("SET", u1, "x"), "OK", f"SET {u1}")
        expect_push(c, u1, since, f"{where}: BCAST PREFIX user:, SET {u1} through the router")
        forbid_push(c, [o], since, f"{where}: BCAST PREFIX user: PREFIX acct:, SET {o}")
        since = len(c.pushes)
        expect(cl.direct(port, "SET", u2, "x"), "OK", f"SET {u2} on the shard")
        expect_push(c, u2, since, f"{where}: BCAST PREFIX user:, SET {u2} directly on the shard")
        since = len(c.pushes)
        expect(w.call("SET", a, "x"), "OK", f"SET {a}")
        expect_push(c, a, since, f"{where}: BCAST's second PREFIX acct:, SET {a}")
    c.drain()
    return f"{c.invalidated_keys} invalidations"


def check_bcast_noloop(cl):
    """BCAST NOLOOP: the client's own writes (one key, an MSET over shards) do not invalidate it;
    another client's write of the same key right after does, through Santral and on the shard."""
    placed = cl.place("loop:", 2)   # placed (written) before tracking starts
    c = Client(cl.router_port, "bcast-noloop")
    track(c, "BCAST", "NOLOOP", "PREFIX", "loop:")
    w = Client(cl.router_port, "writer", protocol=2)
    for port, (own, theirs) in placed:
        where = cl.shard_name(port)
        since = len(c.pushes)
        expect(c.call("SET", own, "mine"), "OK", f"{c.name}: SET {own}")
        expect(w.call("SET", theirs, "x"), "OK", f"SET {theirs}")
        expect_push(c, theirs, since, f"{where}: BCAST NOLOOP, another client's SET")
        forbid_push(c, [own], since, f"{where}: BCAST NOLOOP, the client's own SET")
        since = len(c.pushes)
        expect(w.call("SET", own, "theirs"), "OK", f"SET {own}")
        expect_push(c, own, since, f"{where}: BCAST NOLOOP, another client's SET of a key the "
                                   "client wrote just before")
        since = len(c.pushes)
        expect(cl.direct(port, "SET", own, "shard"), "OK", f"SET {own} on the shard")
        expect_push(c, own, since, f"{where}: BCAST NOLOOP, a SET of {own} on the shard")
    owns = [k for _, (own, _) in placed for k in (own,)]
    since = len(c.pushes)
    mset = [a for k in owns for a in (k, "mine")]
    expect(c.call("MSET", *mset), "OK", f"{c.name}: MSET over {len(owns)} shards")
    expect(w.call("SET", "loop:fence", "x"), "OK", "SET loop:fence")
    expect_push(c, "loop:fence", since, "BCAST NOLOOP, another client's SET after an own MSET")
    c.drain()
    forbid_push(c, owns, since, "BCAST NOLOOP, the client's own MSET over shards")
    return f"{c.invalidated_keys} invalidations"


TRACKING_MODES = [
    [],
    ["OPTIN"],
    ["OPTOUT"],
    ["NOLOOP"],
    ["OPTIN", "NOLOOP"],
    ["BCAST"],
    ["BCAST", "PREFIX", "user:", "PREFIX", "acct:"],
    ["BCAST", "NOLOOP", "PREFIX", "user:"],
]


def tracking_transcript(port, options):
    """CLIENT TRACKINGINFO / GETREDIR before, in and after one tracking mode, normalised: flags
    as a sorted list, errors as their first word."""
    c = Client(port, "info")

    def norm(r):
        if isinstance(r, RespError):
            return "error " + r.split(" ", 1)[0]
        if isinstance(r, dict):
            r = dict(r)
            for f in ("flags", "prefixes"):
                if isinstance(r.get(f), list):
                    r[f] = sorted(r[f])
        return r

    steps = [("CLIENT", "TRACKINGINFO"), ("CLIENT", "GETREDIR"),
             ("CLIENT", "TRACKING", "ON", *options), ("CLIENT", "TRACKINGINFO"),
             ("CLIENT", "GETREDIR"), ("CLIENT", "CACHING", "yes"), ("CLIENT", "TRACKINGINFO"),
             ("GET", "info:k"), ("CLIENT", "TRACKINGINFO"), ("CLIENT", "CACHING", "no"),
             ("CLIENT", "TRACKINGINFO"), ("GET", "info:k"), ("CLIENT", "TRACKING", "OFF"),
             ("CLIENT", "TRACKINGINFO"), ("CLIENT", "GETREDIR")]
    out = []
    for s in steps:
        raw = c.call(*s)
        out.append((" ".join(s), norm(raw), raw))
    c.close()
    return out


def expected_flags(options):
    mode = [o.lower() for o in options if o in ("OPTIN", "OPTOUT", "BCAST", "NOLOOP")]
    return sorted(["on"] + mode)


def check_cross_shard_read(cl):
    """A read whose keys live on several shards (SUNION, SINTERCARD: merged by Santral from one
    fetch per key) is tracked for every one of its keys: a write to any of them, through the
    router or on the shard, sends the invalidation."""
    c = Client(cl.router_port, "gatherer")
    track(c)
    w = Client(cl.router_port, "gather-writer")
    groups = cl.place("gset:")
    keys = [ks[0] for _, ks in groups]
    for k in keys:
        not_error(w.call("DEL", k), f"DEL {k}")
        expect(w.call("SADD", k, f"m-{k}", "common"), 2, f"SADD {k}")
    pushes = 0
    for port, (k,) in groups:
        for read in (["SUNION", *keys], ["SINTERCARD", str(len(keys)), *keys]):
            before = len(c.pushes)
            r = not_error(c.call(*read), read[0])
            expect(c.call("PING"), "PONG", "PING after the read")
            # Kept, not invalidated at once: no push before a write.
            forbid_push(c, keys, before, f"{read[0]} of keys on different shards, no write yet")
            if read[0] == "SUNION":
                expect(sorted(r), sorted(["common"] + [f"m-{x}" for x in keys]), "SUNION")
            else:
                expect(r, 1, "SINTERCARD")
            since = len(c.pushes)
            expect(w.call("SADD", k, "extra"), 1, f"SADD {k} extra")
            expect_push(c, k, since, f"{read[0]} of keys on {len(keys)} shard(s), then SADD {k}")
            since = len(c.pushes)
            r = not_error(c.call(*read), read[0])
            expect(cl.direct(port, "SREM", k, "extra"), 1, f"SREM {k} on its shard")
            expect_push(c, k, since, f"{read[0]}, then SREM {k} directly on the shard")
            pushes += 2
    c.drain()
    return f"{pushes} invalidations for reads of {len(keys)} keys on different shards"


def check_trackinginfo(cl):
    """CLIENT TRACKINGINFO and GETREDIR in every mode: the values Redis gives (off: flags [off],
    redirect -1, GETREDIR -1; on: flags on + the mode, redirect 0, GETREDIR 0, prefixes as
    given); through Santral, the whole transcript equals a shard's own."""
    compared = 0
    for options in TRACKING_MODES:
        mine = tracking_transcript(cl.router_port, options)
        label = " ".join(["CLIENT TRACKING ON", *options])
        off = {"flags": ["off"], "redirect": -1, "prefixes": []}
        expect(mine[0][1], off,
               f"{label}: CLIENT TRACKINGINFO before tracking")
        expect(mine[1][1], -1, f"{label}: CLIENT GETREDIR before tracking")
        expect(mine[2][2], "OK", label)
        prefixes = sorted(o for i, o in enumerate(options) if i and options[i - 1] == "PREFIX")
        if "BCAST" in options and not prefixes:
            prefixes = [""]     # Redis: BCAST without PREFIX is the empty prefix
        on = {"flags": expected_flags(options), "redirect": 0, "prefixes": prefixes}
        expect(mine[3][1], on, f"{label}: CLIENT TRACKINGINFO")
        expect(mine[4][1], 0, f"{label}: CLIENT GETREDIR while tracking")
        optin = "OPTIN" in options
        expect(mine[5][1] == "OK", optin, f"{label}: CLIENT CACHING yes accepted")
        if optin:
            expect("caching-yes" in mine[6][1]["flags"], True,
                   f"{label}: caching-yes in TRACKINGINFO after CLIENT CACHING yes")
            expect("caching-yes" in mine[8][1]["flags"], False,
                   f"{label}: caching-yes in TRACKINGINFO after the GET it applied to")
        expect(mine[9][1] == "OK", "OPTOUT" in options, f"{label}: CLIENT CACHING no accepted")
        expect(mine[12][1], "OK", f"{label}: CLIENT TRACKING OFF")
        expect(mine[13][1], off, f"{label}: CLIENT TRACKINGINFO after OFF")
        expect(mine[14][1], -1, f"{label}: CLIENT GETREDIR after OFF")
        if cl.santral:
            theirs = tracking_transcript(cl.shard_ports[0], options)
            for (step, a, _), (_, b, _) in zip(mine, theirs):
                if a != b:
                    raise CheckFailed(f"{label}: {step} answered {a!r} through Santral, {b!r} "
                                      "from redis-server")
            compared += 1
    return f"{len(TRACKING_MODES)} modes" + (f", {compared} compared with redis-server's answers"
                                              if cl.santral else "")


def check_tracking_off(cl):
    """CLIENT TRACKING OFF: a key read while tracking and written after OFF sends nothing."""
    c = Client(cl.router_port, "off")
    track(c)
    w = Client(cl.router_port, "writer", protocol=2)
    groups = cl.place("off:", 2)
    for _, (k, _) in groups:
        cached_get(c, k)
    expect(c.call("CLIENT", "TRACKING", "OFF"), "OK", "CLIENT TRACKING OFF")
    since = len(c.pushes)
    for port, (k, _) in groups:
        expect(w.call("SET", k, "after-off"), "OK", f"SET {k}")
        expect(cl.direct(port, "SET", k, "after-off-on-shard"), "OK", f"SET {k} on the shard")
    # Fence: tracking on again, a read of a second key on each shard and a write of it; its
    # push comes after any (wrong) push for the first key on that shard.
    track(c)
    for port, (k, fence) in groups:
        cached_get(c, fence)
        expect(w.call("SET", fence, "x"), "OK", f"SET {fence}")
        expect_push(c, fence, since, f"{cl.shard_name(port)}: tracking on again, SET {fence}")
        forbid_push(c, [k], since, f"{cl.shard_name(port)}: SET {k} after CLIENT TRACKING OFF")
    c.drain()
    return "no push after OFF"


def check_flushall(cl):
    """FLUSHALL and FLUSHDB through another client, and FLUSHDB directly on a shard, send the
    null invalidation, which clears the cache."""
    c = Client(cl.router_port, "flush")
    track(c)
    w = Client(cl.router_port, "writer", protocol=2)
    results = []
    for how in ("FLUSHALL", "FLUSHDB", "shard FLUSHDB"):
        groups = cl.place(f"flush{len(results)}:")
        for _, (k,) in groups:
            cached_get(c, k)
        since = len(c.pushes)
        if how.startswith("shard"):
            port = groups[0][0]
            expect(cl.direct(port, "FLUSHDB"), "OK", f"FLUSHDB on {cl.shard_name(port)}")
        else:
            expect(w.call(how), "OK", how)
        if not c.wait_for(lambda: None in c.pushes[since:]):
            raise CheckFailed(f"{how}: no null invalidation within {PUSH_TIMEOUT:.0f} s (pushes: "
                              f"{c.pushes[since:][:5]!r})")
        if c.cache:
            raise CheckFailed(f"{how}: cache not empty after the null invalidation: {c.cache}")
        c.drain()
        results.append(f"{how}: {sum(p is None for p in c.pushes[since:])} null")
    return ", ".join(results)


def check_flush_in_multi(cl):
    """MULTI FLUSHDB EXEC from a tracking client with keys cached from every shard: EXEC answers
    [OK], then one null invalidation comes, as from one Redis (through Santral every shard ran
    FLUSHDB and each lane said so)."""
    fences = [k for _, (k,) in cl.place("mflush-fence:")]
    groups = cl.place("mflush:")
    c = Client(cl.router_port, "multi-flush")
    track(c)
    for _, (k,) in groups:
        cached_get(c, k)
    since = len(c.pushes)
    expect(c.call("MULTI"), "OK", "MULTI")
    expect(c.call("FLUSHDB"), "QUEUED", "FLUSHDB in MULTI")
    expect(c.call("EXEC"), ["OK"], "EXEC of MULTI FLUSHDB")
    if not c.wait_for(lambda: None in c.pushes[since:]):
        raise CheckFailed(f"MULTI FLUSHDB EXEC: no null invalidation within {PUSH_TIMEOUT:.0f} s")
    drain_through_shards(cl, c, fences)
    nulls = sum(p is None for p in c.pushes[since:])
    if nulls != 1:
        raise CheckFailed(f"MULTI FLUSHDB EXEC: {nulls} null invalidations, expected 1")
    return "EXEC [OK], then 1 null invalidation"


def check_reads_in_multi(cl):
    """A read inside MULTI is tracked as outside it: after EXEC only the key the transaction
    wrote is invalidated (as from one Redis), and a later write of the key it read is told."""
    fences = [k for _, (k,) in cl.place("mread-fence:")]
    a, b = "{mread}a", "{mread}b"
    w = Client(cl.router_port, "writer", protocol=2)
    expect(w.call("MSET", a, "1", b, "2"), "OK", "MSET")
    c = Client(cl.router_port, "multi-reads")
    track(c)
    cached_get(c, a)
    since = len(c.pushes)
    expect(c.call("MULTI"), "OK", "MULTI")
    expect(c.call("INCR", a), "QUEUED", "INCR in MULTI")
    expect(c.call("GET", b), "QUEUED", "GET in MULTI")
    expect(c.call("EXEC"), [2, "2"], "EXEC")
    c.cache[b] = "2"
    expect_push(c, a, since, "MULTI INCR a GET b EXEC: the write of a")
    drain_through_shards(cl, c, fences)
    forbid_push(c, [b], since, "MULTI INCR a GET b EXEC: b was only read")
    since = len(c.pushes)
    expect(w.call("SET", b, "3"), "OK", f"SET {b}")
    expect_push(c, b, since, "a write of the key read inside MULTI")
    return "a invalidated after EXEC, b only when written"


def final_compare(cl, clients, what):
    """Every cached value of every client equals what its shard holds now (no writes are
    running). A mismatch may wait LATE_WAIT s for its push; then it is stale. Returns the number
    of values that needed that wait."""
    keys = sorted({k for c in clients for k in c.cache})
    actual = {}
    by_port = {}
    for k in keys:
        by_port.setdefault(cl.owner(k), []).append(k)
    for port, ks in by_port.items():
        for k, v in zip(ks, cl.direct_pipeline(port, [("GET", k) for k in ks])):
            actual[k] = v
    late = 0
    for c in clients:
        stale = {k: v for k, v in c.cache.items() if v != actual[k]}
        if not stale:
            continue
        c.wait_for(lambda: all(c.cache.get(k, actual[k]) == actual[k] for k in stale), LATE_WAIT)
        still = {k: v for k, v in c.cache.items() if k in stale and v != actual[k]}
        late += len(stale) - len(still)
        if still:
            sample = ", ".join(f"{k!r}: cached {v!r}, {cl.shard_name(cl.owner(k))} holds "
                               f"{actual[k]!r}" for k, v in list(still.items())[:5])
            raise CheckFailed(f"{what}: {c.name} holds {len(still)} stale value(s) after the "
                              f"writers stopped and its pushes were drained: {sample}")
    return late


def wait_expiries(cl, keys, timeout=5):
    """Until no key has a TTL left (PTTL also expires due keys, which sends their pushes)."""
    by_port = {}
    for k in keys:
        by_port.setdefault(cl.owner(k), []).append(k)
    deadline = time.monotonic() + timeout
    while True:
        pending = 0
        for port, ks in by_port.items():
            pending += sum(1 for t in cl.direct_pipeline(port, [("PTTL", k) for k in ks])
                           if isinstance(t, int) and t >= 0)
        if not pending:
            return
        if time.monotonic() > deadline:
            raise CheckFailed(f"{pending} keys still have a TTL {timeout} s after the writers "
                              "stopped")
        time.sleep(0.05)


def drain_through_shards(cl, c, fences):
    """PING, plus a read of a key on each shard nobody writes, so that through Santral the
    reply comes after whatever each shard sent before it."""
    c.send(*[("GET", f) for f in fences], ("PING",))
    for _ in fences:
        not_error(c.reply(what="a drain GET"), "drain GET")
    expect(c.reply(what="PONG"), "PONG", f"{c.name}: PING")


def check_ordering(cl, rng, rounds=10, round_s=0.15):
    """A client pipelines GETs of one key per shard while two writers (through the router and
    directly on the shards) SET them in a loop; after each round's writes stop and the pushes
    are drained, the client's cached values equal the shards'. Cache on reply, drop on push: a
    push that overtakes a reply it follows leaves a stale value. One reader in default mode,
    one OPTIN (CLIENT CACHING yes before every GET)."""
    groups = cl.place("order:", 2)
    keys = [ks[0] for _, ks in groups]
    fences = [ks[1] for _, ks in groups]
    readers = [Client(cl.router_port, "order-default"), Client(cl.router_port, "order-optin")]
    track(readers[0])
    track(readers[1], "OPTIN")
    errors = []
    total = {"reads": 0, "writes": 0}

    def write_loop(stop, direct, seed):
        r = random.Random(seed)
        w = None if direct else Client(cl.router_port, "order-writer", protocol=2)
        conns = ({p: Client(p, f"order-direct:{p}", protocol=2) for p in cl.shard_ports}
                 if direct else {})
        n = 0
        try:
            while not stop.is_set():
                k = r.choice(keys)
                n += 1
                v = f"{seed}-{n}"
                reply = (conns[cl.owner(k)] if direct else w).call("SET", k, v)
                if reply != "OK":
                    raise CheckFailed(f"SET {k} answered {reply!r}")
            total["writes"] += n
        except Exception as e:  # noqa: BLE001 - reported by the check
            errors.append(f"writer: {e!r}")
        finally:
            for x in [w, *conns.values()]:
                if x:
                    x.close()

    late = 0
    for rnd in range(rounds):
        stop = threading.Event()
        threads = [threading.Thread(target=write_loop, args=(stop, d, rng.randrange(1 << 30)))
                   for d in (False, True)]
        for t in threads:
            t.start()
        end = time.monotonic() + round_s
        while time.monotonic() < end:
            for c in readers:
                batch = [rng.choice(keys) for _ in range(16)]
                optin = c is readers[1]
                cmds = []
                for k in batch:
                    if optin:
                        cmds.append(("CLIENT", "CACHING", "yes"))
                    cmds.append(("GET", k))
                c.send(*cmds)
                for k in batch:
                    if optin:
                        expect(c.reply(), "OK", "CLIENT CACHING yes")
                    c.cache[k] = not_error(c.reply(), f"{c.name}: GET {k}")
                total["reads"] += len(batch)
        stop.set()
        for t in threads:
            t.join(10)
        if errors:
            raise CheckFailed("; ".join(errors[:3]))
        for c in readers:
            drain_through_shards(cl, c, fences)
        late += final_compare(cl, readers, f"round {rnd}")
    pushes = sum(c.invalidated_keys for c in readers)
    if not pushes or not total["writes"]:
        raise CheckFailed(f"{total['reads']} reads and {total['writes']} writes brought no "
                          "invalidate push naming a key")
    note = f"; {late} value(s) waited for a push that came after the drain" if late else ""
    if late:
        print(f"  WARNING ordering: {late} invalidation(s) arrived after PING's reply", flush=True)
    return (f"{rounds} rounds, {total['reads']} reads, {total['writes']} writes, "
            f"{pushes} invalidations{note}")


def check_fuzz(cl, rng, seconds=5.0, nkeys=200):
    """6 caching clients (3 default, 3 OPTIN; some pipelining, one with MGET) read ~200 keys
    spread over the shards while 3 writers (2 through the router, 1 directly on the shards)
    SET/INCR/DEL/PEXPIRE (short)/SET PX/MSET; after they stop, short TTLs run out and every
    client's pushes are drained, every cached value equals what its shard holds."""
    keys = [f"fz:{i}" for i in range(nkeys)]
    for i in range(0, nkeys, 50):
        part = keys[i:i + 50]
        cl.router.send(*[("SET", k, "0") for k in part])
        for k in part:
            expect(cl.router.reply(), "OK", f"SET {k}")
    for k in keys:
        cl.owner(k)
    by_port = {}
    for k in keys:
        by_port.setdefault(cl.owner(k), []).append(k)
    if cl.santral and len(by_port) != SHARDS:
        raise CheckFailed(f"the {nkeys} keys are on {len(by_port)} shards, expected {SHARDS}")
    fences = [ks[0] for _, ks in cl.place("fzfence:")]
    hot = keys[:20]
    stop = threading.Event()
    errors = []
    stats = []

    def fail(who, e):
        errors.append(f"{who}: {e}" if isinstance(e, CheckFailed) else
                      f"{who}: {e!r}\n{traceback.format_exc()}")
        stop.set()

    def writer(name, direct, seed):
        r = random.Random(seed)
        conns = ({p: Client(p, f"{name}:{p}", protocol=2) for p in by_port} if direct
                 else {None: Client(cl.router_port, name, protocol=r.choice([2, 3]))})
        n = 0
        try:
            while not stop.is_set():
                port = r.choice(list(by_port)) if direct else None
                pool = by_port[port] if direct else keys
                cmds = []
                for _ in range(r.randint(1, 5)):
                    k = r.choice(pool) if r.random() < 0.5 else r.choice(
                        [h for h in hot if not direct or cl.owner(h) == port] or pool)
                    op = r.random()
                    if op < 0.30:
                        cmds.append(("SET", k, r.randrange(1000)))
                    elif op < 0.50:
                        cmds.append(("INCR", k))
                    elif op < 0.60:
                        cmds.append(("DEL", k))
                    elif op < 0.70:
                        cmds.append(("PEXPIRE", k, r.randint(5, 150)))
                    elif op < 0.75:
                        cmds.append(("SET", k, r.randrange(1000), "PX", r.randint(5, 150)))
                    else:
                        ks = r.sample(pool, 3)
                        args = ["MSET"]
                        for x in ks:
                            args += [x, r.randrange(1000)]
                        cmds.append(tuple(args))
                c = conns[port]
                c.send(*cmds)
                for cmd in cmds:
                    rep = c.reply()
                    if isinstance(rep, RespError) and not (cmd[0] == "INCR" and "integer" in rep):
                        raise CheckFailed(f"{' '.join(map(str, cmd))} answered {rep!r}")
                n += len(cmds)
            stats.append((name, "writes", n))
        except Exception as e:  # noqa: BLE001
            fail(name, e)

    def cacher(c, optin, pipeline, mget, seed):
        r = random.Random(seed)
        reads = hits = 0
        try:
            while not stop.is_set():
                c.poll()
                cmds, plan = [], []
                for _ in range(r.randint(2, 8) if pipeline else 1):
                    k = r.choice(hot) if r.random() < 0.5 else r.choice(keys)
                    if k in c.cache and not any(k in p[1] for p in plan):
                        hits += 1
                        continue
                    if mget and r.random() < 0.3:
                        ks = list(dict.fromkeys([k, r.choice(keys), r.choice(keys)]))
                        cmds.append(("MGET", *ks))
                        plan.append(("mget", ks, True))
                        continue
                    cache_it = not optin or r.random() < 0.7
                    if optin and cache_it:
                        cmds.append(("CLIENT", "CACHING", "yes"))
                        plan.append(("ok", [], False))
                    cmds.append(("GET", k))
                    plan.append(("get", [k], cache_it))
                if not cmds:
                    continue
                c.send(*cmds)
                for kind, ks, cache_it in plan:
                    rep = c.reply()
                    if kind == "ok":
                        expect(rep, "OK", f"{c.name}: CLIENT CACHING yes")
                        continue
                    not_error(rep, f"{c.name}: {kind.upper()} {ks}")
                    values = rep if kind == "mget" else [rep]
                    if len(values) != len(ks):
                        raise CheckFailed(f"{c.name}: MGET {ks} answered {rep!r}")
                    reads += len(ks)
                    if cache_it:
                        for k, v in zip(ks, values):
                            c.cache[k] = v
            stats.append((c.name, "reads", reads, hits))
        except Exception as e:  # noqa: BLE001
            fail(c.name, e)

    modes = [(False, False, False), (False, True, False), (False, True, True),
             (True, False, False), (True, True, False), (True, True, False)]
    clients = []
    for i, (optin, pipeline, mget) in enumerate(modes):
        c = Client(cl.router_port, f"fz{i}-{'optin' if optin else 'default'}"
                                   f"{'-pipe' if pipeline else ''}{'-mget' if mget else ''}")
        track(c, *(["OPTIN"] if optin else []))
        clients.append((c, optin, pipeline, mget))
    threads = [threading.Thread(target=cacher, args=(c, o, p, m, rng.randrange(1 << 30)))
               for c, o, p, m in clients]
    threads += [threading.Thread(target=writer, args=(f"router-writer{i}", False,
                                                      rng.randrange(1 << 30))) for i in range(2)]
    threads.append(threading.Thread(target=writer, args=("shard-writer", True,
                                                         rng.randrange(1 << 30))))
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(15)
    if errors:
        raise CheckFailed("; ".join(errors[:3]))
    if any(t.is_alive() for t in threads):
        raise CheckFailed("a client thread did not stop")
    wait_expiries(cl, keys)
    cs = [c for c, *_ in clients]
    for c in cs:
        drain_through_shards(cl, c, fences)
    late = final_compare(cl, cs, "fuzz")
    reads = sum(s[2] for s in stats if s[1] == "reads")
    hits = sum(s[3] for s in stats if s[1] == "reads")
    writes = sum(s[2] for s in stats if s[1] == "writes")
    inval = sum(c.invalidated_keys for c in cs)
    nulls = sum(c.null_invalidations for c in cs)
    cached = sum(len(c.cache) for c in cs)
    for s in stats:
        print(f"    {s[0]}: {s[2]} {s[1]}" + (f", {s[3]} hits" if len(s) > 3 else ""), flush=True)
    if late:
        print(f"  WARNING fuzz: {late} invalidation(s) arrived after the drain's reply", flush=True)
    if reads == 0 or hits == 0 or inval == 0:
        raise CheckFailed(f"the fuzz did too little to mean anything: {reads} reads, {hits} hits, "
                          f"{inval} invalidations")
    return (f"{reads} reads, {hits} cache hits, {writes} writes, {inval} keys invalidated, "
            f"{nulls} null invalidations, {cached} values compared at the end"
            + (f", {late} late" if late else ""))


def check_max_keys(cl, limit=100, nkeys=300):
    """tracking_table_max_keys (Redis: tracking-table-max-keys): with a bound of 100, a client
    that reads 300 distinct keys gets invalidations for at least 200 of them with no write, and
    its later reads and invalidations still work."""
    if cl.santral:
        port, proc = cl.start_santral(
            "santral-maxkeys", f"limits:\n  tracking_table_max_keys: {limit}\n")
        restore = None
    else:
        port = cl.router_port
        restore = cl.direct(port, "CONFIG", "GET", "tracking-table-max-keys")[1]
        expect(cl.direct(port, "CONFIG", "SET", "tracking-table-max-keys", limit), "OK",
               "CONFIG SET tracking-table-max-keys")
    try:
        c = Client(port, "maxkeys")
        track(c)
        keys = [f"mk:{i}" for i in range(nkeys)]
        c.send(*[("GET", k) for k in keys])
        for k in keys:
            c.cache[k] = not_error(c.reply(), f"GET {k}")
        wanted = nkeys - limit
        got = lambda: len({k for p in c.pushes if p for k in p} & set(keys))  # noqa: E731
        deadline = time.monotonic() + 10
        while got() < wanted and time.monotonic() < deadline:
            c.drain()   # Redis evicts a little before each command
            c.wait_for(lambda: got() >= wanted, 0.1)
        n = got()
        if n < wanted:
            raise CheckFailed(f"with tracking_table_max_keys {limit}, {nkeys} keys read and no "
                              f"write: invalidations for only {n} of them (wanted >= {wanted}); "
                              f"null invalidations: {c.null_invalidations}")
        # Later reads and their invalidations still work.
        w = Client(port, "writer", protocol=2)
        k = keys[0]
        expect(w.call("SET", k, "after"), "OK", f"SET {k}")
        c.drain()
        expect(cached_get(c, k), "after", f"GET {k} after the evictions")
        since = len(c.pushes)
        expect(w.call("SET", k, "again"), "OK", f"SET {k}")
        expect_push(c, k, since, "a key read again after the evictions, then SET")
        return f"{n} of {nkeys} keys invalidated by the bound of {limit}"
    finally:
        if cl.santral:
            proc.terminate()
            proc.wait(10)
        if restore is not None:
            cl.direct(cl.router_port, "CONFIG", "SET", "tracking-table-max-keys", restore)


def check_lost_connection(cl):
    """Santral's connections to one shard are killed (CLIENT KILL TYPE normal on the shard): the
    caching client's next command (a GET of a key on that shard) is answered only after a null
    invalidation; once Santral reconnects, reads are tracked again."""
    c = Client(cl.router_port, "lost")
    track(c)
    groups = cl.place("lost:")
    for _, (k,) in groups:
        cached_get(c, k)
    c.drain()
    port, (key,) = groups[1]
    killer = Client(port, "killer", protocol=2)
    killed = killer.call("CLIENT", "KILL", "TYPE", "normal")
    killer.close()
    if not isinstance(killed, int) or killed < 1:
        raise CheckFailed(f"CLIENT KILL TYPE normal on {cl.shard_name(port)} answered {killed!r}")
    c.record = True
    c.events.clear()
    try:
        r = c.call("GET", key, timeout=10)
    except ConnectionLost:
        raise CheckFailed(f"after Santral's connections to {cl.shard_name(port)} were killed, "
                          f"Santral closed the client's connection (events {c.events[:4]!r}); "
                          "expected a null invalidation, then the reply") from None
    first = c.events[0] if c.events else None
    if not (first and first[0] == "push" and first[1] is None):
        raise CheckFailed(f"after Santral's connections to {cl.shard_name(port)} were killed "
                          f"({killed}), the next GET {key} was answered {r!r} with events "
                          f"{c.events[:4]!r}: expected a null invalidation before the reply")
    if c.cache:
        raise CheckFailed(f"cache not cleared by the null invalidation: {c.cache}")
    c.record = False
    deadline = time.monotonic() + 10
    while isinstance(r, RespError):
        if time.monotonic() > deadline:
            raise CheckFailed(f"GET {key} still answers {r!r} 10 s after the kill")
        time.sleep(0.1)
        r = c.call("GET", key)
    c.cache[key] = r
    since = len(c.pushes)
    expect(cl.direct(port, "SET", key, "after-reconnect"), "OK", f"SET {key} on the shard")
    expect_push(c, key, since, "a key read after Santral reconnected, then SET on the shard")
    return f"{killed} connections killed; null invalidation before the reply ({r!r})"


# Replies a RESP2 tracking client must get byte for byte as a RESP2 client that does not track
# (through Santral, its requests take RESP3 tracking lanes, and their replies are rewritten):
# (setup, command). Each command runs twice on the same data, the setup written before each.
R2 = "{r2}"
RESP2_REPLY_CASES = [
    ([("HSET", f"{R2}h", "f", "1", "g", "2")], ("HGETALL", f"{R2}h")),
    ([("SADD", f"{R2}s", "a", "b", "c")], ("SMEMBERS", f"{R2}s")),
    ([("ZADD", f"{R2}z", "1.1", "a", "2.5", "b", "3", "c")], ("ZSCORE", f"{R2}z", "a")),
    ([], ("GET", f"{R2}missing")),
    ([("HSET", f"{R2}h", "f", "1")], ("HMGET", f"{R2}h", "f", "nosuch")),
    ([], ("LPOP", f"{R2}missing")),
    ([], ("LPOP", f"{R2}missing", "2")),
    ([], ("RPOP", f"{R2}missing", "0")),
    ([("RPUSH", f"{R2}l", "a", "b", "c")], ("LPOP", f"{R2}l", "2")),
    ([], ("LMPOP", "1", f"{R2}missing", "LEFT")),
    ([("ZADD", f"{R2}z", "1.1", "a", "2.5", "b", "3", "c")],
     ("ZRANGE", f"{R2}z", "0", "-1", "WITHSCORES")),
    ([("ZADD", f"{R2}z", "1.1", "a", "2.5", "b")],
     ("ZRANGEBYSCORE", f"{R2}z", "-inf", "+inf", "WITHSCORES")),
    ([("ZADD", f"{R2}z", "1.1", "a", "2.5", "b")], ("ZREVRANGE", f"{R2}z", "0", "-1", "WITHSCORES")),
    ([("ZADD", f"{R2}z", "1.1", "a")], ("ZRANDMEMBER", f"{R2}z", "1", "WITHSCORES")),
    ([("HSET", f"{R2}h1", "f", "v")], ("HRANDFIELD", f"{R2}h1", "1", "WITHVALUES")),
    ([("ZADD", f"{R2}z", "1.1", "a", "2.5", "b", "3", "c")], ("ZPOPMIN", f"{R2}z", "2")),
    ([("ZADD", f"{R2}z", "1.1", "a", "2.5", "b")], ("ZPOPMAX", f"{R2}z")),
    ([("ZADD", f"{R2}z", "1.1", "a", "2.5", "b")], ("ZMPOP", "1", f"{R2}z", "MIN", "COUNT", "2")),
    ([("ZADD", f"{R2}z", "1", "a", "2", "b"), ("ZADD", f"{R2}z2", "3", "b", "4", "d")],
     ("ZUNION", "2", f"{R2}z", f"{R2}z2", "WITHSCORES")),
    ([("ZADD", f"{R2}z", "1", "a")], ("ZINCRBY", f"{R2}z", "1.5", "a")),
    ([("ZADD", f"{R2}z", "1", "a")], ("ZADD", f"{R2}z", "NX", "INCR", "1", "a")),
    ([("SET", f"{R2}f", "1.5")], ("INCRBYFLOAT", f"{R2}f", "0.1")),
    ([("XADD", f"{R2}x", "1-1", "f", "v"), ("XADD", f"{R2}x", "2-1", "g", "w")],
     ("XREAD", "STREAMS", f"{R2}x", "0")),
    ([], ("XREAD", "STREAMS", f"{R2}missing", "0")),
    ([("XADD", f"{R2}x", "1-1", "f", "v"), ("XADD", f"{R2}x", "2-1", "g", "w"),
      ("XGROUP", "CREATE", f"{R2}x", "g", "0"),
      ("XREADGROUP", "GROUP", "g", "c", "STREAMS", f"{R2}x", ">"), ("XDEL", f"{R2}x", "1-1")],
     ("XREADGROUP", "GROUP", "g", "c", "STREAMS", f"{R2}x", "0")),
    ([("XADD", f"{R2}x", "1-1", "f", "v")], ("XINFO", "STREAM", f"{R2}x")),
    ([("GEOADD", f"{R2}g", "13.361389", "38.115556", "a")], ("GEOPOS", f"{R2}g", "a", "nosuch")),
    ([("GEOADD", f"{R2}g", "13.361389", "38.115556", "a", "15.087269", "37.502669", "b")],
     ("GEODIST", f"{R2}g", "a", "b")),
    ([], ("SPOP", f"{R2}missing")),
    ([], ("SPOP", f"{R2}missing", "2")),
    ([], ("LPOS", f"{R2}missing", "a")),
    ([], ("OBJECT", "ENCODING", f"{R2}missing")),
    ([], ("HRANDFIELD", f"{R2}missing")),
    ([], ("EVAL", "return {1, 'x', 2.5}", "0")),
    ([], ("EVAL", "return false", "0")),
    ([("SET", "r2:a", "1"), ("SET", "r2:b", "2")], ("MGET", "r2:a", "r2:missing", "r2:b")),
]
R2_KEYS = [f"{R2}{k}" for k in ("s", "z", "z2", "h", "h1", "l", "f", "x", "g")] + ["r2:a", "r2:b"]


def check_resp2_replies(cl):
    """A RESP2 client tracking with REDIRECT gets every reply byte for byte as a RESP2 client
    that does not track: maps, sets, doubles, null bulks and null arrays, WITHSCORES pairs,
    XREAD's streams, a split MGET (through Santral the tracking client's replies come over
    RESP3 lanes)."""
    s = Client(cl.router_port, "r2-sub", protocol=2)
    t = Client(cl.router_port, "r2-tracker", protocol=2)
    u = Client(cl.router_port, "r2-plain", protocol=2)
    track(t, "REDIRECT", str(s.call("CLIENT", "ID")))
    for setup, command in RESP2_REPLY_CASES:
        got = []
        for c in (t, u):
            expect(u.call("DEL", *R2_KEYS) is not None, True, "DEL")
            for step in setup:
                not_error(u.call(*step), " ".join(step))
            got.append(c.raw_call(*command))
        if got[0] != got[1]:
            raise CheckFailed(f"{' '.join(command)}: the tracking RESP2 client got {got[0]!r}, "
                              f"a RESP2 client that does not track {got[1]!r}")
    s.close()
    return f"{len(RESP2_REPLY_CASES)} commands' replies equal"


def next_message(c, what, timeout=PUSH_TIMEOUT):
    m = c.reply(timeout, what=what)
    if not (isinstance(m, list) and len(m) == 3 and m[0] == "message"):
        raise CheckFailed(f"{c.name}: {what}: got {m!r}, not a pub/sub message")
    return m


def check_redirect(cl):
    """CLIENT TRACKING ON REDIRECT <id>: a RESP2 tracking client's invalidations reach a RESP2
    client subscribed to __redis__:invalidate as messages (one target on the same worker, one
    on the other), a RESP3 target as pushes; a key that expires is told too; FLUSHALL sends the
    null; TRACKINGINFO and GETREDIR
    name the target; a target that closed makes TRACKINGINFO say broken_redirect and a RESP3
    tracking client get tracking-redir-broken; a missing id, a second REDIRECT and a non-number
    are refused as Redis refuses them."""
    sub, t1, t2 = cl.consecutive_clients("redir", 3)
    sub_id = sub.call("CLIENT", "ID")
    expect(sub.call("SUBSCRIBE", "__redis__:invalidate"), ["subscribe", "__redis__:invalidate", 1],
           "SUBSCRIBE __redis__:invalidate")
    target3 = Client(cl.router_port, "redir-resp3")
    t3 = Client(cl.router_port, "redir-t3", protocol=2)
    for t in (t1, t2):
        track(t, "REDIRECT", str(sub_id))
        expect(t.call("CLIENT", "GETREDIR"), sub_id, f"{t.name}: CLIENT GETREDIR")
        info = t.call("CLIENT", "TRACKINGINFO")
        expect(info[info.index("redirect") + 1], sub_id, f"{t.name}: TRACKINGINFO redirect")
    track(t3, "REDIRECT", str(target3.call("CLIENT", "ID")))
    w = Client(cl.router_port, "redir-writer", protocol=2)
    told = 0
    for port, keys in cl.place("redir:", 3):
        for t, key in zip((t1, t2, t3), keys):
            expect(t.call("GET", key), "seed", f"{t.name}: GET {key}")
        for key in keys:
            expect(w.call("SET", key, "new"), "OK", f"SET {key}")
        where = cl.shard_name(port)
        got = {tuple(next_message(sub, f"the invalidations of {keys[:2]} on {where}")[2] or ())
               for _ in range(2)}
        expect(got, {(keys[0],), (keys[1],)}, f"{where}: messages on __redis__:invalidate")
        since = len(target3.pushes)
        expect_push(target3, keys[2], since, f"{where}: a RESP2 tracker redirecting to RESP3")
        told += 3
    # A key that expires invalidates too, once its shard deletes it.
    (_, (key,)), *_ = cl.place("redir-expire:", 1)
    expect(w.call("SET", key, "short", "PX", "200"), "OK", f"SET {key} PX 200")
    expect(t1.call("GET", key), "short", f"{t1.name}: GET {key}")
    expect(next_message(sub, f"the invalidation of {key} when it expires")[2], [key],
           f"{key} expired: message on __redis__:invalidate")
    told += 1
    # FLUSHALL: the null invalidation (a RESP2 tracker's: a null bulk in the message).
    for port, keys in cl.place("redir-flush:", 1):
        t1.call("GET", keys[0])
    since = len(target3.pushes)
    t3.call("GET", "redir-flush:x")
    expect(w.call("FLUSHALL"), "OK", "FLUSHALL")
    m = next_message(sub, "the null invalidation after FLUSHALL")
    expect(m[2], None, "FLUSHALL's message on __redis__:invalidate")
    if not target3.wait_for(lambda: None in target3.pushes[since:]):
        raise CheckFailed(f"FLUSHALL: the RESP3 target got no null invalidation "
                          f"({target3.pushes[since:][:4]!r})")
    # A target that goes: broken_redirect, and a RESP3 tracker is told.
    gone = Client(cl.router_port, "redir-gone", protocol=2)
    gone_id = gone.call("CLIENT", "ID")
    t4 = Client(cl.router_port, "redir-t4")
    track(t4, "REDIRECT", str(gone_id))
    (_, (key,)), *_ = cl.place("redir-broken:", 1)
    t4.call("GET", key)
    gone.close()
    deadline = time.monotonic() + PUSH_TIMEOUT
    while w.call("CLIENT", "LIST", "ID", str(gone_id)) and time.monotonic() < deadline:
        time.sleep(0.05)
    expect(w.call("SET", key, "after"), "OK", f"SET {key}")
    if not t4.wait_for(lambda: any(p[:1] == ["tracking-redir-broken"] for p in t4.other_pushes)):
        raise CheckFailed(f"{t4.name}: no tracking-redir-broken push (other pushes "
                          f"{t4.other_pushes[:4]!r})")
    expect([p[1] for p in t4.other_pushes if p[:1] == ["tracking-redir-broken"]][:1], [gone_id],
           "tracking-redir-broken names the gone client")
    info = t4.call("CLIENT", "TRACKINGINFO")
    flags = info["flags"]
    if "broken_redirect" not in flags:
        raise CheckFailed(f"{t4.name}: TRACKINGINFO flags {flags!r} lack broken_redirect")
    errors = []
    for args, wanted in [
            (("REDIRECT", str(gone_id)), "ERR The client ID you want redirect to does not exist"),
            (("REDIRECT", "0"), "ERR The client ID you want redirect to does not exist"),
            (("REDIRECT", str(sub_id), "REDIRECT", str(sub_id)),
             "ERR A client can only redirect to a single other client"),
            (("REDIRECT", "x"), "ERR value is not an integer or out of range")]:
        r = w.call("CLIENT", "TRACKING", "ON", *args)
        expect(r, wanted, f"CLIENT TRACKING ON {' '.join(args)}")
        errors.append(r)
    expect(w.call("CLIENT", "GETREDIR"), -1, "GETREDIR after the refusals")
    return f"{told} invalidations redirected, FLUSHALL's null, broken_redirect, 4 refusals"


def check_ping_after_write(cl, rounds=200):
    """A PING right after another client's write is answered after that write's invalidation,
    as on one Redis (Redis's unit/tracking PINGs so and reads the push first). Through Santral
    PING is answered by the router: a tracking client's PING waits for a PING down each
    connection its invalidations come on. Default mode, BCAST, and RESP3 with REDIRECT to a
    client that is gone (each invalidation brings a tracking-redir-broken push); writers on both
    workers, keys on every shard; each round, the three PINGs are sent at once."""
    keys = [k for _, ks in cl.place("pingorder:", 2) for k in ks]
    writers = cl.consecutive_clients("pingorder-writer", 2)
    default = Client(cl.router_port, "pingorder-default")
    track(default)
    bcast = Client(cl.router_port, "pingorder-bcast")
    track(bcast, "BCAST", "PREFIX", "pingorder:")
    gone = Client(cl.router_port, "pingorder-gone", protocol=2)
    gone_id = gone.call("CLIENT", "ID")
    redirect = Client(cl.router_port, "pingorder-redirect")
    track(redirect, "REDIRECT", str(gone_id))
    gone.close()
    deadline = time.monotonic() + PUSH_TIMEOUT
    while writers[0].call("CLIENT", "LIST", "ID", str(gone_id)):  # polled: nothing says when
        if time.monotonic() > deadline:
            raise CheckFailed(f"client {gone_id} still listed {PUSH_TIMEOUT:.0f} s after closing")
        time.sleep(0.01)

    def broken(c, since):
        return any(p[:1] == ["tracking-redir-broken"] for p in c.other_pushes[since:])

    late = {c.name: 0 for c in (default, bcast, redirect)}
    for i in range(rounds):
        key = keys[i % len(keys)]
        for c in (default, redirect):
            cached_get(c, key)
        since = {c.name: len(c.pushes) for c in (default, bcast)}
        since_broken = len(redirect.other_pushes)
        expect(writers[i % 2].call("SET", key, f"v{i}"), "OK", f"SET {key}")
        told = {default.name: lambda: default.invalidated_since(since[default.name], key),
                bcast.name: lambda: bcast.invalidated_since(since[bcast.name], key),
                redirect.name: lambda: broken(redirect, since_broken)}
        for c in (default, bcast, redirect):
            c.send(("PING",))
        for c in (default, bcast, redirect):
            expect(c.reply(what="PONG"), "PONG", f"{c.name}: PING after SET {key}")
            if not told[c.name]():
                late[c.name] += 1
                if not c.wait_for(told[c.name]):
                    raise CheckFailed(f"{c.name}: no invalidation of {key} at all after its SET")
    if any(late.values()):
        raise CheckFailed(f"a PING right after another client's SET was answered before the "
                          f"SET's invalidation: {late} times in {rounds} rounds")
    return f"{rounds} rounds, 3 clients: every invalidation came before the PONG"


def check_off_after_write(cl, rounds=100):
    """CLIENT TRACKING OFF right after another client's write: the write's invalidation comes
    before OFF's reply, as on one Redis, which wrote it to the client when the write ran. Through
    Santral the invalidation is on its way from the shard when OFF arrives: OFF waits for a PING
    down each connection the client's invalidations come on, else it would drop it."""
    keys = [k for _, ks in cl.place("offorder:", 2) for k in ks]
    writers = cl.consecutive_clients("offorder-writer", 2)
    c = Client(cl.router_port, "offorder")
    late = 0
    for i in range(rounds):
        key = keys[i % len(keys)]
        track(c)
        cached_get(c, key)
        since = len(c.pushes)
        expect(writers[i % 2].call("SET", key, f"v{i}"), "OK", f"SET {key}")
        c.send(("CLIENT", "TRACKING", "OFF"))
        expect(c.reply(what="OFF"), "OK", f"CLIENT TRACKING OFF after SET {key}")
        if not c.invalidated_since(since, key):
            late += 1
    if late:
        raise CheckFailed(f"CLIENT TRACKING OFF right after another client's SET was answered "
                          f"before (or without) the SET's invalidation: {late} times in {rounds} "
                          f"rounds")
    return f"{rounds} rounds: every invalidation came before OFF's reply"


def run_node(cl, out):
    """node-redis 5's clientSideCache through the router (node_cache_test.mjs)."""
    for tool in ("node", "npm"):
        if not shutil.which(tool) and os.geteuid() == 0 and shutil.which("apt-get"):
            print("  node or npm is missing; installing nodejs npm with apt-get", flush=True)
            subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                            "nodejs", "npm"], stdout=subprocess.DEVNULL, check=False,
                           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    if not shutil.which("node") or not shutil.which("npm"):
        return "skip", "node and npm are not installed and could not be installed"
    installed = HERE / "node_modules" / "redis" / "package.json"
    lock = (HERE / "package-lock.json").read_text()
    version = installed.exists() and json.loads(installed.read_text())["version"]
    if not (version and f'"version": "{version}"' in lock):
        print("  installing node-redis into tests/clients/node_modules (npm ci)", flush=True)
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE,
                           capture_output=True, text=True, timeout=180)
        if r.returncode != 0:
            ping = subprocess.run(["npm", "ping"], cwd=HERE, capture_output=True, timeout=60)
            if ping.returncode != 0:
                return "skip", f"npm cannot reach its registry: {r.stderr.strip()[-300:]}"
            return "fail", f"npm ci failed: {r.stderr.strip()[-500:]}"
    groups = cl.place("node:", 2)
    keys = [{"key": k, "shard": f"redis://127.0.0.1:{p}"} for p, ks in groups for k in ks]
    env = dict(os.environ, REDIS_URL=f"redis://127.0.0.1:{cl.router_port}",
               NODE_KEYS=json.dumps(keys), SEED=str(out["seed"]))
    try:
        r = subprocess.run(["node", str(HERE / "node_cache_test.mjs")], env=env, timeout=90,
                           capture_output=True, text=True)
    except subprocess.TimeoutExpired as e:
        for line in ((e.stdout or b"").decode(errors="replace")).splitlines():
            print(f"    node: {line}", flush=True)
        return "fail", "node_cache_test.mjs did not finish within 90 s"
    for line in (r.stdout + r.stderr).splitlines():
        print(f"    node: {line}", flush=True)
    if r.returncode != 0:
        return "fail", f"node_cache_test.mjs exited with {r.returncode}"
    return "pass", (r.stdout.strip().splitlines() or ["ok"])[-1]


# ---- main -------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--santral", help="the santral binary: 3 shards behind it")
    how.add_argument("--direct", action="store_true", help="one redis-server, no Santral")
    parser.add_argument("--seed", type=int, help="the fuzz-style checks' random seed")
    parser.add_argument("--only", help="comma-separated names of the checks to run")
    parser.add_argument("--fuzz-seconds", type=float, default=5.0)
    parser.add_argument("--redis-server", default="redis-server")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    mode = "direct" if args.direct else "santral"
    print(f"client tracking test: mode {mode}, seed {seed} (replay with --seed {seed})", flush=True)
    if not shutil.which(args.redis_server):
        sys.exit(f"tracking test: {args.redis_server} is not installed")
    rng = random.Random(seed)

    work = Path(tempfile.mkdtemp(prefix="santral-tracking-"))
    cl = Cluster(mode, work, santral=args.santral and str(Path(args.santral).resolve()),
                 redis_server=args.redis_server)
    checks = [
        ("default_mode", lambda: check_default_mode(cl), False),
        ("optin", lambda: check_optin(cl), False),
        ("optout", lambda: check_optout(cl), False),
        ("noloop", lambda: check_noloop(cl), False),
        ("bcast", lambda: check_bcast(cl), False),
        ("bcast_noloop", lambda: check_bcast_noloop(cl), False),
        ("trackinginfo", lambda: check_trackinginfo(cl), False),
        ("tracking_off", lambda: check_tracking_off(cl), False),
        ("flushall", lambda: check_flushall(cl), False),
        ("flush_in_multi", lambda: check_flush_in_multi(cl), False),
        ("reads_in_multi", lambda: check_reads_in_multi(cl), False),
        ("cross_shard_read", lambda: check_cross_shard_read(cl), False),
        ("ordering", lambda: check_ordering(cl, random.Random(rng.randrange(1 << 30))), False),
        ("fuzz", lambda: check_fuzz(cl, random.Random(rng.randrange(1 << 30)),
                                    args.fuzz_seconds), False),
        ("max_keys", lambda: check_max_keys(cl), False),
        ("resp2_replies", lambda: check_resp2_replies(cl), False),
        ("redirect", lambda: check_redirect(cl), False),
        ("ping_after_write", lambda: check_ping_after_write(cl), False),
        ("off_after_write", lambda: check_off_after_write(cl), False),
        ("node_redis", None, False),
        ("lost_connection", lambda: check_lost_connection(cl), True),   # last: kills links
    ]
    only = set(args.only.split(",")) if args.only else None
    if only and only - {n for n, *_ in checks}:
        sys.exit(f"unknown checks: {sorted(only - {n for n, *_ in checks})}")
    failed, skipped = [], []
    started = time.monotonic()
    try:
        cl.start()
        if cl.santral:
            print(f"  shards on {cl.shard_ports}, santral (workers: 2) on {cl.router_port}",
                  flush=True)
        else:
            print(f"  redis-server on {cl.router_port}", flush=True)
        for name, fn, santral_only in checks:
            if only and name not in only:
                continue
            t = time.monotonic()
            if santral_only and not cl.santral:
                print(f"SKIP {name}: Santral only", flush=True)
                continue
            try:
                if name == "node_redis":
                    status, detail = run_node(cl, {"seed": seed})
                    if status == "skip":
                        print(f"SKIP {name}: {detail}", flush=True)
                        skipped.append(name)
                        continue
                    if status == "fail":
                        raise CheckFailed(detail)
                else:
                    detail = fn()
                print(f"PASS {name} ({time.monotonic() - t:.1f} s): {detail}", flush=True)
            except (CheckFailed, ConnectionLost, OSError, subprocess.TimeoutExpired) as e:
                failed.append(name)
                print(f"FAIL {name} ({time.monotonic() - t:.1f} s): {e}", flush=True)
                if cl.santral and cl.santral_process.poll() is not None:
                    print(f"  santral exited ({cl.santral_process.returncode}); its log:\n"
                          f"{tail(cl.logs['santral'])}", flush=True)
                    break
    except CheckFailed as e:
        print(f"FAIL setup: {e}", flush=True)
        failed.append("setup")
    finally:
        if failed and cl.santral:
            for name, log in cl.logs.items():
                print(f"--- last lines of {name}.log ---\n{tail(log, 15)}", flush=True)
        cl.stop()
        shutil.rmtree(work, ignore_errors=True)
    took = time.monotonic() - started
    if failed:
        print(f"client tracking test ({mode}): FAILED {', '.join(failed)} ({took:.1f} s, seed "
              f"{seed})", flush=True)
        return 1
    if skipped:
        print(f"client tracking test ({mode}): SKIPPED {', '.join(skipped)}; every other check "
              f"passed ({took:.1f} s, seed {seed})", flush=True)
        return SKIP
    print(f"client tracking test ({mode}): all checks passed ({took:.1f} s, seed {seed})",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

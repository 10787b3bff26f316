"""The workloads of a chaos run and what each one checks.

Each workload runs threads over long-lived connections through Santral (tests/chaos/client.py
says what an outcome is), records what was attempted and what was acknowledged, checks the
answers it gets as it goes where a rule allows it, and checks the end state once every fault is
lifted and no move runs. Nothing here trusts Santral's word beyond its answers: a request whose
outcome is unknown counts as attempted, never as acknowledged and never as lost; a request
answered "did not run" (TRYAGAIN, EXECABORT) is checked not to have run.

Every key a workload writes has a prefix of its own, so that a stray key can be traced.
"""

import collections
import random
import re
import threading
import time

from client import NOTRUN, NOTSENT, OK, UNKNOWN, Client, Outcome

now = time.monotonic


class Workload:
    name = "?"

    def __init__(self, env, seed):
        self.env = env
        self.seed = seed
        self.lock = threading.Lock()
        self.ops = collections.Counter()  # outcome status -> count
        self.error_kinds = collections.Counter()  # the gist of each error answer -> count

    def threads(self):
        """[(thread name, function)] to run until env.stop_workloads is set."""
        return []

    def count(self, out):
        with self.lock:
            self.ops[out.status] += 1
            if out.status in (UNKNOWN, NOTRUN) and out.error:
                self.error_kinds[gist(out.error)] += 1
        # As an application would: back off before the next request after an error (a
        # TRYAGAIN or a down shard answers at once, and a tight loop would only burn CPU).
        if out.status == NOTSENT:
            self.env.sleep_workload(0.1)
        elif out.status != OK:
            self.env.sleep_workload(0.02)

    def wrong_shape(self, client, what, value):
        """An answer that cannot be the answer to what was sent (another request's reply, a
        reply out of step): an anomaly, and the connection is dropped (its replies may be out
        of step from here on). The request's outcome is then unknown."""
        self.env.anomaly("an answer that is not the request's own",
                         f"{self.name}: {what} answered {value!r}"[:300])
        if client is not None:
            client.drop()
        return Outcome(UNKNOWN, error="an answer of the wrong shape")

    def final_check(self):
        pass

    def inject(self):
        """Self-test: damages one acknowledged thing behind Santral's back; returns a
        description, or None when there was nothing to damage."""
        return None

    def summary(self):
        return ""

    def ops_line(self):
        total = sum(self.ops.values())
        parts = ", ".join(f"{k} {self.ops[k]}" for k in (OK, UNKNOWN, NOTRUN, NOTSENT) if self.ops[k])
        line = f"{total} requests ({parts})"
        if self.error_kinds:
            line += "\n    errors: " + "; ".join(
                f"{n}x {e}" for e, n in self.error_kinds.most_common(4))
        return line


def gist(error):
    """An error without its names, numbers and addresses, to count errors by kind."""
    words = []
    for w in error.replace("\n", " ").split()[:14]:
        if "'" in w or "(" in w or ")" in w or any(c.isdigit() for c in w):
            continue
        words.append(w)
    return " ".join(words)[:80]


def as_int(value):
    return 0 if value is None else int(value)


def is_int(value):
    """An integer answer (or a bulk string holding one)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and value.lstrip("-").isdigit()


def is_int_or_nil(value):
    return value is None or is_int(value)


# --------------------------------------------------------------------------------------------
class Counters(Workload):
    """INCR of a few counters. Each acknowledged INCR's answer must be larger than every answer
    acknowledged before it was sent (no increment lost underneath it); the final value lies
    between the acknowledged and the attempted INCRs."""

    name = "counters"

    def __init__(self, env, seed, counters=12, threads=2):
        super().__init__(env, seed)
        # Half the keys carry a hash tag, so that an edit of hash_tag moves them.
        self.keys = [f"ctr:{{c{i}}}" if i % 2 == 0 else f"ctr:c{i}" for i in range(counters)]
        self.attempted = [0] * counters
        self.acked = [0] * counters
        self.notrun = [0] * counters
        self.recent = [collections.deque(maxlen=128) for _ in range(counters)]
        self.seen = [set() for _ in range(counters)]
        self.nthreads = threads

    def threads(self):
        return [(f"counters-{t}", lambda t=t: self.run(t)) for t in range(self.nthreads)]

    def run(self, t):
        env = self.env
        rng = random.Random(self.seed * 101 + t)
        client = Client(env, f"counters-{t}")
        while not env.stop_workloads.is_set():
            i = rng.randrange(len(self.keys))
            sent = now()
            out = client.call("INCR", self.keys[i])
            self.count(out)
            if out.ok and not is_int(out.value):
                out = self.wrong_shape(client, f"INCR {self.keys[i]}", out.value)
            with self.lock:
                if out.status in (OK, UNKNOWN):
                    self.attempted[i] += 1
                if out.status == NOTRUN:
                    self.notrun[i] += 1
                if out.status == OK:
                    self.acked[i] += 1
                    value = int(out.value)
                    floor = max((v for (acked_at, v) in self.recent[i] if acked_at < sent),
                                default=None)
                    if value in self.seen[i]:
                        env.anomaly("counter: two INCRs answered the same value",
                                    f"{self.keys[i]}: INCR answered {value} a second time",
                                    key=self.keys[i])
                    elif floor is not None and value <= floor:
                        env.anomaly("counter: went backwards",
                                    f"{self.keys[i]}: INCR answered {value}, but an INCR "
                                    f"acknowledged before it was sent had answered {floor}",
                                    key=self.keys[i])
                    else:
                        env.passed("counter: INCR answers increase")
                    self.seen[i].add(value)
                    self.recent[i].append((now(), value))
            env.pace()

    def final_check(self):
        env = self.env
        for i, key in enumerate(self.keys):
            out = env.final_read("GET", key)
            if not out.ok:
                continue
            value = as_int(out.value)
            if value < self.acked[i]:
                env.anomaly("counter: final below acknowledged",
                            f"{key} = {value}, {self.acked[i]} INCRs acknowledged "
                            f"({self.acked[i] - value} lost), {self.attempted[i]} attempted",
                            key=key)
            elif value > self.attempted[i]:
                env.anomaly("counter: final above attempted",
                            f"{key} = {value}, only {self.attempted[i]} INCRs attempted "
                            f"({self.notrun[i]} more answered TRYAGAIN/did not run)", key=key)
            else:
                env.passed("counter: acked <= final <= attempted")

    def inject(self):
        for i, key in enumerate(self.keys):
            if self.acked[i] > 0:
                self.env.direct_on_owner(key, "SET", key, "0")
                return f"{key} set to 0 on its shard ({self.acked[i]} acknowledged)"
        return None

    def summary(self):
        return (f"{len(self.keys)} counters: {sum(self.acked)} INCRs acknowledged, "
                f"{sum(self.attempted)} attempted, {sum(self.notrun)} answered did-not-run")


# --------------------------------------------------------------------------------------------
class UniqueWrites(Workload):
    """SET of unique keys to unique values: every acknowledged one is found with its value; one
    of unknown outcome is absent or has its value; one answered "did not run" is absent."""

    name = "unique writes"

    def __init__(self, env, seed, rate=40.0):
        super().__init__(env, seed)
        self.acked = {}
        self.unknown = {}
        self.notrun = {}
        self.notrun_errors = {}  # key -> the router and the error that said it did not run
        self.rate = rate
        self.preloaded = 0

    def preload(self, n):
        client = Client(self.env, "preload")
        for i in range(n):
            key, value = f"pre:{i}", f"p{i}-{self.seed}"
            out = client.call_until_sent("SET", key, value)
            self.count(out)
            {OK: self.acked, UNKNOWN: self.unknown, NOTRUN: self.notrun}.get(
                out.status, {})[key] = value
        client.drop()
        self.preloaded = n

    def threads(self):
        return [("unique-writes", self.run)]

    def run(self):
        env = self.env
        rng = random.Random(self.seed * 103)
        client = Client(env, "unique-writes")
        n = 0
        while not env.stop_workloads.is_set():
            n += 1
            key, value = f"uw:{n}", f"{n}-{rng.getrandbits(32):08x}"
            out = client.call("SET", key, value)
            self.count(out)
            with self.lock:
                {OK: self.acked, UNKNOWN: self.unknown, NOTRUN: self.notrun}.get(
                    out.status, {})[key] = value
                if out.status == NOTRUN:
                    self.notrun_errors[key] = f"{client.where()}: {out.error}"
            env.sleep_workload(1.0 / self.rate)

    def final_check(self):
        env = self.env
        expected = [(k, v, OK) for k, v in self.acked.items()]
        expected += [(k, v, UNKNOWN) for k, v in self.unknown.items()]
        expected += [(k, v, NOTRUN) for k, v in self.notrun.items()]
        for start in range(0, len(expected), 200):
            batch = expected[start:start + 200]
            out = env.final_read("MGET", *[k for k, _, _ in batch])
            if not out.ok:
                continue
            if not (isinstance(out.value, list) and len(out.value) == len(batch)):
                self.wrong_shape(None, f"MGET of {len(batch)} keys", out.value)
                continue
            for (key, value, status), got in zip(batch, out.value):
                if status == OK:
                    if got == value:
                        env.passed("unique write: acknowledged SET found")
                    elif got is None:
                        env.anomaly("unique write: acknowledged SET lost", f"{key}: nil", key=key)
                    else:
                        env.anomaly("unique write: wrong value", f"{key}: {got!r}, wrote {value!r}",
                                    key=key)
                elif status == UNKNOWN:
                    if got in (None, value):
                        env.passed("unique write: SET of unknown outcome absent or whole")
                    else:
                        env.anomaly("unique write: wrong value", f"{key}: {got!r}, wrote {value!r}",
                                    key=key)
                else:
                    if got is None:
                        env.passed("unique write: SET answered did-not-run is absent")
                    else:
                        env.anomaly("unique write: a SET answered TRYAGAIN (did not run) ran",
                                    f"{key} = {got!r}; answered {self.notrun_errors.get(key)}",
                                    key=key)

    def inject(self):
        for key in self.acked:
            if self.env.direct_on_owner(key, "DEL", key):
                return f"{key} deleted on its shard"
        return None

    def summary(self):
        return (f"{len(self.acked)} SETs acknowledged ({self.preloaded} preloaded), "
                f"{len(self.unknown)} of unknown outcome, {len(self.notrun)} did-not-run")


# --------------------------------------------------------------------------------------------
class Registers(Workload):
    """One writer per register SETs increasing numbers; after each acknowledged SET it reads
    the register on the same connection and on another one: each read is the acknowledged
    value, or that of a SET whose outcome is unknown (which may land late), never older."""

    name = "registers"

    def __init__(self, env, seed, registers=8, threads=2):
        super().__init__(env, seed)
        self.keys = [f"reg:{i}" for i in range(registers)]
        self.seq = [0] * registers
        self.last_acked = [0] * registers
        self.unknown = [set() for _ in range(registers)]
        self.notrun = [set() for _ in range(registers)]
        self.reads = 0
        # Fleet mode: a writer per router, each read back through the next router too.
        self.nthreads = threads if env.fleet is None else len(env.fleet.routers)

    def threads(self):
        return [(f"registers-{t}", lambda t=t: self.run(t)) for t in range(self.nthreads)]

    def judge(self, i, value, where):
        """A read of register i (the writer is not writing it meanwhile)."""
        env = self.env
        key = self.keys[i]
        floor = self.last_acked[i]
        if value is None:
            if floor == 0:
                env.passed("register: read not older than the acknowledged write")
            else:
                env.anomaly("register: read nil after an acknowledged write",
                            f"{key} ({where}): nil after SET {floor} was acknowledged", key=key)
            return
        got = int(value)
        if got == floor or (got in self.unknown[i]):
            env.passed("register: read not older than the acknowledged write")
        elif got in self.notrun[i]:
            env.anomaly("register: read a SET answered TRYAGAIN (did not run)",
                        f"{key} ({where}): read {got}, answered did-not-run; last acknowledged "
                        f"{floor}", key=key)
        elif got < floor:
            env.anomaly("register: stale read",
                        f"{key} ({where}): read {got} after SET {floor} was acknowledged", key=key)
        else:
            env.anomaly("register: read a value never acknowledged",
                        f"{key} ({where}): read {got}, last acknowledged {floor}", key=key)

    def run(self, t):
        env = self.env
        rng = random.Random(self.seed * 107 + t)
        mine = [i for i in range(len(self.keys)) if i % self.nthreads == t]
        # Fleet mode: the other connection goes to another router than the writer's.
        main = Client(env, f"registers-{t}", router=env.nth_router(t))
        other = Client(env, f"registers-{t}-other", router=env.nth_router(t + 1))
        elsewhere = "another connection" if env.fleet is None else "another router"
        while not env.stop_workloads.is_set():
            i = rng.choice(mine)
            self.seq[i] += 1
            seq = self.seq[i]
            out = main.call("SET", self.keys[i], str(seq))
            self.count(out)
            with self.lock:
                if out.status == OK:
                    self.last_acked[i] = seq
                elif out.status == UNKNOWN:
                    self.unknown[i].add(seq)
                elif out.status == NOTRUN:
                    self.notrun[i].add(seq)
            if out.status == OK:
                for client, where in ((main, "same connection"), (other, elsewhere)):
                    read = client.call("GET", self.keys[i])
                    self.count(read)
                    if read.ok and not is_int_or_nil(read.value):
                        read = self.wrong_shape(client, f"GET {self.keys[i]}", read.value)
                    if read.ok:
                        self.reads += 1
                        self.judge(i, read.value, where)
            env.pace()

    def final_check(self):
        for i, key in enumerate(self.keys):
            out = self.env.final_read("GET", key)
            if out.ok and not is_int_or_nil(out.value):
                self.wrong_shape(None, f"GET {key}", out.value)
            elif out.ok:
                self.judge(i, out.value, "final read")

    def inject(self):
        for i, key in enumerate(self.keys):
            if self.last_acked[i] > 1 and (self.last_acked[i] - 1) not in self.unknown[i]:
                self.env.direct_on_owner(key, "SET", key, str(self.last_acked[i] - 1))
                return f"{key} set back to {self.last_acked[i] - 1} on its shard"
        return None

    def summary(self):
        return (f"{len(self.keys)} registers: {sum(self.seq)} SETs, {self.reads} reads after "
                f"acknowledged SETs, {sum(len(u) for u in self.unknown)} SETs of unknown outcome")


# --------------------------------------------------------------------------------------------
class Queues(Workload):
    """LPUSH of unique ids, BLPOP consumers: no id delivered twice, no id delivered that was
    never pushed, and every acknowledged id delivered or still in the list, except at most one
    per BLPOP whose outcome is unknown (the connection broke, Santral was killed, "may or may
    not have run"), on the same list, and only an id pushed before that BLPOP ended. ("TRYAGAIN
    ... did not run" is not unknown: it says nothing was popped.)"""

    name = "queues"

    def __init__(self, env, seed, queues=2, consumers_per_queue=3, rate=60.0):
        super().__init__(env, seed)
        self.keys = [f"queue:{i}" for i in range(queues)]
        self.consumers_per_queue = consumers_per_queue
        self.rate = rate
        self.acked = set()
        self.unknown = set()
        self.notrun = set()
        self.notrun_errors = {}  # item -> the router and the error that said it did not run
        self.delivered = collections.Counter()
        self.uncertain_pops = 0
        self.uncertain = []  # (queue index, when the BLPOP of unknown outcome ended)
        self.pushed_at = {}  # item -> when its LPUSH was sent
        self.tryagain_pops = 0
        self.remaining = []

    def threads(self):
        out = [("queue-producer", self.produce)]
        for q in range(len(self.keys)):
            for c in range(self.consumers_per_queue):
                out.append((f"queue-consumer-{q}-{c}", lambda q=q, c=c: self.consume(q, c)))
        return out

    def produce(self):
        env = self.env
        client = Client(env, "queue-producer")
        n = 0
        while not env.stop_workloads.is_set():
            n += 1
            key = self.keys[n % len(self.keys)]
            item = f"{n % len(self.keys)}:{n}"
            self.pushed_at[item] = now()
            out = client.call("LPUSH", key, item)
            self.count(out)
            with self.lock:
                {OK: self.acked, UNKNOWN: self.unknown, NOTRUN: self.notrun}.get(
                    out.status, set()).add(item)
                if out.status == NOTRUN:
                    self.notrun_errors[item] = f"{client.where()}: {out.error}"
            env.sleep_workload(1.0 / self.rate)

    def consume(self, q, c):
        env = self.env
        key = self.keys[q]
        client = Client(env, f"queue-consumer-{q}-{c}", timeout=15.0)
        drained_after_stop = False
        deadline = None
        while True:
            if env.stop_workloads.is_set():
                # Producers have stopped: drain until a BLPOP times out empty.
                if deadline is None:
                    deadline = now() + 20.0
                if drained_after_stop or now() > deadline:
                    break
            out = client.call("BLPOP", key, "1")
            self.count(out)
            if out.status == OK:
                if out.value is None:
                    if env.stop_workloads.is_set():
                        drained_after_stop = True
                    continue
                if not (isinstance(out.value, list) and len(out.value) == 2
                        and out.value[0] == key and isinstance(out.value[1], str)):
                    self.wrong_shape(client, f"BLPOP {key}", out.value)
                    with self.lock:
                        self.uncertain_pops += 1
                        self.uncertain.append((q, now()))
                    continue
                item = out.value[1]
                with self.lock:
                    self.delivered[item] += 1
                    if self.delivered[item] == 2:
                        env.anomaly("queue: an item delivered twice", f"{key}: {item}")
            elif out.status == UNKNOWN:
                with self.lock:
                    self.uncertain_pops += 1
                    self.uncertain.append((q, now()))
                time.sleep(0.2)
            elif out.status == NOTRUN:
                with self.lock:
                    self.tryagain_pops += 1
                time.sleep(0.01)

    def final_check(self):
        env = self.env
        remaining = collections.Counter()
        for key in self.keys:
            out = env.final_read("LRANGE", key, "0", "-1")
            if out.ok:
                remaining.update(out.value)
        self.remaining = remaining
        pushed = self.acked | self.unknown
        for item, n in remaining.items():
            if n > 1 or (item in self.delivered):
                env.anomaly("queue: an item delivered twice",
                            f"{item}: delivered {self.delivered[item]} times and {n} times left")
        for item in self.delivered:
            if item in self.notrun:
                env.anomaly("queue: an LPUSH answered TRYAGAIN (did not run) ran",
                            f"{item} was delivered; answered {self.notrun_errors.get(item)}")
            elif item not in pushed:
                env.anomaly("queue: an item never pushed was delivered", item)
            else:
                env.passed("queue: item delivered once")
        lost = sorted((i for i in self.acked if i not in self.delivered and i not in remaining),
                      key=lambda i: self.pushed_at[i])
        # Each BLPOP of unknown outcome may have taken one item of its list pushed before it
        # ended: match them, oldest items first (a greedy matching is a maximum one here).
        unexplained = []
        explained = 0
        for q in range(len(self.keys)):
            pops = sorted(t for (pq, t) in self.uncertain if pq == q)
            items = [i for i in lost if int(i.split(":")[0]) == q]
            k = 0
            for t in pops:
                if k < len(items) and self.pushed_at[items[k]] < t:
                    k += 1
            explained += k
            unexplained += items[k:]
        for item in unexplained:
            env.anomaly("queue: acknowledged item lost",
                        f"{item} (LPUSH sent at {env.since_start(self.pushed_at[item]):.1f}s and "
                        f"acknowledged; neither delivered nor left in the list; "
                        f"{len(lost)} such, {explained} of them explained by BLPOPs of unknown "
                        f"outcome)")
        env.passed("queue: acknowledged item delivered or left", len(self.acked) - len(lost))
        self.lost = lost
        self.unexplained = unexplained

    def inject(self):
        for item in self.delivered:
            key = self.keys[int(item.split(":")[0])]
            if self.env.direct_on_owner(key, "RPUSH", key, item, require_key=False):
                return f"{item} pushed again onto {key} on its shard"
        return None

    def summary(self):
        return (f"{len(self.acked)} LPUSHes acknowledged, {len(self.unknown)} unknown; "
                f"{sum(self.delivered.values())} items delivered, {sum(self.remaining.values())} "
                f"left; {self.uncertain_pops} BLPOPs of unknown outcome, {self.tryagain_pops} "
                f"answered TRYAGAIN; {len(getattr(self, 'lost', []))} acknowledged items "
                f"neither delivered nor left, {len(getattr(self, 'unexplained', []))} of them "
                f"not explained by a BLPOP of unknown outcome")


# --------------------------------------------------------------------------------------------
class Sets(Workload):
    """SADD of unique members to pairs of sets on (usually) different shards; SUNION and SINTER
    of a pair must contain every member acknowledged (in one set for SUNION, in both for
    SINTER) before the read was sent, and nothing never added."""

    name = "sets"
    PER_PAIR = 150

    def __init__(self, env, seed, readers=2):
        super().__init__(env, seed)
        self.pairs = 0
        self.acked = {}  # (set key) -> {member: ack time}
        self.sent = {}  # (set key) -> set of members ever sent
        self.nreaders = readers
        self.reads = 0
        self.mid_run_damage = None

    def keys_of(self, n):
        return f"seta:{n}", f"setb:{n}"

    def threads(self):
        out = [("sets-writer", self.write)]
        out += [(f"sets-reader-{r}", lambda r=r: self.read(r)) for r in range(self.nreaders)]
        return out

    def write(self):
        env = self.env
        rng = random.Random(self.seed * 109)
        client = Client(env, "sets-writer")
        m = 0
        with self.lock:
            self.pairs = 1
            for k in self.keys_of(0):
                self.acked[k], self.sent[k] = {}, set()
        while not env.stop_workloads.is_set():
            m += 1
            n = self.pairs - 1
            if m % self.PER_PAIR == 0:
                with self.lock:
                    for k in self.keys_of(self.pairs):
                        self.acked[k], self.sent[k] = {}, set()
                    self.pairs += 1
            member = f"m{m}"
            r = rng.random()
            targets = self.keys_of(n) if r < 0.7 else (self.keys_of(n)[0 if r < 0.85 else 1],)
            for key in targets:
                with self.lock:
                    self.sent[key].add(member)
                out = client.call("SADD", key, member)
                self.count(out)
                if out.status == OK:
                    with self.lock:
                        self.acked[key][member] = now()
            env.pace()

    def read(self, r):
        env = self.env
        rng = random.Random(self.seed * 113 + r)
        client = Client(env, f"sets-reader-{r}")
        while not env.stop_workloads.is_set():
            if self.pairs == 0:
                time.sleep(0.05)
                continue
            n = self.pairs - 1 - (rng.randrange(3) if rng.random() < 0.9 else rng.randrange(self.pairs))
            n = max(0, n)
            a, b = self.keys_of(n)
            op = "SUNION" if rng.random() < 0.5 else "SINTER"
            sent = now()
            out = client.call(op, a, b)
            self.count(out)
            if out.ok and not isinstance(out.value, list):
                out = self.wrong_shape(client, f"{op} {a} {b}", out.value)
            if out.ok:
                self.reads += 1
                got = set(out.value)
                with self.lock:
                    in_a = {m for m, at in self.acked[a].items() if at < sent}
                    in_b = {m for m, at in self.acked[b].items() if at < sent}
                    must = (in_a | in_b) if op == "SUNION" else (in_a & in_b)
                    possible = self.sent[a] | self.sent[b]
                missing = must - got
                extra = got - possible
                if missing:
                    env.anomaly(f"sets: {op} missed acknowledged members",
                                f"{op} {a} {b}: {len(missing)} of {len(must)} acknowledged "
                                f"members missing (e.g. {sorted(missing)[:3]})")
                elif extra:
                    env.anomaly(f"sets: {op} answered members never added",
                                f"{op} {a} {b}: {sorted(extra)[:3]}")
                else:
                    env.passed(f"sets: {op} holds every acknowledged member")
            env.pace()

    def damage_mid_run(self):
        """Self-test: removes an acknowledged member of the pair being read."""
        with self.lock:
            if self.pairs == 0:
                return None
            a, _ = self.keys_of(self.pairs - 1)
            members = list(self.acked.get(a, {}))
        if not members:
            return None
        self.env.direct_on_owner(a, "SREM", a, members[0])
        self.mid_run_damage = f"{members[0]} removed from {a} on its shard"
        return self.mid_run_damage

    def final_check(self):
        env = self.env
        for key in sorted(self.acked):
            out = env.final_read("SMEMBERS", key)
            if not out.ok:
                continue
            if not isinstance(out.value, list):
                self.wrong_shape(None, f"SMEMBERS {key}", out.value)
                continue
            got = set(out.value)
            missing = set(self.acked[key]) - got
            if missing:
                env.anomaly("sets: acknowledged member lost",
                            f"{key}: {len(missing)} members missing (e.g. {sorted(missing)[:3]})",
                            key=key)
            elif got - self.sent[key]:
                env.anomaly("sets: a member never added", f"{key}: {sorted(got - self.sent[key])[:3]}")
            else:
                env.passed("sets: every acknowledged member kept")

    def inject(self):
        for key, members in self.acked.items():
            for m in members:
                if self.env.direct_on_owner(key, "SREM", key, m):
                    return f"{m} removed from {key} on its shard"
        return None

    def summary(self):
        return (f"{2 * self.pairs} sets, {sum(len(a) for a in self.acked.values())} SADDs "
                f"acknowledged, {self.reads} SUNION/SINTER answers checked")


# --------------------------------------------------------------------------------------------
class Stores(Workload):
    """Cross-shard SUNIONSTORE (cross_shard_writes: allow). Store n reads two fresh sets
    {n:a} and {n:b} into one of a few destinations, so each destination names the store that
    wrote it. After an acknowledged store, the destination (read on the same connection) is
    that store's; any destination read at any time, and at the end, is the last acknowledged
    store's, or that of a store of unknown outcome (which may land late), never older."""

    name = "cross-shard stores"

    def __init__(self, env, seed, dests=6):
        super().__init__(env, seed)
        self.dests = [f"dst:{i}" for i in range(dests)]
        self.last_acked = [None] * dests
        self.unknown = [set() for _ in range(dests)]
        self.notrun = [set() for _ in range(dests)]
        self.stores = 0
        self.acked_count = 0
        self.checked_reads = 0

    def threads(self):
        return [("stores", self.run)]

    def judge(self, i, members, where):
        env = self.env
        key = self.dests[i]
        last = self.last_acked[i]
        if not (isinstance(members, list) and all(isinstance(m, str) for m in members)):
            self.wrong_shape(None, f"SMEMBERS {key} ({where})", members)
            return
        got = set(members)
        if not got:
            if last is None:
                env.passed("store: destination is the last acknowledged store")
            else:
                env.anomaly("store: acknowledged STORE lost",
                            f"{key} ({where}) is empty; store {last} was acknowledged", key=key)
            return
        ns = {m.split(":")[0] for m in got}
        if (len(ns) != 1 or not next(iter(ns)).isdigit()
                or got != {f"{next(iter(ns))}:a", f"{next(iter(ns))}:b"}):
            env.anomaly("store: destination is not one whole store",
                        f"{key} ({where}): {sorted(got)[:6]}")
            return
        n = int(next(iter(ns)))
        if n == last or n in self.unknown[i]:
            env.passed("store: destination is the last acknowledged store")
        elif n in self.notrun[i]:
            env.anomaly("store: a STORE answered TRYAGAIN (did not run) ran",
                        f"{key} ({where}): holds store {n}; last acknowledged {last}")
        elif last is not None and n < last:
            env.anomaly("store: acknowledged STORE lost",
                        f"{key} ({where}): holds store {n}, but store {last} was acknowledged "
                        f"after it", key=key)
        else:
            env.anomaly("store: destination holds a store never acknowledged",
                        f"{key} ({where}): store {n}, last acknowledged {last}")

    def run(self):
        env = self.env
        rng = random.Random(self.seed * 127)
        client = Client(env, "stores")
        n = 0
        while not env.stop_workloads.is_set():
            n += 1
            i = rng.randrange(len(self.dests))
            a, b = f"srca:{n}", f"srcb:{n}"
            ok = True
            for key, member in ((a, f"{n}:a"), (b, f"{n}:b")):
                out = client.call("SADD", key, member)
                self.count(out)
                ok = ok and out.ok
            if ok:
                self.stores += 1
                out = client.call("SUNIONSTORE", self.dests[i], a, b)
                self.count(out)
                if out.ok and not is_int(out.value):
                    out = self.wrong_shape(client, f"SUNIONSTORE {self.dests[i]} {a} {b}",
                                           out.value)
                with self.lock:
                    if out.status == OK:
                        self.acked_count += 1
                        self.last_acked[i] = n
                        if int(out.value) != 2:
                            env.anomaly("store: SUNIONSTORE missed acknowledged members",
                                        f"SUNIONSTORE {self.dests[i]} {a} {b} answered {out.value}, "
                                        f"both sources acknowledged on this connection")
                    elif out.status == UNKNOWN:
                        self.unknown[i].add(n)
                    elif out.status == NOTRUN:
                        self.notrun[i].add(n)
                if out.status == OK:
                    read = client.call("SMEMBERS", self.dests[i])
                    self.count(read)
                    if read.ok:
                        self.checked_reads += 1
                        self.judge(i, read.value, "read after the store")
            # Any destination, at any time: still the last acknowledged store.
            j = rng.randrange(len(self.dests))
            read = client.call("SMEMBERS", self.dests[j])
            self.count(read)
            if read.ok:
                self.checked_reads += 1
                self.judge(j, read.value, "read later")
            out = client.call("DEL", a, b)
            self.count(out)
            env.sleep_workload(0.1)

    def final_check(self):
        for i, key in enumerate(self.dests):
            out = self.env.final_read("SMEMBERS", key)
            if out.ok:
                self.judge(i, out.value, "final read")

    def inject(self):
        for i, key in enumerate(self.dests):
            if self.last_acked[i] is not None:
                self.env.direct_on_owner(key, "SADD", key, "injected:a")
                return f"a foreign member added to {key} on its shard"
        return None

    def summary(self):
        return (f"{self.stores} SUNIONSTOREs sent, {self.acked_count} acknowledged, "
                f"{sum(len(u) for u in self.unknown)} unknown, {self.checked_reads} "
                f"destination reads checked")


# --------------------------------------------------------------------------------------------
class Transactions(Workload):
    """MULTI; INCR a; INCR b; SET last n; EXEC on a hash-tagged group (one shard). EXEC's
    answer has a == b; a read after it sees a == b, at least EXEC's a, and `last` of this
    transaction; at the end a == b lies between the acknowledged and attempted EXECs."""

    name = "transactions"

    def __init__(self, env, seed, groups=4):
        super().__init__(env, seed)
        # The tag is the same under hash_tag "{}" and "[]": a group never splits.
        self.groups = [(f"tx{{g{i}}}[g{i}]:a", f"tx{{g{i}}}[g{i}]:b", f"tx{{g{i}}}[g{i}]:last")
                       for i in range(groups)]
        self.attempted = [0] * groups
        self.acked = [0] * groups
        self.last_acked = [0] * groups
        self.unknown = [set() for _ in range(groups)]
        self.aborted = 0
        self.last_exec = None
        self.exec_errors = collections.Counter()

    def threads(self):
        return [("transactions", self.run)]

    def judge_read(self, i, values, min_a, where):
        env = self.env
        a, b, last = (as_int(values[0]), as_int(values[1]), values[2])
        name = self.groups[i][0]
        if a != b:
            env.anomaly("transaction: not atomic (a != b)", f"{name} ({where}): a={a} b={b}",
                        key=name)
        elif a < min_a:
            env.anomaly("transaction: acknowledged EXEC lost",
                        f"{name} ({where}): a={a}, an acknowledged EXEC answered {min_a}", key=name)
        elif as_int(last) != self.last_acked[i] and as_int(last) not in self.unknown[i]:
            env.anomaly("transaction: last is not the last acknowledged EXEC's",
                        f"{name} ({where}): last={last}, last acknowledged {self.last_acked[i]}")
        else:
            env.passed("transaction: read sees the acknowledged EXEC whole")

    def run(self):
        env = self.env
        rng = random.Random(self.seed * 131)
        client = Client(env, "transactions")
        seq = 0
        while not env.stop_workloads.is_set():
            i = rng.randrange(len(self.groups))
            a, b, last = self.groups[i]
            seq += 1
            first = client.call("MULTI")
            self.count(first)
            if first.status != OK:
                if (first.error and "can not be nested" in first.error
                        and self.last_exec is not None):
                    env.anomaly("transaction: still in MULTI after EXEC answered",
                                f"MULTI answered {first.error!r}; the EXEC before had answered "
                                f"{self.last_exec!r}")
                self.last_exec = None
                if not first.broken:
                    client.call("DISCARD")
                continue
            queued = True
            for args in (("INCR", a), ("INCR", b), ("SET", last, str(seq))):
                out = client.call(*args)
                self.count(out)
                if out.broken:
                    queued = None  # EXEC is never sent on a broken connection: nothing ran
                    break
                if out.status != OK or out.value != "QUEUED":
                    queued = False
            self.last_exec = None
            if queued is None:
                continue
            if not queued:
                # A command was refused while queueing: DISCARD, nothing runs.
                client.call("DISCARD")
                self.aborted += 1
                continue
            out = client.call("EXEC")
            self.count(out)
            self.last_exec = out.error if out.error else "a reply"
            if out.error:
                self.exec_errors[out.error[:90]] += 1
            if out.ok and out.value is not None and not (
                    isinstance(out.value, list) and len(out.value) == 3
                    and is_int(out.value[0]) and is_int(out.value[1]) and out.value[2] == "OK"):
                # Not the answers of INCR, INCR, SET: whatever ran, ran together (a == b is
                # still checked at every read), but the client was told something else.
                env.anomaly("transaction: EXEC's answer is not its commands' answers",
                            f"MULTI; INCR {a}; INCR {b}; SET {last} {seq}; EXEC answered "
                            f"{out.value!r}"[:300])
                client.drop()
                out = Outcome(UNKNOWN, error="EXEC answered something else")
            with self.lock:
                if out.status == OK and out.value is not None:
                    self.attempted[i] += 1
                    self.acked[i] += 1
                    self.last_acked[i] = seq
                    va, vb = out.value[0], out.value[1]
                    if int(va) != int(vb):
                        env.anomaly("transaction: not atomic (a != b)",
                                    f"EXEC on {a} answered a={va} b={vb}", key=a)
                    acked_a = int(va)
                elif out.status == UNKNOWN:
                    self.attempted[i] += 1
                    self.unknown[i].add(seq)
                    continue
                else:
                    self.aborted += 1
                    continue
            read = client.call("MGET", a, b, last)
            self.count(read)
            if read.ok and not (isinstance(read.value, list) and len(read.value) == 3
                                and all(is_int_or_nil(v) for v in read.value)):
                read = self.wrong_shape(client, f"MGET {a} {b} {last}", read.value)
            if read.ok:
                self.judge_read(i, read.value, acked_a, "read after EXEC")
            env.pace()

    def final_check(self):
        env = self.env
        for i, (a, b, last) in enumerate(self.groups):
            out = env.final_read("MGET", a, b, last)
            if not out.ok:
                continue
            va, vb = as_int(out.value[0]), as_int(out.value[1])
            if va != vb:
                env.anomaly("transaction: not atomic (a != b)", f"{a}: final a={va} b={vb}", key=a)
            elif va < self.acked[i]:
                env.anomaly("transaction: acknowledged EXEC lost",
                            f"{a} = {va}, {self.acked[i]} EXECs acknowledged", key=a)
            elif va > self.attempted[i]:
                env.anomaly("transaction: final above attempted",
                            f"{a} = {va}, {self.attempted[i]} EXECs attempted")
            else:
                self.judge_read(i, out.value, 0, "final read")

    def inject(self):
        for i, (a, _, _) in enumerate(self.groups):
            if self.acked[i] > 0:
                self.env.direct_on_owner(a, "INCR", a)
                return f"{a} incremented alone on its shard"
        return None

    def summary(self):
        errs = "; ".join(f"{n}x {e}" for e, n in self.exec_errors.most_common(3))
        return (f"{len(self.groups)} groups: {sum(self.acked)} EXECs acknowledged, "
                f"{sum(self.attempted)} attempted, {self.aborted} aborted (EXECABORT/TRYAGAIN)"
                + (f"; EXEC errors: {errs}" if errs else ""))


# --------------------------------------------------------------------------------------------
class Salted(Workload):
    """Salted counters: SANTRAL SALT key 4, INCRs, SANTRAL UNSALT while a move runs (no fault
    meanwhile but shard stops, which may outlast request_ms: Env.unsalting); the final value
    lies between the acknowledged and the attempted INCRs. A SIGKILL of Santral is kept away while a key is salted (a crash leaves run-time
    salting's sub-keys behind by design); a SIGTERM folds them, and is allowed."""

    name = "salted counters"

    def __init__(self, env, seed, keys=2, threads=2):
        super().__init__(env, seed)
        self.keys = [f"hits:{i}" for i in range(keys)]
        self.attempted = [0] * keys
        self.acked = [0] * keys
        self.notrun = [0] * keys
        self.salts = 0
        self.unsalts = 0
        self.unsalts_in_move = 0
        self.unsalt_errors = collections.Counter()
        self.fold_failures = 0
        self.cooling = set()  # keys the INCR threads leave alone for now
        # Keys whose UNSALT left sub-keys unfolded (a failed fold; in a fleet, a router that did
        # not confirm): the next UNSALT of the key, even one given up meanwhile, starts with
        # SALT again, or the final read would miss what those sub-keys hold.
        self.unfolded = set()
        # A failed fold's error, per key, until what it says of the sub-key it stopped at is
        # done (finish_fold_step).
        self.fold_pending = {}
        self.nthreads = threads

    def threads(self):
        out = [(f"salted-{t}", lambda t=t: self.run(t)) for t in range(self.nthreads)]
        out.append(("salted-controller", self.control))
        return out

    def run(self, t):
        env = self.env
        rng = random.Random(self.seed * 137 + t)
        client = Client(env, f"salted-{t}")
        while not env.stop_workloads.is_set():
            i = rng.randrange(len(self.keys))
            if i in self.cooling:
                env.sleep_workload(0.01)
                continue
            out = client.call("INCR", self.keys[i])
            self.count(out)
            with self.lock:
                if out.status in (OK, UNKNOWN):
                    self.attempted[i] += 1
                if out.status == OK:
                    self.acked[i] += 1
                elif out.status == NOTRUN:
                    self.notrun[i] += 1
            env.pace()

    def unsalt(self, admin, key, deadline_s):
        """UNSALT until it is done; True when the key is no longer salted. UNSALT is sent only
        once Santral sees every shard up again (a fault just lifted can leave a shard marked
        down for a moment). A fold that fails (docs/hot-keys.md: the error names the sub-keys
        left) is finished as the error says: SALT the key again with the same count, UNSALT it."""
        env = self.env
        end = now() + deadline_s
        resalt = key in self.unfolded
        while now() < end:
            env.wait_shards_up(10.0)
            if key in self.fold_pending:
                if not self.finish_fold_step(admin, self.fold_pending[key]):
                    time.sleep(1.0)
                    continue
                del self.fold_pending[key]
            if resalt:
                out = admin.call("SANTRAL", "SALT", key, "4")
                if not out.ok and not (out.error and "already salted" in out.error):
                    time.sleep(1.0)
                    continue
            state = env.reshard_state()
            # A fold sends a step again while its shard cannot carry it out (up to 15 s each).
            out = admin.call("SANTRAL", "UNSALT", key, timeout=60.0)
            if out.ok:
                self.unsalts += 1
                if state in ("moving", "finishing", "aborting"):
                    self.unsalts_in_move += 1
                env.event(f"salting: UNSALT {key} (move state {state})"
                          + (" (finishing a failed fold)" if resalt else ""))
                self.unfolded.discard(key)
                return True
            if out.error and "is not salted" in out.error and not resalt:
                return True
            if out.error:
                self.unsalt_errors[gist(out.error)] += 1
                env.event(f"salting: UNSALT {key} answered: {out.error[:300]}")
                # In a fleet, a router that did not confirm leaves the sub-keys unfolded and
                # says to SALT the key again, then UNSALT it.
                if "folding its sub-key" in out.error or "SANTRAL SALT the key again" in out.error:
                    self.fold_failures += 1
                    self.fold_pending[key] = out.error
                    resalt = True
                    self.unfolded.add(key)
            time.sleep(1.0)
        return False

    def finish_fold_step(self, admin, error):
        """Does what a failed fold's error says about the sub-key it stopped at (docs/hot-keys.md:
        if its part was added but the sub-key not deleted, DEL it; if whether it was added is unknown,
        the add's mark tells). True when the sub-key may be folded again."""
        delete = re.search(r"delete it \(DEL (\S+)\)", error)
        unknown = re.search(r"it was if the key '(\S+)' exists .*delete the sub-key \(DEL (\S+)\)",
                            error)
        if unknown:
            mark = admin.call("EXISTS", unknown.group(1))
            if not mark.ok:
                return False  # asked again after a pause
            if mark.value == 0:
                return True  # not added: folding it again adds it
            delete = unknown.group(2)
        elif delete:
            delete = delete.group(1)
        if not delete:
            return True
        out = admin.call("DEL", delete)
        self.env.event(f"salting: DEL {delete} (its part was added before the fold failed): "
                       f"{out.value if out.ok else out.error}")
        return out.ok

    def control(self):
        env = self.env
        rng = random.Random(self.seed * 139)
        admin = Client(env, "salted-admin")
        while not env.stop_workloads.is_set():
            if not env.sleep_workload(rng.uniform(1.0, 4.0)):
                break
            key = rng.choice(self.keys)
            if env.reshard_state() != "idle":
                continue
            out = admin.call("SANTRAL", "SALT", key, "4")
            if out.ok:
                self.salts += 1
                env.event(f"salting: SALT {key} 4")
            elif not (out.error and "already salted" in out.error):
                continue
            # Incremented a while, then (most times) left alone: the sub-keys of a counter
            # nobody writes are not pulled, and the walk may not have reached them when the
            # fold runs (automatic unsalting folds exactly such cooling counters). Wait for
            # a move to run (the operator starts them), then UNSALT during it. Santral may be
            # killed meanwhile: the next start salts the key again (hotkeys.state_file).
            i = self.keys.index(key)
            if not env.sleep_workload(rng.uniform(0.5, 2.0)):
                break
            if rng.random() < 0.7:
                self.cooling.add(i)
            try:
                end = now() + 25.0
                while now() < end and not env.stop_workloads.is_set():
                    if env.reshard_state() in ("moving", "aborting"):
                        time.sleep(rng.uniform(0.0, 1.5))
                        break
                    time.sleep(0.2)
                while env.kill_pending and not env.stop_workloads.is_set():
                    time.sleep(0.1)  # a SIGKILL of Santral waits for a moment without a fold
                # Not beside a SIGKILL: a fold cut between a sub-key's add and its delete adds
                # that part again at the next fold (docs/hot-keys.md).
                with env.salt_lock, env.unsalting():  # beside shard stops alone
                    self.unsalt(admin, key, 30.0)
            finally:
                self.cooling.discard(i)

    def final_check(self):
        env = self.env
        admin = Client(env, "salted-final")
        for i, key in enumerate(self.keys):
            if not self.unsalt(admin, key, 60.0):
                env.anomaly("salted: UNSALT never succeeded", key)
            out = env.final_read("GET", key)
            if not out.ok:
                continue
            value = as_int(out.value)
            if value < self.acked[i]:
                env.anomaly("salted counter: final below acknowledged",
                            f"{key} = {value}, {self.acked[i]} INCRs acknowledged "
                            f"({self.acked[i] - value} lost), {self.attempted[i]} attempted"
                            + self.stranded(key), key=key)
            elif value > self.attempted[i]:
                env.anomaly("salted counter: final above attempted",
                            f"{key} = {value}, {self.attempted[i]} INCRs attempted", key=key)
            else:
                env.passed("salted counter: acked <= final <= attempted")

    def stranded(self, key):
        """Sub-keys of `key` still on the shards (read directly): what a fold left behind."""
        found = []
        for name, shard in sorted(self.env.shards.items()):
            try:
                c = shard.client(timeout=5.0)
                for sub in c.scan_iter(match=f"{key}:s*", count=1000):
                    found.append(f"{sub}={c.get(sub)} on {name}")
            except Exception as e:
                found.append(f"({name}: {type(e).__name__})")
        return f"; sub-keys left on the shards: {', '.join(found)}" if found else ""

    def inject(self):
        for i, key in enumerate(self.keys):
            if self.acked[i] > 0:
                self.env.direct_on_owner(key, "SET", key, "0", require_key=False)
                return f"{key} set to 0 on its shard"
        return None

    def summary(self):
        errs = "; ".join(f"{n}x {e}" for e, n in self.unsalt_errors.most_common(3))
        return (f"{len(self.keys)} counters: {self.salts} SALTs, {self.unsalts} UNSALTs "
                f"({self.unsalts_in_move} during a move, {self.fold_failures} folds failed and "
                f"were finished by SALT+UNSALT), {sum(self.acked)} INCRs acknowledged, "
                f"{sum(self.attempted)} attempted" + (f"; UNSALT errors: {errs}" if errs else ""))


ALL = [Counters, UniqueWrites, Registers, Queues, Sets, Stores, Transactions, Salted]

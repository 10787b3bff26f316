"""The nemeses of a chaos run: an operator who moves keys and edits the map, and faults.

Both draw every choice from their own random.Random seeded from the run's seed, so a seed
gives the same sequence of actions (their timing, and so their interleaving with the
workloads, still varies from run to run).

Operator (one action at a time, a pause of 1-4 s between them):
  grow/shrink   add the spare shard s3 to the map, or remove it: edit the file, SANTRAL RELOAD
                (it must plan a move), SANTRAL RESHARD APPROVE, wait until idle
  abort         the same, then SANTRAL RESHARD ABORT halfway; afterwards the file is either
                put back (and reloaded) or left as edited, and then sometimes Santral is
                restarted (SIGTERM) on it: the map in force must stay the old one (or the
                restart plans the move again), never the file's silently (F9)
  hash          `hash:` murmur <-> fnv1a_64, planned, approved, waited for (or aborted)
  tag           `hash_tag:` "{}" <-> "[]" (the transactions' keys carry both tags)
Before each action the map Santral serves (SANTRAL SHARDMAP) must be the one the last move
left in force. A reload that puts a placement change in force without planning a move is an
anomaly (F2); so is a map in force that no move put there (F9). A move found planned (a
restart that planned one) is approved. A move that does not end within 300 s is a liveness
anomaly.

Faults (one at a time, a pause of 0.5-3 s between them; each is lifted after its time):
  santral-stop  SIGSTOP Santral 0.5-2 s           shard-stop  SIGSTOP a shard 0.5-2 s
  santral-kill  SIGKILL Santral, restart at once on the same file (not while a counter is
                salted: a crash leaves run-time salting's sub-keys behind, by design)
  santral-term  SIGTERM Santral (graceful), restart
  shard-kill    SIGKILL a shard, restart it on its append-only file
  link-delay    20-150 ms on one shard's link for 1-4 s
  link-stall    stall one link 0.3-2.5 s          link-reset  reset one link for 0.1-1 s
  link-blackhole  blackhole one link 0.5-2 s
"""

import random
import signal
import time

from client import Client
from cluster import MapModel

now = time.monotonic

OPERATOR_ACTIONS = [("grow/shrink", 5), ("abort", 2), ("hash", 1), ("tag", 1)]
FAULTS = [("santral-stop", 2), ("shard-stop", 2), ("santral-kill", 1), ("santral-term", 0.5),
          ("shard-kill", 1.5), ("link-delay", 2), ("link-stall", 1.5), ("link-reset", 1.5),
          ("link-blackhole", 0.5)]


def weighted(rng, choices):
    total = sum(w for _, w in choices)
    x = rng.uniform(0, total)
    for name, w in choices:
        x -= w
        if x <= 0:
            return name
    return choices[-1][0]


def parse_shardmap(out):
    """The MapModel of a SANTRAL SHARDMAP answer (an Outcome), or None."""
    if not out.ok or not isinstance(out.value, str):
        return None
    shards, hash_name, tag = [], None, None
    for line in out.value.splitlines():
        if line.startswith("hash:"):
            hash_name = line[len("hash:"):].strip()
        elif line.startswith("hash_tag:"):
            tag = line[len("hash_tag:"):].strip()
        elif line.startswith("shard:") and "role:primary" in line:
            shards.append(line.split()[0][len("shard:"):])
    if hash_name is None or tag is None or not shards:
        return None
    return MapModel(shards, hash_name, tag)

class Operator:
    def __init__(self, env, seed, model, actions=None):
        self.env = env
        self.rng = random.Random(seed * 7 + 1)
        self.in_force = model  # what the harness believes Santral serves
        self.file_model = model
        self.admin = Client(env, "operator", timeout=30.0)
        self.actions = [(a, w) for a, w in OPERATOR_ACTIONS if actions is None or a in actions]

    # --- Santral's answers ----------------------------------------------------------------
    def command(self, *args, deadline_s=60.0):
        """A SANTRAL command, retried while Santral is down; the final outcome."""
        end = now() + deadline_s
        while True:
            out = self.admin.call(*args)
            if not out.broken:
                return out
            if now() > end or self.env.stop_nemeses.is_set():
                return out
            time.sleep(0.2)

    def status(self):
        out = self.command("SANTRAL", "RESHARD", "STATUS", deadline_s=30.0)
        if not out.ok:
            return {}
        return self.env.as_map(out.value)

    def served(self):
        """The map Santral serves, from SANTRAL SHARDMAP, or None."""
        return parse_shardmap(self.command("SANTRAL", "SHARDMAP", deadline_s=30.0))

    def wait_idle(self, stall_s=180.0, approve_planned=True):
        """Waits until no move runs; a move found planned (a restart that planned one) is
        approved, and its map (the file's) is then the one in force; with approve_planned
        False a planned move counts as no move running. A move may take as long as it needs
        while it makes progress (the walk is throttled, and faults slow it); one whose
        keys_moved stays the same for stall_s is a liveness anomaly. False when stopped or
        stalled."""
        adopted = False
        progress = (None, now())
        while True:
            if self.env.stop_nemeses.is_set():
                return False
            st = self.status()
            state = st.get("state")
            mark = (state, st.get("keys_moved"), st.get("units_done"))
            if mark != progress[0]:
                progress = (mark, now())
            elif now() - progress[1] > stall_s:
                break
            if state == "idle":
                if adopted:
                    self.in_force = self.file_model
                    self.env.count("moves finished")
                    self.env.moves_switched_add()
                return True
            if state == "planned" and not approve_planned:
                return True
            if state == "planned":
                self.env.event("operator: found a planned move (after a restart?): approving it")
                adopted = self.approve() or adopted
            time.sleep(0.3)
        self.env.anomaly("liveness: a move made no progress",
                         f"state {progress[0][0]}, keys_moved {progress[0][1]} for {stall_s:.0f} s")
        return False

    def approve(self):
        out = self.command("SANTRAL", "RESHARD", "APPROVE")
        if out.ok:
            self.env.count("moves started")
        else:
            self.env.event(f"operator: APPROVE answered {out.error}")
        return out.ok

    def reload(self):
        """-> ('planned'|'applied'|'rejected'|'failed', text)"""
        out = self.command("SANTRAL", "RELOAD")
        self.env.count("reloads")
        if out.ok:
            text = out.value if isinstance(out.value, str) else str(out.value)
            if "planned a move" in text:
                return "planned", text
            return "applied", text
        if out.error and "reject" in out.error:
            return "rejected", out.error
        # The reload's fate is unknown (Santral killed meanwhile): what is planned now says.
        st = self.status()
        if st.get("state") == "planned":
            return "planned", f"(reload answered {out.error}; a move is planned)"
        return "failed", out.error or ""

    # --- the loop ---------------------------------------------------------------------------
    def run(self):
        env = self.env
        while env.sleep_nemesis(self.rng.uniform(1.0, 4.0)):
            action = weighted(self.rng, self.actions)
            abort_at = self.rng.uniform(0.2, 0.8)
            keep_file = self.rng.random() < 0.5
            try:
                self.act(action, abort_at, keep_file)
            except Exception as e:  # a harness bug must not pass silently
                env.harness_error(f"operator {action}: {type(e).__name__}: {e}")
                return

    def restart_santral(self):
        """The operator restarts Santral (SIGTERM, as a deploy would) on the file as it is:
        after an abort whose edit was left in the file, the map in force must stay."""
        env = self.env
        with env.fault_lock:
            env.event("operator: restarts santral (SIGTERM) with the edited file in place")
            env.count("operator restarts")
            env.santral.kill(signal.SIGTERM)
            env.restart_santral()

    def target(self, action):
        m = self.in_force
        if action in ("grow/shrink", "abort"):
            shards = [s for s in m.shards if s != "s3"] if "s3" in m.shards else m.shards + ["s3"]
            return m.copy(shards=shards)
        if action == "hash":
            return m.copy(hash="fnv1a_64" if m.hash == "murmur" else "murmur")
        return m.copy(hash_tag="[]" if m.hash_tag == "{}" else "{}")

    def begin(self, action, kind="Santral", who="Santral"):
        """Waits until no move runs, checks that the map served is the one the last move put in
        force (`who` serves it; `kind` names it in the anomaly), and picks the next map.
        Returns (old, new, action, aborting), or None when stopped."""
        if not self.wait_idle():
            return None
        served = self.served()
        if served is not None and served != self.in_force:
            self.env.anomaly(f"map: {kind} serves a map that no move put in force",
                             f"the last move left {self.in_force.describe()} in force (file: "
                             f"{self.file_model.describe()}); {who} serves {served.describe()}")
            self.in_force = served
        old, new = self.in_force, self.target(action)
        if action in ("hash", "tag") and self.rng.random() < 0.3:
            action += "+abort"
        return old, new, action, action.endswith("abort")

    def act(self, action, abort_at, keep_file):
        env = self.env
        begun = self.begin(action)
        if begun is None:
            return
        old, new, action, aborting = begun
        env.santral.max_keys_per_sec = env.walk_rate()
        env.santral.write_config(new)
        self.file_model = new
        verdict, text = self.reload()
        env.event(f"operator: {action}: {old.describe()} -> {new.describe()} (walk "
                  f"{env.santral.max_keys_per_sec} keys/s): reload {verdict}: "
                  f"{text.splitlines()[0][:200] if text else ''}")
        if verdict == "applied":
            env.anomaly("reload: a placement change went in force without a move (F2)",
                        f"{action}: {old.describe()} -> {new.describe()}: {text[:200]}")
            self.in_force = new
            env.count("placement changes in force without a move")
            return
        if verdict != "planned":
            # Refused (allowed: "a move, or it is refused"): put the file back.
            env.santral.write_config(old)
            self.file_model = old
            if verdict == "failed":
                self.reload()
            return
        if not self.approve():
            return
        started = now()
        if aborting:
            # Halfway: after some keys moved, or a while.
            limit = started + self.rng.uniform(0.5, 4.0)
            while now() < limit and not env.stop_nemeses.is_set():
                st = self.status()
                if st.get("state") not in ("moving",):
                    break
                if int(st.get("keys_moved", "0") or 0) > 0 and now() > started + 0.3 + 2 * abort_at:
                    break
                time.sleep(0.1)
            st = self.status()
            out = self.command("SANTRAL", "RESHARD", "ABORT")
            env.event(f"operator: ABORT at keys_moved={st.get('keys_moved')} state={st.get('state')}: "
                      f"{'OK' if out.ok else out.error}")
            if out.ok:
                env.count("moves aborted")
                if self.wait_idle(approve_planned=False):
                    env.moves_switched_add()
                    self.in_force = old
                    if not keep_file:
                        env.santral.write_config(old)
                        self.file_model = old
                        verdict, text = self.reload()
                        env.event(f"operator: file put back after the abort: reload {verdict}")
                    else:
                        env.event("operator: file left as edited after the abort")
                        if self.rng.random() < 0.4:
                            self.restart_santral()
                return
        if self.wait_idle():
            env.count("moves finished")
            env.moves_switched_add()
            self.in_force = new
            env.event(f"operator: move to {new.describe()} finished in {now() - started:.1f} s")


class Faults:
    def __init__(self, env, seed, kinds=None):
        self.env = env
        self.rng = random.Random(seed * 11 + 2)
        self.kinds = [(k, w) for k, w in FAULTS if kinds is None or k in kinds]

    def run(self):
        env = self.env
        while self.kinds and env.sleep_nemesis(self.rng.uniform(0.5, 3.0)):
            kind = weighted(self.rng, self.kinds)
            shard = self.rng.choice(sorted(env.shards))
            d = self.rng.uniform(0.5, 2.0)
            try:
                with env.fault_lock:
                    if env.stop_nemeses.is_set():
                        return
                    self.inject(kind, shard, d)
            except Exception as e:
                env.harness_error(f"fault {kind}: {type(e).__name__}: {e}")
                return

    def inject(self, kind, shard, d):
        env = self.env
        rng = self.rng
        if env.kill_pending or kind == "santral-kill":
            # Not while a counter is salted: the kill waits (another fault meanwhile), and no
            # counter is salted again until it has happened.
            if env.salt_lock.acquire(blocking=False):
                kind = "santral-kill"
                env.kill_pending = False
            else:
                env.kill_pending = True
                if kind == "santral-kill":
                    kind = "santral-stop"
        if kind == "santral-kill":
            try:
                env.event("fault: SIGKILL santral, restart")
                env.count_fault(kind)
                env.santral.kill(signal.SIGKILL)
                env.restart_santral()
            finally:
                env.salt_lock.release()
            return
        env.count_fault(kind)
        if kind == "santral-stop":
            env.event(f"fault: SIGSTOP santral {d:.1f} s")
            env.santral.signal(signal.SIGSTOP)
            try:
                time.sleep(d)
            finally:
                env.santral.signal(signal.SIGCONT)
        elif kind == "santral-term":
            env.event("fault: SIGTERM santral, restart")
            env.santral.kill(signal.SIGTERM)
            env.restart_santral()
        elif kind == "shard-stop":
            env.event(f"fault: SIGSTOP {shard} {d:.1f} s")
            env.shards[shard].pause()
            try:
                time.sleep(d)
            finally:
                env.shards[shard].resume()
        elif kind == "shard-kill":
            env.event(f"fault: SIGKILL {shard}, restart on its AOF")
            env.shards[shard].kill()
            time.sleep(rng.uniform(0.0, 1.0))
            env.shards[shard].start()
        else:
            fault = kind.split("-", 1)[1]
            arg = None
            length = {"delay": rng.uniform(1.0, 4.0), "stall": rng.uniform(0.3, 2.5),
                      "reset": rng.uniform(0.1, 1.0), "blackhole": rng.uniform(0.5, 2.0)}[fault]
            if fault == "delay":
                arg = rng.randint(20, 150)
            env.event(f"fault: {fault}{'' if arg is None else f' {arg} ms'} on {shard}'s link "
                      f"for {length:.1f} s")
            env.proxy.fault(shard, fault, arg)
            try:
                time.sleep(length)
            finally:
                env.proxy.fault(shard, "pass")

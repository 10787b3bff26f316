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
  abort-now     the same, with the ABORT sent right after APPROVE answered
  source-stop-abort  SIGSTOP a source shard of the planned move (one of the old map's shards:
                the move adds the spare shard; when it is in, a plain move takes it out first,
                and should it still be in, the move changes `hash:` instead) before APPROVE
                (or, half the time, right after it answered),
                ABORT once keys_moved > 0 (the other sources' walks; at most 8 s), keep the
                shard stopped until request_ms + 1.5 s (--source-stop-hold; 8 s in a fleet,
                whose abort walks the old target for seconds) after the ABORT was
                sent (whether or not Santral answered it meanwhile), SIGCONT, wait until
                idle. Santral gives up on
                what it sent the stopped shard, which still runs it when it wakes: pulls and
                writes of the aborted direction land after the abort (findings F1, F2). The
                stop is a fault (one at a time) that an UNSALT may run beside
  hash          `hash:` murmur <-> fnv1a_64, planned, approved, waited for (or, 3 in 10,
                aborted halfway)
  tag           `hash_tag:` "{}" <-> "[]" (the transactions' keys carry both tags)
Before each action the map Santral serves (SANTRAL SHARDMAP) must be the one the last move
left in force. A reload that puts a placement change in force without planning a move is an
anomaly (F2); so is a map in force that no move put there (F9). A move found planned (a
restart that planned one) is approved. A move that does not end within 300 s is a liveness
anomaly. After each move has ended (before the next action) every data key must be on exactly
one shard, the owner the map in force names (chaos.check_placement_after_move): a late write
that left a copy behind shows there before the next move's MIGRATE ... REPLACE can hide it.

Faults (one at a time, a pause of 0.5-3 s between them; each is lifted after its time;
`late` is timeouts.request_ms, --request-ms, 2000 by default):
  santral-stop  SIGSTOP Santral 0.5-2 s
  shard-stop    SIGSTOP a shard 0.5-5 s (most outlast request_ms: Santral gives up on what it
                sent, the shard runs it when it wakes); allowed while an UNSALT runs
  santral-kill  SIGKILL Santral, restart at once on the same file (not while an UNSALT folds:
                a fold cut between a sub-key's add and its delete adds that part twice)
  santral-term  SIGTERM Santral (graceful), restart
  shard-kill    SIGKILL a shard, restart it on its append-only file
  link-delay    20-150 ms on one shard's link for 1-4 s
  link-delay-late  late + 200-1500 ms on one shard's link for late + 1-4 s: requests time out
                and still arrive (the proxy delivers what a closed connection sent)
  link-stall    stall one link 0.3-2.5 s (a connection closed meanwhile loses its bytes)
  link-stall-deliver  stall one link (`stall deliver`) for late + 0.3-2.5 s: what Santral sent
                and gave up on (closed) reaches the shard when the stall is lifted
  link-stall-next  (half the time after resetting the link's connections) hold the next 1-3
                connections made on the link, unconnected, for late + 0.3-2.5 s; their bytes
                arrive when the fault is lifted (Santral's reconnects, a source's MIGRATE
                connection to its target)
  link-reset    reset one link for 0.1-1 s       link-blackhole  blackhole one link 0.5-2 s
"""

import random
import signal
import threading
import time

from client import UNKNOWN, Client, Outcome
from cluster import MapModel

now = time.monotonic

OPERATOR_ACTIONS = [("grow/shrink", 4), ("abort", 3), ("abort-now", 1), ("source-stop-abort", 2),
                    ("hash", 1), ("tag", 1)]
FAULTS = [("santral-stop", 2), ("shard-stop", 2.5), ("santral-kill", 1), ("santral-term", 0.5),
          ("shard-kill", 1.5), ("link-delay", 1.5), ("link-delay-late", 1), ("link-stall", 1),
          ("link-stall-deliver", 1.5), ("link-stall-next", 1), ("link-reset", 1.5),
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
        self.checked_at_moves = 0  # moves started when placement was last checked
        self.last_move = "no move yet"

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
        with env.fault("operator-restart"):
            env.event("operator: restarts santral (SIGTERM) with the edited file in place")
            env.count("operator restarts")
            env.santral.kill(signal.SIGTERM)
            env.restart_santral()

    def grows(self, m):
        """Whether grow/shrink from map m adds a shard (every shard of m is then a source)."""
        return "s3" not in m.shards

    def target(self, action):
        m = self.in_force
        if action == "source-stop-abort":
            # A move of which every shard of the old map is a source: the spare shard added
            # (make_room takes it out first), or, when it is in, a change of hash (removing it
            # has one source alone, which stopped would leave keys_moved at 0).
            return self.target("grow/shrink" if self.grows(m) else "hash")
        if action in ("grow/shrink", "abort", "abort-now"):
            shards = [s for s in m.shards if s != "s3"] if "s3" in m.shards else m.shards + ["s3"]
            return m.copy(shards=shards)
        if action == "hash":
            return m.copy(hash="fnv1a_64" if m.hash == "murmur" else "murmur")
        return m.copy(hash_tag="[]" if m.hash_tag == "{}" else "{}")

    def begin(self, action, kind="Santral", who="Santral"):
        """Waits until no move runs, checks that the map served is the one the last move put in
        force (`who` serves it; `kind` names it in the anomaly) and, if a move ran since the
        last check, that every key is where that map says; picks the next map. Returns (old,
        new, action, abort style: None, "halfway", "now" or "source-stop"), or None when
        stopped."""
        if not self.wait_idle():
            return None
        served = self.served()
        if served is not None and served != self.in_force:
            self.env.anomaly(f"map: {kind} serves a map that no move put in force",
                             f"the last move left {self.in_force.describe()} in force (file: "
                             f"{self.file_model.describe()}); {who} serves {served.describe()}")
            self.in_force = served
        self.check_placement()
        old, new = self.in_force, self.target(action)
        if action in ("hash", "tag") and self.rng.random() < 0.3:
            action += "+abort"
        style = {"abort-now": "now", "source-stop-abort": "source-stop"}.get(
            action, "halfway" if action.endswith("abort") else None)
        return old, new, action, style

    def check_placement(self):
        """Placement of every key once a move has ended (a move approved since the last check):
        chaos.check_placement_after_move against the map in force."""
        started = self.env.counts["moves started"]
        if started == self.checked_at_moves or self.env.stop_nemeses.is_set():
            return
        self.checked_at_moves = started
        self.env.placement_after_move(self.in_force, self.last_move)

    # --- aborts ---------------------------------------------------------------------------
    def send_abort(self):
        """SANTRAL RESHARD ABORT -> (outcome, through whom)."""
        return self.command("SANTRAL", "RESHARD", "ABORT"), "santral"

    def keys_moved(self, st, first):
        """Whether the walk has moved keys: keys_moved > 0 and (when `first`, the first value
        seen after APPROVE, is given) not that value any more: a fleet's status may start from
        the previous move's count (each router's record keeps it until its walk reports)."""
        moved = int(st.get("keys_moved", "0") or 0)
        return moved > 0 and (first is None or moved != first)

    def wait_abort_point(self, started, abort_at):
        """Halfway: after some keys moved and a while (abort_at), or 0.5-4 s."""
        env = self.env
        limit = started + self.rng.uniform(0.5, 4.0)
        first = None
        while now() < limit and not env.stop_nemeses.is_set():
            st = self.status()
            if st.get("state") not in ("moving",):
                break
            if first is None:
                first = int(st.get("keys_moved", "0") or 0)
            if self.keys_moved(st, first or None) and now() > started + 0.3 + 2 * abort_at:
                break
            time.sleep(0.1)

    def wait_keys_moved(self, seconds):
        """Until the walks of the sources that are not stopped have moved keys, or seconds."""
        end = now() + seconds
        first = None
        while now() < end and not self.env.stop_nemeses.is_set():
            st = self.status()
            if st.get("state") != "moving":
                return
            if first is None:
                first = int(st.get("keys_moved", "0") or 0)
            if self.keys_moved(st, first or None):
                return
            time.sleep(0.1)

    def abort(self, style, started, abort_at, stop):
        """ABORT the move just approved: halfway, at once, or (source-stop) once keys moved,
        with the stopped source held until request_ms + 1.5 s after the ABORT was sent.
        Returns the ABORT's outcome."""
        env = self.env
        if style == "halfway":
            self.wait_abort_point(started, abort_at)
        elif style == "source-stop":
            self.wait_keys_moved(8.0)
        st = self.status() if style != "now" else {}
        if stop is None:
            out, via = self.send_abort()
        else:
            # On a thread of its own: the source stays stopped until request_ms + 1.5 s after
            # the ABORT was sent, whether or not Santral answers it meanwhile (an ABORT that
            # waited for the stopped shard must not keep it stopped).
            box = []
            sender = threading.Thread(target=lambda: box.append(self.send_abort()),
                                      name="operator-abort", daemon=True)
            sent = now()
            sender.start()
            hold = env.request_ms / 1000.0 + env.args.source_stop_hold
            env.stop_nemeses.wait(max(0.0, sent + hold - now()))
            stop.resume(f"{now() - sent:.1f} s after the ABORT was sent; request_ms "
                        f"{env.request_ms}")
            sender.join(120)
            out, via = box[0] if box else (Outcome(UNKNOWN, error="ABORT not answered in 120 s",
                                                   broken=True), "?")
        env.event(f"operator: ABORT ({style}) through {via} at keys_moved={st.get('keys_moved')} "
                  f"state={st.get('state')}: {'OK' if out.ok else out.error}")
        if out.ok:
            env.count("moves aborted")
        return out

    def after_abort(self, old, keep_file):
        """Once the abort's walk back is over, the old map is in force; the file is put back,
        or left as edited (and then sometimes Santral restarted on it)."""
        env = self.env
        if self.wait_idle(approve_planned=False):
            env.moves_switched_add()
            self.in_force = old
            self.last_move = f"an abort back to {old.describe()} ended at {env.stamp()}"
            if not keep_file:
                env.santral.write_config(old)
                self.file_model = old
                verdict, text = self.reload()
                env.event(f"operator: file put back after the abort: reload {verdict}")
            else:
                env.event("operator: file left as edited after the abort")
                if self.rng.random() < 0.4:
                    self.restart_santral()

    def stop_source(self, old, new, action, when):
        """source-stop-abort: SIGSTOP one shard of the old map (each is a source of the move)."""
        name = self.rng.choice(sorted(old.shards))
        # Released by the operator, or by the watchdog whatever APPROVE and ABORT do.
        watchdog = 8.0 + self.env.request_ms / 1000.0 + self.env.args.source_stop_hold + 60.0
        return SourceStop(self.env, name, watchdog,
                          f"a source of {action} to {new.describe()}, {when}")

    # --- one action -----------------------------------------------------------------------
    def make_room(self, action, style, old, abort_at, keep_file, room_made):
        """source-stop-abort with the spare shard in the map: a plain move takes it out first
        (then the action starts again), so that the stopped shard is a source of a move that
        adds a shard (every shard of the map gives keys to the new one, and the others' walks
        go on). True when it did; the second time round, the action goes on as target() says."""
        if style != "source-stop" or self.grows(old) or room_made:
            return False
        self.env.event("operator: source-stop-abort: first a move that takes a shard out")
        self.act("grow/shrink", abort_at, keep_file)
        self.act(action, abort_at, keep_file, room_made=True)
        return True

    def act(self, action, abort_at, keep_file, room_made=False):
        env = self.env
        begun = self.begin(action)
        if begun is None:
            return
        old, new, action, style = begun
        if self.make_room(action, style, old, abort_at, keep_file, room_made):
            return
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
        # source-stop-abort stops the source before APPROVE (findings F1: the new direction's
        # walk of it never starts) or, half the time, right after (its pulls are then queued
        # on connections made before the stop; a fleet fenced by ACL users fails its
        # connections to a shard it cannot make its user on at the switch).
        early = style == "source-stop" and self.rng.random() < 0.5
        stop = self.stop_source(old, new, action, "before APPROVE") if early else None
        try:
            if not self.approve():
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
        if self.wait_idle():
            env.count("moves finished")
            env.moves_switched_add()
            self.in_force = new
            self.last_move = f"{action} to {new.describe()} ended at {env.stamp()}"
            env.event(f"operator: move to {new.describe()} finished in {now() - started:.1f} s")


class SourceStop:
    """source-stop-abort's SIGSTOP of a source shard, held as a fault (one at a time; a shard
    stop, so an UNSALT may run beside it) until resume(), or the watchdog's deadline whatever
    Santral does meanwhile."""

    def __init__(self, env, name, watchdog_s, why):
        self.env = env
        self.name = name
        self._lock = threading.Lock()
        self.resumed = False
        env.fault_begin("shard-stop")
        try:
            self.shard = env.shards[name]
            env.count_fault("source-stop (operator)")
            env.event(f"operator: SIGSTOP {name}, {why}")
            self.shard.pause()
        except BaseException:
            env.fault_end("shard-stop")
            raise
        self.at = now()
        self.timer = threading.Timer(watchdog_s, self.resume, args=("watchdog",))
        self.timer.daemon = True
        self.timer.start()

    def resume(self, why):
        with self._lock:
            if self.resumed:
                return
            self.resumed = True
        self.timer.cancel()
        try:
            self.shard.resume()
            self.env.event(f"operator: SIGCONT {self.name} after {now() - self.at:.1f} s ({why})")
        finally:
            self.env.fault_end("shard-stop")


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
                with env.fault(kind):
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
            # Not while an UNSALT folds: the kill waits (another fault meanwhile), and no fold
            # starts until it has happened.
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
        late = env.request_ms / 1000.0
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
            d = rng.uniform(0.5, 5.0)
            env.event(f"fault: SIGSTOP {shard} {d:.1f} s" + (" (outlasts request_ms)"
                                                             if d > late else ""))
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
            self.link_fault(kind, shard, late)

    def link_fault(self, kind, shard, late):
        env, rng = self.env, self.rng
        name = kind.split("-", 1)[1]
        fault, arg, first = name, None, ""
        if name == "delay":
            length, arg = rng.uniform(1.0, 4.0), rng.randint(20, 150)
        elif name == "delay-late":
            fault = "delay"
            length, arg = late + rng.uniform(1.0, 4.0), env.request_ms + rng.randint(200, 1500)
        elif name == "stall":
            length = rng.uniform(0.3, 2.5)
        elif name == "stall-deliver":
            fault, arg = "stall", "deliver"
            length = late + rng.uniform(0.3, 2.5)
        elif name == "stall-next":
            length, arg = late + rng.uniform(0.3, 2.5), rng.randint(1, 3)
            if rng.random() < 0.5:
                first = "reset its connections, then "
        elif name == "reset":
            length = rng.uniform(0.1, 1.0)
        elif name == "blackhole":
            length = rng.uniform(0.5, 2.0)
        else:
            raise ValueError(f"unknown fault {kind}")
        env.event(f"fault: {first}{fault}{'' if arg is None else f' {arg}'}"
                  f"{' ms' if fault == 'delay' else ''} on {shard}'s link for {length:.1f} s")
        if first:
            env.proxy.kill(shard)
        env.proxy.fault(shard, fault, arg)
        try:
            time.sleep(length)
        finally:
            env.proxy.fault(shard, "pass")

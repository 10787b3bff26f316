#!/usr/bin/python3
"""Chirp: the seeds' small social network, driven through Santral.

Tells the story of a sharded Chirp in five steps, printing what each shard did (read from the
shards' own INFO commandstats), and checks each step:
  1. users, follows and posts placed by namespaces (users hashed by their id, handles in
     ranges so that "@al..." is one shard's scan, posts by the default ring), with SANTRAL
     EXPLAIN of a targeted read, a range scan and a broadcast; every key is there, each
     targeted read went to one shard;
  2. a post goes viral: likes pour in through both routers, SANTRAL HOTKEYS shows the key,
     automatic salting spreads its INCRs from one shard to all, and the count stays exact;
  3. everyone reads the viral post: the near cache answers, the shards' GETs stay flat;
  4. the cluster grows (--join): a fifth shard joins the fleet's map (SANTRAL MAP PUSH through
     router A), the move is approved and watched while Chirp writes; no like and no post is
     lost, the move ends idle on both routers, every key is where the new map places it and
     the new shard holds its share;
  5. the dashboards (--admin) serve the page and every shard, up.
Then, with --load, keeps a light load going until stopped, for the dashboard. Exits 1 when a
step's check failed.

  chirp.py --routers 127.0.0.1:6380,127.0.0.1:6381 --shards 127.0.0.1:7001+127.0.0.1:7101,...
           --join 127.0.0.1:7005+127.0.0.1:7105 --config demo.yaml --admin 127.0.0.1:8080

Each shard is its primary, followed by its replicas after '+'; a shard's load is what all of
them served (Santral sends reads to replicas with read_from: prefer-replica). The routers'
config is config/examples/demo.yaml (deploy/santral.yaml in containers): step 4 proposes it
with the fifth shard added. scripts/demo.sh and deploy/docker-compose.yml run it.
"""
import argparse
import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import redis

VIRAL = 500  # the post that goes viral
SYLLABLES = ["al", "be", "ca", "da", "el", "fa", "go", "ha", "id", "jo", "ka", "li", "mo", "na",
             "ol", "pa", "qu", "ro", "sa", "ti", "ul", "vi", "wa", "xe", "yo", "zu"]


def endpoint(text):
    host, _, port = text.rpartition(":")
    return host, int(port)


def connect(text, **options):
    host, port = endpoint(text)
    client = redis.Redis(host=host, port=port, decode_responses=True, **options)
    for _ in range(100):  # the routers may still be starting
        try:
            client.ping()
            return client
        except redis.ConnectionError:
            time.sleep(0.2)
    sys.exit(f"chirp: nothing answers at {text}")


def calls(server, command):
    stats = server.info("commandstats")
    return stats.get(f"cmdstat_{command}", {}).get("calls", 0)


def per_shard(shards, command, writes=False):
    # A write runs on the primary and again on each replica that copies it: count it once.
    return [sum(calls(server, command) for server in (servers[:1] if writes else servers))
            for servers in shards]


def delta(before, after):
    return [b - a for a, b in zip(before, after)]


def step(number, title):
    print(f"\n== {number}. {title}", flush=True)


class Checks:
    """Each step's own checks, printed as they are made; chirp exits 1 when one failed."""

    def __init__(self):
        self.failed = []

    def __call__(self, ok, what):
        say(f"check: {what}: {'ok' if ok else 'FAILED'}")
        if not ok:
            self.failed.append(what)
        return ok


def until(condition, timeout, pause=0.05):
    """Polls `condition` until it returns something true, for at most `timeout` seconds; the
    last value it returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(pause)


def say(text=""):
    print(f"   {text}", flush=True)


def pairs(flat):
    """A RESP2 map (a flat list of names and values) as a dict."""
    return dict(zip(flat[::2], flat[1::2])) if isinstance(flat, list) else flat


def explain(router, *command):
    plan = pairs(router.execute_command("SANTRAL", "EXPLAIN", *command))
    shards = plan.get("shards") or []
    say(f"SANTRAL EXPLAIN {' '.join(command)}")
    say(f"  kind {plan.get('kind')}, rule {plan.get('rule')}, shards {', '.join(shards) or '-'}")
    for key in plan.get("keys") or []:
        key = pairs(key)
        say(f"  key {key.get('key')}: namespace {key.get('namespace') or '(none)'}, strategy "
            f"{key.get('strategy')}, shard key {key.get('shard_key')}, {key.get('detail')} "
            f"-> {key.get('shard')}")
    if plan.get("note"):
        say(f"  note: {plan['note']}")


def hot_key(router, key):
    """SANTRAL HOTKEYS' line for `key`, or None."""
    for entry in router.execute_command("SANTRAL", "HOTKEYS", "COUNT", "20"):
        entry = pairs(entry)
        if entry.get("key") == key:
            return entry
    return None


def handle_of(uid):
    return SYLLABLES[uid % 26] + SYLLABLES[(uid // 26) % 26] + str(uid)


def seed(writer, rng, users, posts):
    """Writes Chirp's users, follows and posts; the keys written."""
    keys = set()
    pipe = writer.pipeline(transaction=False)
    for uid in range(users):
        handle = handle_of(uid)
        pipe.hset(f"user:{uid}:profile", mapping={"name": f"User {uid}", "handle": handle})
        pipe.set(f"handle:{handle}", uid)
        keys.update({f"user:{uid}:profile", f"handle:{handle}", f"user:{uid}:follows"})
        for followee in rng.sample(range(users), 5):
            pipe.sadd(f"user:{uid}:follows", followee)
    for pid in range(posts):
        author = rng.randrange(users)
        pipe.set(f"post:{pid}", json.dumps({"author": author, "text": f"chirp number {pid}"}))
        pipe.lpush(f"user:{author}:posts", pid)
        keys.update({f"post:{pid}", f"user:{author}:posts"})
    pipe.execute()
    # Reads may go to replicas (read_from: prefer-replica): let them catch up first.
    writer.execute_command("WAIT", 1, 5000)
    return keys


def on_one_shard(counts):
    return sum(counts) == 1


def placement_step(writer, reader, shards, args, rng, check):
    step(1, f"Chirp's {args.users} users, their follows and {args.posts} posts, placed by namespaces")
    say("users    user:{uid}:{what}  hashed by the user id: a user's profile, follows and posts")
    say("                            share a shard, with no hash tags in the keys")
    say("handles  handle:{name}      ranges of names: @-mention lookup scans one shard")
    say("posts    post:{id}          no namespace: the default ketama ring")
    keys = seed(writer, rng, args.users, args.posts)
    say(f"keys per shard: {[servers[0].dbsize() for servers in shards]}")
    print()
    explain(reader, "HGETALL", "user:42:profile")
    before = per_shard(shards, "hgetall")
    profile = reader.hgetall("user:42:profile")
    follows = reader.smembers("user:42:follows")
    hgetalls = delta(before, per_shard(shards, "hgetall"))
    say(f"-> {profile['name']} (@{profile['handle']}) follows {sorted(int(f) for f in follows)}; "
        f"HGETALLs per shard: {hgetalls}")
    print()
    explain(reader, "KEYS", "handle:al*")
    before = per_shard(shards, "keys")
    found = reader.keys("handle:al*")
    scans = delta(before, per_shard(shards, "keys"))
    say(f"-> {len(found)} handles starting with 'al'; KEYS per shard: {scans} (only the range "
        f"that holds them)")
    print()
    explain(reader, "DBSIZE")
    before = per_shard(shards, "dbsize")
    total = reader.dbsize()
    say(f"-> {total} keys in all; DBSIZEs per shard: {delta(before, per_shard(shards, 'dbsize'))}")
    handles = sorted(k for k in keys if k.startswith("handle:al"))
    check(total == len(keys), f"every key written is there ({total} of {len(keys)})")
    check(on_one_shard(hgetalls) and profile.get("name") == "User 42",
          "the profile was read from one shard")
    check(on_one_shard(scans) and sorted(found) == handles,
          f"KEYS handle:al* found all {len(handles)} on one shard")


def viral_step(routers, shards, args, check):
    viral = f"post:{VIRAL}:likes"
    step(2, f"post {VIRAL} goes viral: likes pour in through both routers ({viral}, one INCR each)")
    say("hotkeys.auto_salt salts a counter whose INCRs stay above 2,000/s for 2 s")
    base = int(routers[0].get(viral) or 0)
    sent = 0
    salted_at = [None] * len(routers)
    started = time.monotonic()
    last = started
    incrs_before = per_shard(shards, "incr", writes=True)
    window = incrs_before
    spread_since = None
    while True:
        for router in routers:
            pipe = router.pipeline(transaction=False)
            for _ in range(500):
                pipe.execute_command("INCR", viral)  # redis-py's incr() would send INCRBY
            pipe.execute()
            sent += 500
        now = time.monotonic()
        if now - last < 1:
            continue
        last = now
        seen = [hot_key(router, viral) for router in routers]
        for i, entry in enumerate(seen):
            if entry and int(entry.get("salted", 0)) > 0 and salted_at[i] is None:
                salted_at[i] = now - started
        counts = per_shard(shards, "incr", writes=True)
        entry = seen[0] or {}
        salted = ", ".join(
            f"router {'AB'[i]} {'salted' if at is not None else 'not salted'}"
            for i, at in enumerate(salted_at))
        say(f"{now - started:4.1f} s  {sent:7,} likes  HOTKEYS: {float(entry.get('writes_per_sec', 0)):8,.0f} "
            f"writes/s on {entry.get('shard', '?')}  {salted}  INCRs per shard this second: "
            f"{delta(window, counts)}")
        window = counts
        if all(at is not None for at in salted_at):
            if spread_since is None:
                spread_since = (now, counts)
            elif now - spread_since[0] >= 3:
                break
        elif now - started > 30:
            # Each router salts on its own (see docs/hot-keys.md); one that has not seen enough
            # of the writes is salted by hand so that both read the whole count.
            for i, router in enumerate(routers):
                if salted_at[i] is None:
                    say(f"router {'AB'[i]} has not salted it yet: SANTRAL SALT {viral} 4 on it")
                    router.execute_command("SANTRAL", "SALT", viral, 4)
                    salted_at[i] = now - started
    entry = hot_key(routers[0], viral) or {}
    spread = delta(spread_since[1], per_shard(shards, "incr", writes=True))
    say()
    say(f"salted automatically after {salted_at[0]:.1f} s (router A) and {salted_at[1]:.1f} s "
        f"(router B): {entry.get('salted')} sub-keys, salted_by {entry.get('salted_by')}")
    say(f"INCRs per shard before salting: {delta(incrs_before, spread_since[1])}")
    say(f"INCRs per shard in the last 3 s: {spread}")
    reply = routers[0].execute_command("INCR", viral)
    sent += 1
    routers[0].execute_command("WAIT", 1, 5000)
    counts = [int(router.get(viral)) - base for router in routers]
    say(f"an INCR answers at once with an estimate, its sub-key's value times 4 ({reply:,} here;")
    say("the likes from before salting sit in sub-key 0 alone); GET adds the sub-keys up:")
    say(f"{counts[0]:,} through router A, {counts[1]:,} through router B, for {sent:,} likes "
        f"sent: {'exact' if counts == [sent, sent] else 'MISMATCH'}")
    check(all(n > 0 for n in spread), "once salted, every shard took some of the INCRs")
    check(counts == [sent, sent], "every like counted, through both routers")


def reads_step(routers, shards, args, check):
    post = f"post:{VIRAL}"
    step(3, f"everyone reads the viral post: {args.reads:,} GETs of {post}")
    say("near_cache: each worker answers GET of the keys it sees read hot, kept coherent by")
    say("Redis's invalidations")

    def read(count):
        for n in range(0, count, 500):
            for router in routers:
                pipe = router.pipeline(transaction=False)
                for _ in range(250):
                    pipe.get(post)
                pipe.execute()
        return count

    def hits():
        return sum(int(router.info("santral").get("near_cache_hits", 0)) for router in routers)

    def answered(gets_before, hits_before, sent):
        """Once every GET sent is counted, by a shard or by a router's near cache (the routers
        publish their counters to INFO on their next tick): the two deltas, else None."""
        gets, cached = delta(gets_before, per_shard(shards, "get")), hits() - hits_before
        return (gets, cached) if sum(gets) + cached >= sent else None

    before, hits_before = per_shard(shards, "get"), hits()
    started = time.monotonic()
    sent = 0
    while time.monotonic() - started < 2:
        sent += read(500)
    warm = until(lambda: answered(before, hits_before, sent), 5)
    say(f"the first 2 s, while Santral learns that the post is hot: GETs per shard "
        f"{warm[0] if warm else '?'}")
    warm_gets, hits_warm = per_shard(shards, "get"), hits()
    read(args.reads)
    after = until(lambda: answered(warm_gets, hits_warm, args.reads), 5)
    gets, cached = after or (delta(warm_gets, per_shard(shards, "get")), hits() - hits_warm)
    say(f"the next {args.reads:,} reads: GETs per shard {gets}, near-cache hits {cached:,}")
    check(after is not None and sum(gets) + cached == args.reads,
          f"each of the {args.reads:,} reads answered once, by a shard or the near cache")
    check(cached >= 0.9 * args.reads,
          f"the near cache answered at least 90% of them ({cached / args.reads:.1%})")


def shard_entry(config_text, name, servers):
    """The routers' config with one more shard at the end of its shards: list."""
    lines = config_text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("shards:"))
    end = start + 1
    item = None
    while end < len(lines) and (lines[end].startswith((" ", "#")) or not lines[end].strip()):
        if item is None and lines[end].lstrip().startswith("- "):
            item = lines[end][:len(lines[end]) - len(lines[end].lstrip())]
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    indent = item if item is not None else "  "
    entry = f"{indent}- name: {name}\n{indent}  address: {servers[0]}\n"
    if len(servers) > 1:
        entry += f"{indent}  replicas: [{', '.join(servers[1:])}]\n"
    return "".join(lines[:end]) + entry + "".join(lines[end:])


def reshard_status(router):
    return pairs(router.execute_command("SANTRAL", "RESHARD", "STATUS"))


def primaries_in_map(router):
    lines = router.execute_command("SANTRAL", "SHARDMAP")
    lines = lines.splitlines() if isinstance(lines, str) else lines
    return sum(1 for line in lines if line.startswith("shard:") and "role:primary" in line)


def misplaced_keys(router, shards):
    """Every key on the shards' primaries that is not where the router's map places it:
    [(key, shard it is on, shards the map names)]; and the keys found on each shard."""
    names = [f"shard{i}" for i in range(len(shards))]
    wrong, counts = [], []
    for index, servers in enumerate(shards):
        keys = list(servers[0].scan_iter(count=1000))
        counts.append(len(keys))
        for first in range(0, len(keys), 500):
            batch = keys[first:first + 500]
            pipe = router.pipeline(transaction=False)
            for key in batch:
                pipe.execute_command("SANTRAL", "EXPLAIN", "GET", key)
            for key, plan in zip(batch, pipe.execute()):
                targets = pairs(plan).get("shards") or []
                if names[index] not in targets:
                    wrong.append((key, names[index], targets))
    return wrong, counts


def grow_step(routers, shards, args, check):
    """The cluster grows: the fifth shard joins the fleet's map, a planned move; approve it and
    watch it while Chirp keeps writing; then check that nothing was lost and where keys are."""
    servers = args.join.split("+")
    name = f"shard{len(shards)}"
    step(4, f"the cluster grows: {name} ({servers[0]}) joins, moved in online while Chirp writes")
    host = endpoint(servers[0])[0]
    try:
        socket.getaddrinfo(host, None)
    except socket.gaierror:
        say(f"skipped: {host} is not running (with docker compose, the profile 'grow' starts it:")
        say("docker compose -f deploy/docker-compose.yml --profile grow up --build)")
        return
    joining = [connect(server) for server in servers]
    # Reads go to replicas (read_from: prefer-replica): the new ones must have synced first.
    synced = until(lambda: all(r.info("replication").get("master_link_status") == "up"
                               for r in joining[1:]), 30)
    if not check(synced, f"{name}'s replicas are in sync with its primary"):
        return
    text = shard_entry(open(args.config).read(), name, servers)
    reply = routers[0].execute_command("SANTRAL", "MAP", "PUSH", text)
    say(f"SANTRAL MAP PUSH of the config with {name}, through router A:")
    say(f"  {reply}")
    planned = until(lambda: reshard_status(routers[-1]).get("state") == "planned", 30)
    if not check(planned, "router B sees the planned move"):
        return
    shards.append(joining)
    router = routers[0]
    keys_before = [s[0].dbsize() for s in shards]
    say(f"keys per shard before: {keys_before} (the new {name} is empty)")
    say("SANTRAL RESHARD PLAN:")
    for line in router.execute_command("SANTRAL", "RESHARD", "PLAN").splitlines():
        say(f"  {line}")
    likes = f"post:{VIRAL}:likes"
    likes_before = int(router.get(likes) or 0)
    acked = {"likes": 0, "posts": []}
    stop = threading.Event()

    def write():
        writer = connect(args.routers.split(",")[0])
        n = 0
        while not stop.is_set():
            try:
                writer.incr(likes)
                acked["likes"] += 1
                writer.set(f"post:grow:{n}", f"written during the move {n}")
                acked["posts"].append(n)
            except redis.RedisError as error:
                say(f"write failed (retried): {error}")
            n += 1

    thread = threading.Thread(target=write)
    thread.start()
    address = args.routers.split(",")[0]
    try:
        if args.santral_bin:
            subprocess.run([args.santral_bin, "reshard", "approve", "--router", address],
                           check=True)
            say("santral reshard status --watch:")
            subprocess.run([args.santral_bin, "reshard", "status", "--watch", "--router", address],
                           check=True)
        else:
            say(f"SANTRAL RESHARD APPROVE: {router.execute_command('SANTRAL', 'RESHARD', 'APPROVE')}")
            watch(router)
    finally:
        stop.set()
        thread.join()
    idle = until(lambda: all(reshard_status(r).get("state") == "idle" for r in routers), 30, 0.1)
    status = reshard_status(router)
    keys_after = [s[0].dbsize() for s in shards]
    say(f"moved {status['keys_moved']} keys ({int(status['bytes_moved']) // 1024} KiB) in "
        f"{status['elapsed_s']} s; keys per shard after: {keys_after}")
    likes_after = int(router.get(likes) or 0)
    lost = [n for n in acked["posts"] if router.get(f"post:grow:{n}") is None]
    if lost:
        key = f"post:grow:{lost[0]}"
        held = [[server.exists(key) for server in servers] for servers in shards]
        say(f"{key} is held by (primary, replicas) per shard: {held}; Santral routes it: "
            f"{router.execute_command('SANTRAL', 'EXPLAIN', 'GET', key)}")
    say(f"likes: {likes_before} before + {acked['likes']} acknowledged during the move = "
        f"{likes_after}; posts written during the move: {len(acked['posts'])}, "
        f"missing: {len(lost)}")
    serving = until(lambda: all(primaries_in_map(r) == len(shards) for r in routers), 10, 0.1)
    say(f"router B serves the new map too: {primaries_in_map(routers[-1])} shards")
    wrong, counts = misplaced_keys(routers[-1], shards)
    for key, on, targets in wrong[:3]:
        say(f"{key} is on {on}; the map places it on {', '.join(targets) or '?'}")
    check(likes_after == likes_before + acked["likes"], "every like acknowledged is counted")
    check(acked["posts"] and not lost, "no post written during the move is missing")
    check(idle, "the move is over (idle) on both routers")
    check(serving, f"both routers serve the map with {name}")
    check(not wrong, f"every key is where the new map places it ({sum(counts)} keys looked up)")
    check(counts[-1] > 0, f"{name} holds its share: {counts[-1]} of {sum(counts)} keys "
          f"({counts[-1] / max(1, sum(counts)):.0%})")


def watch(router):
    """A move's progress from SANTRAL RESHARD STATUS, a line a second until it is idle."""
    shown, shown_at = None, 0.0
    while True:
        status = reshard_status(router)
        if status.get("state") == "idle":
            return
        line = (f"{status.get('state')}: {status.get('units_done')} of {status.get('units_total')} "
                f"units, {status.get('keys_moved')} keys moved")
        if line != shown or time.monotonic() - shown_at >= 1:
            say(f"  {line}")
            shown, shown_at = line, time.monotonic()
        time.sleep(0.2)


def dashboard_step(shards, args, check):
    step(5, f"watch it live on the dashboard: {args.dashboard or 'http://' + args.admin.split(',')[0] + '/'}")
    if not args.admin:
        return

    def page(admin, path):
        with urllib.request.urlopen(f"http://{admin}{path}", timeout=5) as response:
            return response.status, response.read().decode()

    for admin in args.admin.split(","):
        status, html = page(admin, "/")
        check(status == 200 and "<title>" in html, f"{admin} serves the dashboard")

        def all_up():
            listed = json.loads(page(admin, "/shards")[1])["shards"]
            up = [all(s["state"] == "up" for s in shard["servers"]) for shard in listed]
            return listed if len(listed) == len(shards) and all(up) else None

        listed = until(all_up, 10, 0.1)
        check(listed is not None, f"{admin}/shards lists the {len(shards)} shards, every server up")


def load(routers, args, rng):
    """A light, steady load for the dashboard, until SIGINT or SIGTERM."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    viral = f"post:{VIRAL}:likes"
    while True:
        for router in routers:
            pipe = router.pipeline(transaction=False)
            for _ in range(15):
                pipe.execute_command("INCR", viral)
            for _ in range(30):
                pipe.get(f"post:{VIRAL}")
            for _ in range(5):
                uid = rng.randrange(args.users)
                pipe.hgetall(f"user:{uid}:profile")
                pipe.get(f"post:{rng.randrange(args.posts)}")
            pipe.execute()
        time.sleep(0.1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routers", required=True, help="host:port,host:port of two routers")
    parser.add_argument("--shards", required=True,
                        help="each shard as primary[+replica...], comma separated")
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--posts", type=int, default=2000)
    parser.add_argument("--reads", type=int, default=20000)
    parser.add_argument("--join", help="step 4: the fifth shard, primary[+replica...]; the step "
                                       "is skipped when its host name does not resolve")
    parser.add_argument("--config", help="step 4: the routers' config file, proposed with the "
                                         "fifth shard added")
    parser.add_argument("--santral-bin", help="step 4: approve and watch the move with this "
                                              "santral binary's CLI (else with SANTRAL RESHARD)")
    parser.add_argument("--admin", help="step 5: the routers' admin listeners, host:port,...")
    parser.add_argument("--dashboard", help="step 5: the dashboard's address, as printed")
    parser.add_argument("--load", action="store_true",
                        help="after the story (or with --no-story instead of it), keep a light "
                             "load going until stopped")
    parser.add_argument("--no-story", action="store_true")
    args = parser.parse_args()
    if args.join and not args.config:
        parser.error("--join needs --config")

    routers = [connect(r) for r in args.routers.split(",")]
    writer, reader = routers[0], routers[-1]
    shards = [[connect(server) for server in shard.split("+")] for shard in args.shards.split(",")]
    rng = random.Random(500)

    check = Checks()
    if not args.no_story:
        print(f"Chirp: writes through {args.routers.split(',')[0]}, reads through "
              f"{args.routers.split(',')[-1]}")
        placement_step(writer, reader, shards, args, rng, check)
        viral_step(routers, shards, args, check)
        reads_step(routers, shards, args, check)
        if args.join:
            grow_step(routers, shards, args, check)
        if args.admin or args.dashboard:
            dashboard_step(shards, args, check)
        print()
        if check.failed:
            print(f"Chirp: {len(check.failed)} check(s) FAILED: {'; '.join(check.failed)}",
                  flush=True)
        else:
            print("Chirp: every step's checks passed", flush=True)
    if args.load:
        try:
            load(routers, args, rng)
        except KeyboardInterrupt:
            pass
    sys.exit(1 if check.failed else 0)


if __name__ == "__main__":
    main()

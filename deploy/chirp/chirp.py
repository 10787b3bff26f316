#!/usr/bin/python3
"""Chirp: the seeds' small social network, driven through Santral.

Tells the story of a sharded Chirp in steps, printing what each shard did (read from the
shards' own INFO commandstats):
  1. users, follows and posts placed by namespaces (users hashed by their id, handles in
     ranges so that "@al..." is one shard's scan, posts by the default ring), with SANTRAL
     EXPLAIN of a targeted read, a range scan and a broadcast;
  2. a post goes viral: likes pour in through both routers, SANTRAL HOTKEYS shows the key,
     automatic salting spreads its INCRs from one shard to all, and the count stays exact;
  3. everyone reads the viral post: the near cache answers, the shards' GETs stay flat.
(scripts/demo.sh adds step 4, the cluster growing, and 5, the dashboard's address.) Then,
with --load, keeps a light load going until stopped, for the dashboard.

  chirp.py --routers 127.0.0.1:6380,127.0.0.1:6381 --shards 127.0.0.1:7001+127.0.0.1:7101,...

Each shard is its primary, followed by its replicas after '+'; a shard's load is what all of
them served (Santral sends reads to replicas with read_from: prefer-replica). The routers'
config is config/examples/demo.yaml (deploy/santral.yaml in containers).
"""
import argparse
import json
import random
import signal
import subprocess
import sys
import threading
import time

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
    pipe = writer.pipeline(transaction=False)
    for uid in range(users):
        handle = handle_of(uid)
        pipe.hset(f"user:{uid}:profile", mapping={"name": f"User {uid}", "handle": handle})
        pipe.set(f"handle:{handle}", uid)
        for followee in rng.sample(range(users), 5):
            pipe.sadd(f"user:{uid}:follows", followee)
    for pid in range(posts):
        author = rng.randrange(users)
        pipe.set(f"post:{pid}", json.dumps({"author": author, "text": f"chirp number {pid}"}))
        pipe.lpush(f"user:{author}:posts", pid)
    pipe.execute()
    # Reads may go to replicas (read_from: prefer-replica): let them catch up first.
    writer.execute_command("WAIT", 1, 5000)


def placement_step(writer, reader, shards, args, rng):
    step(1, f"Chirp's {args.users} users, their follows and {args.posts} posts, placed by namespaces")
    say("users    user:{uid}:{what}  hashed by the user id: a user's profile, follows and posts")
    say("                            share a shard, with no hash tags in the keys")
    say("handles  handle:{name}      ranges of names: @-mention lookup scans one shard")
    say("posts    post:{id}          no namespace: the default ketama ring")
    seed(writer, rng, args.users, args.posts)
    say(f"keys per shard: {[servers[0].dbsize() for servers in shards]}")
    print()
    explain(reader, "HGETALL", "user:42:profile")
    before = per_shard(shards, "hgetall")
    profile = reader.hgetall("user:42:profile")
    follows = reader.smembers("user:42:follows")
    say(f"-> {profile['name']} (@{profile['handle']}) follows {sorted(int(f) for f in follows)}; "
        f"HGETALLs per shard: {delta(before, per_shard(shards, 'hgetall'))}")
    print()
    explain(reader, "KEYS", "handle:al*")
    before = per_shard(shards, "keys")
    found = reader.keys("handle:al*")
    say(f"-> {len(found)} handles starting with 'al'; KEYS per shard: "
        f"{delta(before, per_shard(shards, 'keys'))} (only the range that holds them)")
    print()
    explain(reader, "DBSIZE")
    before = per_shard(shards, "dbsize")
    total = reader.dbsize()
    say(f"-> {total} keys in all; DBSIZEs per shard: {delta(before, per_shard(shards, 'dbsize'))}")


def viral_step(routers, shards, args):
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
            # Each router salts on its own (see README, Hot keys); one that has not seen enough
            # of the writes is salted by hand so that both read the whole count.
            for i, router in enumerate(routers):
                if salted_at[i] is None:
                    say(f"router {'AB'[i]} has not salted it yet: SANTRAL SALT {viral} 4 on it")
                    router.execute_command("SANTRAL", "SALT", viral, 4)
                    salted_at[i] = now - started
    entry = hot_key(routers[0], viral) or {}
    say()
    say(f"salted automatically after {salted_at[0]:.1f} s (router A) and {salted_at[1]:.1f} s "
        f"(router B): {entry.get('salted')} sub-keys, salted_by {entry.get('salted_by')}")
    say(f"INCRs per shard before salting: {delta(incrs_before, spread_since[1])}")
    say(f"INCRs per shard in the last 3 s: {delta(spread_since[1], per_shard(shards, 'incr', writes=True))}")
    reply = routers[0].execute_command("INCR", viral)
    sent += 1
    routers[0].execute_command("WAIT", 1, 5000)
    counts = [int(router.get(viral)) - base for router in routers]
    say(f"an INCR answers at once with an estimate, its sub-key's value times 4 ({reply:,} here;")
    say("the likes from before salting sit in sub-key 0 alone); GET adds the sub-keys up:")
    say(f"{counts[0]:,} through router A, {counts[1]:,} through router B, for {sent:,} likes "
        f"sent: {'exact' if counts == [sent, sent] else 'MISMATCH'}")
    return counts == [sent, sent]


def reads_step(routers, shards, args):
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

    def hits():
        return sum(int(router.info("santral").get("near_cache_hits", 0)) for router in routers)

    before, hits_before = per_shard(shards, "get"), hits()
    started = time.monotonic()
    while time.monotonic() - started < 2:
        read(500)
    time.sleep(0.3)  # the routers publish their counters to INFO on every tick (100 ms at most)
    warm, hits_warm = per_shard(shards, "get"), hits()
    say(f"the first 2 s, while Santral learns that the post is hot: GETs per shard "
        f"{delta(before, warm)}")
    read(args.reads)
    time.sleep(0.3)
    after, hits_after = per_shard(shards, "get"), hits()
    say(f"the next {args.reads:,} reads: GETs per shard {delta(warm, after)}, "
        f"near-cache hits {hits_after - hits_warm:,}")


def grow_step(router, shards, args):
    """The cluster grows: the reload that added a shard is a planned move; approve it and watch
    it while Chirp keeps writing; then check that nothing was lost."""
    step(4, "the cluster grows: a fifth shard, moved in online while Chirp writes")
    keys_before = [servers[0].dbsize() for servers in shards]
    say(f"keys per shard before: {keys_before} (the new shard{len(shards) - 1} is empty)")
    say("SANTRAL RESHARD PLAN:")
    for line in router.execute_command("SANTRAL", "RESHARD", "PLAN").splitlines():
        say(f"  {line}")
    likes = f"post:{VIRAL}:likes"
    likes_before = int(router.get(likes) or 0)
    acked = {"likes": 0, "posts": []}
    stop = threading.Event()

    def write():
        writer = connect(f"{router.connection_pool.connection_kwargs['host']}:"
                         f"{router.connection_pool.connection_kwargs['port']}")
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
    address = args.santral_router or args.routers.split(",")[0]
    subprocess.run([args.santral_bin, "reshard", "approve", "--router", address], check=True)
    say("santral reshard status --watch:")
    subprocess.run([args.santral_bin, "reshard", "status", "--watch", "--router", address],
                   check=True)
    stop.set()
    thread.join()
    status = pairs(router.execute_command("SANTRAL", "RESHARD", "STATUS"))
    keys_after = [servers[0].dbsize() for servers in shards]
    say(f"moved {status['keys_moved']} keys ({int(status['bytes_moved']) // 1024} KiB) in "
        f"{status['elapsed_s']} s; keys per shard after: {keys_after}")
    likes_after = int(router.get(likes) or 0)
    lost = [n for n in acked["posts"] if router.get(f"post:grow:{n}") is None]
    exact = likes_after == likes_before + acked["likes"] and not lost
    if lost:
        key = f"post:grow:{lost[0]}"
        held = [[server.exists(key) for server in servers] for servers in shards]
        say(f"{key} is held by (primary, replicas) per shard: {held}; Santral routes it: "
            f"{router.execute_command('SANTRAL', 'EXPLAIN', 'GET', key)}")
    say(f"likes: {likes_before} before + {acked['likes']} acknowledged during the move = "
        f"{likes_after} ({'exact' if exact else 'WRONG'}); posts written during the move: "
        f"{len(acked['posts'])}, missing: {len(lost)}")
    return exact


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
    parser.add_argument("--load", action="store_true",
                        help="after the story (or with --no-story instead of it), keep a light "
                             "load going until stopped")
    parser.add_argument("--no-story", action="store_true")
    parser.add_argument("--grow", action="store_true",
                        help="instead of the story: step 4, approve and watch the planned move "
                             "of a reload that added a shard (needs --santral-bin)")
    parser.add_argument("--santral-bin", help="the santral binary, for santral reshard")
    parser.add_argument("--santral-router", help="host:port of the router that moves")
    parser.add_argument("--dashboard", help="the dashboard's address, printed after the story")
    args = parser.parse_args()

    routers = [connect(r) for r in args.routers.split(",")]
    writer, reader = routers[0], routers[-1]
    shards = [[connect(server) for server in shard.split("+")] for shard in args.shards.split(",")]
    rng = random.Random(500)

    exact = True
    if args.grow:
        sys.exit(0 if grow_step(writer, shards, args) else 1)
    if not args.no_story:
        print(f"Chirp: writes through {args.routers.split(',')[0]}, reads through "
              f"{args.routers.split(',')[-1]}")
        placement_step(writer, reader, shards, args, rng)
        exact = viral_step(routers, shards, args)
        reads_step(routers, shards, args)
        if args.dashboard:
            step(5, f"watch it live on the dashboard: {args.dashboard}")
    if args.load:
        try:
            load(routers, args, rng)
        except KeyboardInterrupt:
            pass
    sys.exit(0 if exact else 1)


if __name__ == "__main__":
    main()

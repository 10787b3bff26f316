#!/usr/bin/python3
"""Chirp: the seeds' small social network, driven through Santral.

Users, their follows and posts, and one post that goes viral, written through one router and
read through the other; then what each shard saw. Shows which requests Santral sends to one
shard (targeted) and which to all of them (broadcast).

  chirp.py --routers 127.0.0.1:6380,127.0.0.1:6381 --shards 127.0.0.1:7001+127.0.0.1:7101,...

Each shard is its primary, followed by its replicas after '+'; a shard's load is what all of
them served (Santral sends reads to replicas with read_from: prefer-replica).
"""
import argparse
import random
import sys
import time

import redis


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


def calls(shard, command):
    stats = shard.info("commandstats")
    return stats.get(f"cmdstat_{command}", {}).get("calls", 0)


def per_shard(shards, command, writes=False):
    # A write runs on the primary and again on each replica that copies it: count it once.
    return [sum(calls(server, command) for server in (servers[:1] if writes else servers))
            for servers in shards]


def delta(before, after):
    return [b - a for a, b in zip(before, after)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routers", required=True, help="host:port,host:port of two routers")
    parser.add_argument("--shards", required=True,
                        help="each shard as primary[+replica...], comma separated")
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--posts", type=int, default=1000)
    parser.add_argument("--likes", type=int, default=5000)
    args = parser.parse_args()

    routers = [connect(r) for r in args.routers.split(",")]
    writer, reader = routers[0], routers[-1]
    shards = [[connect(server) for server in shard.split("+")] for shard in args.shards.split(",")]
    rng = random.Random(500)

    print(f"== Chirp: {args.users} users, {args.posts} posts, a post with {args.likes} likes")
    # A user's profile, follows and posts share the hash tag {u<id>}: one shard holds them all,
    # so a user's page is one shard's work and a transaction on it is possible.
    pipe = writer.pipeline(transaction=False)
    for uid in range(args.users):
        pipe.hset(f"user:{{u{uid}}}", mapping={"name": f"user{uid}", "joined": 2024})
        for followee in rng.sample(range(args.users), 5):
            pipe.sadd(f"user:{{u{uid}}}:follows", followee)
    for pid in range(args.posts):
        author = rng.randrange(args.users)
        pipe.hset(f"post:{pid}", mapping={"author": author, "text": f"chirp number {pid}"})
        pipe.lpush(f"user:{{u{author}}}:posts", pid)
    pipe.execute()
    # Reads may go to replicas (read_from: prefer-replica): let them catch up first.
    writer.execute_command("WAIT", 1, 5000)

    # The viral post: every like is an INCR of one key, so one shard takes them all (the
    # seeds' hot key; Santral's salting spreads such a counter).
    viral = "post:500:likes"
    before = per_shard(shards, "incr", writes=True)
    pipe = writer.pipeline(transaction=False)
    for i in range(args.likes):
        pipe.execute_command("INCR", viral)  # redis-py's incr() would send INCRBY
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    incrs = delta(before, per_shard(shards, "incr", writes=True))
    writer.execute_command("WAIT", 1, 5000)
    print(f"   {viral} = {reader.get(viral)} likes; INCRs per shard: {incrs}")

    print("== targeted: one user's page, read through the other router")
    before = per_shard(shards, "hgetall")
    profile = reader.hgetall("user:{u42}")
    follows = reader.smembers("user:{u42}:follows")
    print(f"   user 42: {profile['name']}, follows {sorted(int(f) for f in follows)}")
    print(f"   HGETALLs per shard: {delta(before, per_shard(shards, 'hgetall'))} (one shard)")

    print("== split: the likes of ten posts in one MGET")
    before = per_shard(shards, "mget")
    reader.mget([f"post:{pid}:likes" for pid in range(495, 505)])
    print(f"   MGETs per shard: {delta(before, per_shard(shards, 'mget'))} (one per shard holding some)")

    print("== broadcast: how many keys in all")
    before = per_shard(shards, "dbsize")
    total = reader.dbsize()
    print(f"   DBSIZE = {total}; DBSIZEs per shard: {delta(before, per_shard(shards, 'dbsize'))}")

    print("== keys per shard")
    for i, servers in enumerate(shards):
        print(f"   shard{i}: {servers[0].dbsize()} keys")


if __name__ == "__main__":
    main()

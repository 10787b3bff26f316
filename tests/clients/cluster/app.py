#!/usr/bin/python3
"""The application of app.mjs with redis-py (Debian's python3-redis): RedisCluster, or Redis.

  MODE=cluster|standalone SEEDS=h:p,h:p PREFIX=x DURATION_S=8 /usr/bin/python3 app.py

Exits 0 and prints PASS, or prints FAIL lines and exits 1.
"""
import os
import sys
import threading
import time

import redis
from redis.cluster import ClusterNode, RedisCluster

MODE = os.environ.get("MODE", "cluster")
SEEDS = [s.split(":") for s in os.environ["SEEDS"].split(",") if s]
P = os.environ.get("PREFIX", "redis-py")
DURATION = float(os.environ.get("DURATION_S", "8"))
failures = 0
retries = 0
# A command in flight on the router that is killed may have run on its shard; a client library
# that sends it again by itself runs it twice. One command is in flight at a time: once at most.
resent = 0
r = None  # the client; made again when a node it knows stays away (see retry)


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL redis-py {MODE}: {what}", flush=True)


def retry(what, f):
    """What an application does about a router that went away: try again for a while. A
    cluster pipeline that cannot connect to a node does not ask for the topology again (only
    single commands do), so after a second of failures the client is made again."""
    global retries, r
    until = time.time() + 20
    failed = 0
    while True:
        try:
            return f()
        # redis-py 4.3 raises RedisClusterException (not a RedisError) when it cannot read the
        # topology from a seed, e.g. the router that died.
        except (redis.RedisError, redis.exceptions.RedisClusterException) as e:
            if time.time() > until:
                raise RuntimeError(f"{what}: {e}") from e
            retries += 1
            failed += 1
            time.sleep(0.1)
            if failed % 10 == 0 and MODE == "cluster" and r is not None:
                try:
                    r = connect()
                except Exception:  # the old client goes on; this is tried again later
                    pass


def connect():
    if MODE == "cluster":
        # cluster_error_retry_attempts=1: by default redis-py also sends a command again to the
        # node of its new topology after the connection it went out on closed without a reply
        # (docs/compatibility.md); the application decides what to send again (retry,
        # push_once), and counts an INCR that failed as sent only.
        return RedisCluster(startup_nodes=[ClusterNode(h, int(p)) for h, p in SEEDS],
                            decode_responses=True, socket_timeout=2, socket_connect_timeout=2,
                            cluster_error_retry_attempts=1)
    return redis.Redis(host=SEEDS[0][0], port=int(SEEDS[0][1]), decode_responses=True,
                       socket_timeout=2)


def push_once(key):
    """RPUSH a, b, c to an empty list, sent again only when it did not run: a push whose
    connection closed before the reply may have run (the list's only writer looks)."""
    if not r.exists(key):
        r.rpush(key, "a", "b", "c")


def transaction(r, a, b):
    # redis-py's cluster pipeline has no transactions: the node that holds the tag runs it.
    node = r.get_redis_connection(r.get_node_from_key(a)) if MODE == "cluster" else r
    pipe = node.pipeline(transaction=True)
    pipe.incr(a)
    pipe.incr(b)
    pipe.execute()


def pubsub(r, channel, n):
    sub = r.pubsub()
    sub.subscribe(channel)
    heard = []
    deadline = time.time() + 5
    while time.time() < deadline:  # the subscription's confirmation
        m = sub.get_message(timeout=0.2)
        if m and m["type"] == "subscribe":
            break
    for i in range(n):
        r.publish(channel, str(i))
    while len(heard) < n and time.time() < deadline + 5:
        m = sub.get_message(timeout=0.2)
        if m and m["type"] == "message":
            heard.append(m["data"])
    sub.close()
    return heard


def main():
    global r
    r = retry("connect", connect)
    started = time.time()
    rounds = incr_sent = incr_acked = tx_acked = 0
    counter, tx_a, tx_b = f"{P}:counter", f"{{{P}:tx}}:a", f"{{{P}:tx}}:b"
    global retries, resent
    for key in (counter, tx_a, tx_b, f"{P}:z"):
        retry("del", lambda: r.delete(key))
    while time.time() - started < DURATION:
        i = rounds
        s = f"{P}:s:{i}"
        retry("set", lambda: r.set(s, f"v{i}"))
        check(retry("get", lambda: r.get(s)) == f"v{i}", f"GET {s}")
        h = f"{P}:h:{i}"
        retry("hset", lambda: r.hset(h, mapping={"f1": "a", "f2": str(i)}))
        check(retry("hgetall", lambda: r.hgetall(h)) == {"f1": "a", "f2": str(i)}, f"HGETALL {h}")
        lk = f"{P}:l:{i}"
        retry("del", lambda: r.delete(lk))
        retry("rpush", lambda: push_once(lk))
        got = retry("lrange", lambda: r.lrange(lk, 0, -1))
        if MODE == "cluster" and got == ["a", "b", "c"] * 2:
            resent += 1
        else:
            check(got == ["a", "b", "c"], f"LRANGE {lk}: {got}")
        retry("zadd", lambda: r.zadd(f"{P}:z", {f"m{i}": i}))
        incr_sent += 1
        try:
            r.incr(counter)
            incr_acked += 1
        except redis.RedisError:
            retries += 1
        t = f"{{{P}:pl}}"

        def piped():
            pipe = r.pipeline()
            pipe.set(f"{t}:a", str(i))
            pipe.set(f"{t}:b", str(i))
            pipe.get(f"{t}:a")
            return pipe.execute()[2]
        check(retry("pipeline", piped) == str(i), "pipeline")
        m = [f"{{{P}:m}}:a", f"{{{P}:m}}:b", f"{{{P}:m}}:c"]
        retry("mset", lambda: r.mset({k: f"{k}={i}" for k in m}))
        check(retry("mget", lambda: r.mget(m)) == [f"{k}={i}" for k in m], "MGET")
        try:
            transaction(r, tx_a, tx_b)
            tx_acked += 1
        except redis.RedisError:
            retries += 1
        rounds += 1
        time.sleep(0.02)
    z = retry("zrange", lambda: r.zrange(f"{P}:z", 0, -1))
    check(len(z) == rounds and z[0] == "m0", f"ZRANGE: {len(z)} members, want {rounds}")
    value = int(retry("get", lambda: r.get(counter)))
    if MODE == "cluster" and value == incr_sent + 1:
        resent += 1
    else:
        check(incr_acked <= value <= incr_sent,
              f"counter {value}: {incr_acked} acked, {incr_sent} sent")
    check(resent <= 1, f"{resent} commands ran twice (at most the one in flight on the killed router)")
    a, b = (int(retry("get", lambda k=k: r.get(k))) for k in (tx_a, tx_b))
    check(a == b and a >= tx_acked, f"transaction counters {a} and {b}, {tx_acked} acknowledged")
    heard = retry("pubsub", lambda: pubsub(r, f"{P}:news", 10))
    check(heard == [str(i) for i in range(10)], f"pub/sub heard {heard}")
    keys = set(retry("scan", lambda: list(r.scan_iter(match=f"{P}:s:*", count=1000))))
    check(len(keys) == rounds, f"SCAN found {len(keys)} of {rounds} string keys")
    r.close()
    print(f"{'FAIL' if failures else 'PASS'} redis-py {MODE}: {rounds} rounds, {retries} retries, "
          f"{resent} command resent by the client", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a retry that gave up
        print(f"FAIL redis-py {MODE}: {e}", flush=True)
        sys.exit(1)

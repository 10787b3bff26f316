"""scripts/bench.sh fleet: what a fleet of routers on etcd costs (run by bench_fleet.sh).

  push     SANTRAL MAP PUSH through one router, then the time until every router serves the
           new version (SANTRAL SHARDMAP), ROUNDS times; beside it, one router without a fleet
           taking a SANTRAL RELOAD (the same change, from its own file).
  move     GETs of random loaded keys through one router before and during a move that adds a
           shard; afterwards each key is classed by whether it moved (it is on the new shard
           now): p50/p99/max of each class, in microseconds.
  fence    cluster.fence: acl. One router SIGSTOPped, ROUNDS times: the time until the others
           stop listing it (its lease expired) and from then until its shard user is off on
           every shard with none of its connections left; then SIGCONT, and it joins again.
"""
import os
import random
import signal
import statistics
import sys
import time

import redis


def version(router):
    return int(router.execute_command("SANTRAL", "SHARDMAP").split(b"\n", 1)[0].split(b":")[1])


def push(routers, texts, rounds):
    took = []
    for i in range(rounds):
        before = [version(r) for r in routers]
        start = time.perf_counter()
        routers[1].execute_command("SANTRAL", "MAP", "PUSH", texts[i % 2])
        while any(version(r) == b for r, b in zip(routers, before)):
            time.sleep(0.001)
        took.append((time.perf_counter() - start) * 1000)
    return took


def reload_alone(router, path, texts, rounds):
    took = []
    for i in range(rounds):
        before = version(router)
        with open(path, "w") as out:
            out.write(texts[i % 2])
        start = time.perf_counter()
        router.execute_command("SANTRAL", "RELOAD")
        while version(router) == before:
            time.sleep(0.001)
        took.append((time.perf_counter() - start) * 1000)
    return took


def fields(entry):
    return {entry[i].decode(): entry[i + 1] for i in range(0, len(entry) - 1, 2)}


def fence_user(asker, listen):
    for entry in asker.execute_command("SANTRAL", "ROUTERS"):
        f = fields(entry)
        if f["listen"].decode() == listen:
            return f["fence_user"].decode()
    return None


def shut_out(shard, user):
    got = shard.execute_command("ACL", "GETUSER", user)
    flags = [x.decode() for x in fields(got)["flags"]] if got else []
    return "off" in flags and f" user={user} ".encode() not in shard.execute_command("CLIENT", "LIST")


def wait(condition, timeout=60.0):
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise SystemExit("fleet_probe fence: timed out")
        time.sleep(0.005)
    return time.perf_counter()


def fence(asker, listen, frozen, shards, pid, rounds):
    expired, fenced = [], []
    for _ in range(rounds):
        user = fence_user(asker, listen)
        while not user:
            time.sleep(0.01)
            user = fence_user(asker, listen)
        frozen.set("fence:probe", "1")  # its connections to the shards are open
        os.kill(pid, signal.SIGSTOP)
        stopped = time.perf_counter()
        gone = wait(lambda: fence_user(asker, listen) is None)
        done = wait(lambda: all(shut_out(s, user) for s in shards))
        expired.append((gone - stopped) * 1000)
        fenced.append((done - gone) * 1000)
        os.kill(pid, signal.SIGCONT)
        wait(lambda: fence_user(asker, listen) not in (None, user))
        wait(lambda: _answers(frozen))
    return expired, fenced


def _answers(router):
    try:
        return router.set("fence:probe", "2")
    except redis.RedisError:
        return False


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0


def line(name, values):
    return (f"| {name} | {len(values)} | {statistics.median(values):.0f} | {pct(values, 0.99):.0f} |"
            f" {max(values):.0f} |")


def main():
    mode = sys.argv[1]
    if mode == "push":
        ports = [int(p) for p in sys.argv[2].split(",")]
        alone_port, alone_path, text_a, text_b = int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
        rounds = int(sys.argv[7])
        routers = [redis.Redis(port=p) for p in ports]
        texts = [open(text_a).read(), open(text_b).read()]
        fleet = push(routers, texts, rounds)
        alone = reload_alone(redis.Redis(port=alone_port), alone_path,
                             [open(text_b).read() + "listen: 127.0.0.1:%d\n" % alone_port,
                              open(text_a).read() + "listen: 127.0.0.1:%d\n" % alone_port], rounds)
        print("| change | rounds | median ms | p99 ms | max ms |")
        print("|---|---|---|---|---|")
        print(line("fleet of 3: SANTRAL MAP PUSH until every router serves it (poll_ms 100)", fleet))
        print(line("one router, no fleet: SANTRAL RELOAD until it serves it", alone))
    elif mode == "move":
        port, keys, shard_port, seconds_before = (int(sys.argv[2]), int(sys.argv[3]),
                                                  int(sys.argv[4]), float(sys.argv[5]))
        router = redis.Redis(port=port)
        samples = []  # (phase, key, microseconds)
        phase = "before"
        end_before = time.time() + seconds_before
        while True:
            if phase == "before" and time.time() > end_before:
                phase = "during"
                sys.stdout.write("GO\n")
                sys.stdout.flush()
                start_move = time.time()
            key = f"key:{random.randrange(keys):012d}"
            t = time.perf_counter()
            router.get(key)
            samples.append((phase, key, (time.perf_counter() - t) * 1e6))
            if phase == "during" and len(samples) % 200 == 0:
                state = dict(zip(*[iter(router.execute_command("SANTRAL", "RESHARD", "STATUS"))] * 2))
                if state[b"state"] == b"idle" and time.time() - start_move > 1:
                    break
        new_shard = redis.Redis(port=shard_port)
        moved = {k for _, k, _ in samples if new_shard.exists(k)}
        groups = {"before the move, every key": [u for p, _, u in samples if p == "before"],
                  "during the move, keys that stayed": [u for p, k, u in samples
                                                        if p == "during" and k not in moved],
                  "during the move, keys that moved": [u for p, k, u in samples
                                                       if p == "during" and k in moved]}
        print("| GET through a router of the fleet | requests | p50 µs | p99 µs | max µs |")
        print("|---|---|---|---|---|")
        for name, values in groups.items():
            if values:
                print(line(name, values))
    elif mode == "fence":
        asker_port, frozen_port, pid, rounds = (int(sys.argv[2]), int(sys.argv[3]),
                                                int(sys.argv[5]), int(sys.argv[6]))
        shards = [redis.Redis(port=int(p)) for p in sys.argv[4].split(",")]
        expired, fenced = fence(redis.Redis(port=asker_port), f"127.0.0.1:{frozen_port}",
                                redis.Redis(port=frozen_port), shards, pid, rounds)
        print("| a router SIGSTOPped (lease_ttl_s 2, fence: acl) | rounds | median ms | p99 ms | max ms |")
        print("|---|---|---|---|---|")
        print(line("from SIGSTOP until the others stop listing it (its lease expired)", expired))
        print(line("from then until its user is off and its connections closed on every shard",
                   fenced))


if __name__ == "__main__":
    main()

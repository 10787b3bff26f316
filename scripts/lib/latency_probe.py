#!/usr/bin/env python3
"""GET latency of one client, phase by phase (scripts/bench.sh reshard).

  latency_probe.py <port> <keys> <rate>

Sends GET key:<12-digit random number below keys> (redis-benchmark's key:__rand_int__ names),
one at a time on one connection, <rate> a second at most (0: as fast as replies come), and
times each reply (a reply slower than the interval delays the next request; there is no
catching up). A line on stdin names the
phase the following requests belong to ("before", "during", ...); at the end of stdin it
prints one line per phase: name, requests, p50, p99, p99.9 and max latency in ms, the second
(from the phase's start) in which the slowest request was sent, and how many replies were
errors.
"""
import os
import random
import select
import socket
import sys
import time

from resp_framing import command, reply_end


def read_reply(sock, buffer):
    """Reads one RESP reply to a GET (bulk, nil or error); returns the unread rest and
    whether it was an error."""
    while True:
        end = reply_end(buffer)
        if end:
            return buffer[end:], buffer[:1] == b"-"
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("closed")
        buffer += chunk


def percentile(values, p):
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(len(values) * p))]


def main():
    port, keys, rate = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    interval = int(1e9 / rate) if rate > 0 else 0
    next_send = 0
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    stdin = sys.stdin.fileno()
    os.set_blocking(stdin, False)
    phases = []  # [name, started, [latency ns], [sent at ns], errors]
    pending = b""
    buffer = b""
    phase = None
    rng = random.Random(7)
    while True:
        wait = None
        if phase:
            wait = max(0, next_send - time.monotonic_ns()) / 1e9
        ready, _, _ = select.select([stdin], [], [], wait)
        if ready:
            data = os.read(stdin, 4096)
            if not data:
                break
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.strip():
                    phase = [line.strip().decode(), time.monotonic_ns(), [], [], 0]
                    phases.append(phase)
        if phase is None or time.monotonic_ns() < next_send:
            continue
        key = f"key:{rng.randrange(keys):012d}".encode()
        request = command(b"GET", key)
        sent = time.monotonic_ns()
        next_send = max(next_send, sent) + interval
        try:
            sock.sendall(request)
            buffer, failed = read_reply(sock, buffer)
        except OSError as e:  # the server went away: report what was measured
            print(f"error {e}", file=sys.stderr, flush=True)
            break
        phase[2].append(time.monotonic_ns() - sent)
        phase[3].append(sent)
        phase[4] += failed
    for name, started, latencies, sent, errors in phases:
        if not latencies:
            print(f"{name} 0 0 0 0 0 0 0", flush=True)
            continue
        slowest = max(range(len(latencies)), key=latencies.__getitem__)
        ordered = sorted(latencies)
        ms = [percentile(ordered, p) / 1e6 for p in (0.50, 0.99, 0.999)]
        print(f"{name} {len(ordered)} {ms[0]:.3f} {ms[1]:.3f} {ms[2]:.3f} {ordered[-1] / 1e6:.3f} "
              f"{(sent[slowest] - started) / 1e9:.2f} {errors}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main()

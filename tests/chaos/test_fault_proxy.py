#!/usr/bin/python3
"""Checks tests/support/fault_proxy.py against a real redis-server: each fault does what its
documentation says, through the control port of a proxy run as a child process (as the chaos
harness and the C++ tests drive it) and through the in-process API.

    /usr/bin/python3 tests/chaos/test_fault_proxy.py      # prints `fault proxy: N passed`
"""

import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import fault_proxy  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_command(sock, *args):
    out = f"*{len(args)}\r\n".encode()
    for a in args:
        a = str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    sock.sendall(out)


def read_line(sock):
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data.decode().rstrip("\r\n")


def connect(port, timeout=2.0):
    return socket.create_connection(("127.0.0.1", port), timeout)


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def check(self, what, ok):
        if ok:
            self.passed += 1
        else:
            self.failed.append(what)
            print(f"FAILED: {what}")


def main():
    checks = Checks()
    check = checks.check
    tmp = tempfile.mkdtemp(prefix="fault-proxy-test-")
    redis_port = free_port()
    redis = subprocess.Popen(
        ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", tmp],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    try:
        deadline = time.time() + 10
        while True:
            try:
                with connect(redis_port) as s:
                    redis_command(s, "PING")
                    if read_line(s) == "+PONG":
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

        proxy = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "..", "support", "fault_proxy.py"),
             "--link", f"r={redis_port}", "--link", f"dead={free_port()}"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ports = {}
        control_port = None
        for line in proxy.stdout:
            words = line.split()
            if words[0] == "control":
                control_port = int(words[1])
            elif words[0] == "link":
                ports[words[1]] = int(words[2])
            elif words[0] == "ready":
                break
        control = fault_proxy.ProxyControl(control_port)
        port = ports["r"]
        check("PING on the control port", control.command("PING") == "PONG")

        # pass
        s = connect(port)
        redis_command(s, "SET", "k", "v")
        check("pass forwards", read_line(s) == "+OK")

        # delay: answers come after about twice the delay
        control.fault("r", "delay", 200)
        t0 = time.monotonic()
        redis_command(s, "PING")
        check("delay answers", read_line(s) == "+PONG")
        took = time.monotonic() - t0
        check(f"delay 200 ms each way takes about 400 ms (took {took:.3f})", 0.35 < took < 1.0)
        # order kept across a change of delay
        for i in range(5):
            redis_command(s, "INCR", "ctr")
        control.fault("r", "pass")
        got = [read_line(s) for _ in range(5)]
        check("delay keeps order when lifted", got == [":1", ":2", ":3", ":4", ":5"])

        # stall: existing connections hold their bytes, new ones are held unconnected
        control.fault("r", "stall")
        redis_command(s, "INCR", "ctr")
        s.settimeout(0.5)
        try:
            read_line(s)
            check("stall holds an existing connection", False)
        except socket.timeout:
            check("stall holds an existing connection", True)
        fresh = connect(port)  # accepted
        check("stall accepts new connections", True)
        redis_command(fresh, "GET", "k")
        fresh.settimeout(0.5)
        try:
            read_line(fresh)
            check("stall holds a new connection", False)
        except socket.timeout:
            check("stall holds a new connection", True)
        # A request sent during the stall by a client that then gives up never runs.
        gone = connect(port)
        redis_command(gone, "INCR", "dropped")
        time.sleep(0.1)
        gone.close()
        time.sleep(0.1)
        control.fault("r", "pass")
        s.settimeout(2)
        fresh.settimeout(2)
        check("stall delivers held bytes when lifted", read_line(s) == ":6")
        check("stall connects held connections when lifted",
              read_line(fresh) == "$1" and read_line(fresh) == "v")
        redis_command(s, "GET", "dropped")
        check("a connection closed during a stall has its bytes dropped", read_line(s) == "$-1")
        fresh.close()

        # reset: current connections get an RST, new ones too
        control.fault("r", "reset")
        try:
            s.settimeout(2)
            data = s.recv(10)
            check("reset closes current connections", data == b"")
        except ConnectionResetError:
            check("reset closes current connections with RST", True)
        try:
            n = connect(port)
            n.settimeout(2)
            redis_command(n, "PING")
            data = n.recv(10)
            check("reset resets new connections", data == b"")
        except (ConnectionResetError, BrokenPipeError):
            check("reset resets new connections with RST", True)
        control.fault("r", "pass")
        s = connect(port)
        redis_command(s, "PING")
        check("after reset a new connection works", read_line(s) == "+PONG")

        # Late delivery: what a sender wrote and then gave up on (closed its connection) still
        # reaches the target, after the fault: `stall deliver`, `stall-next`, a long `delay`.
        def direct_get(key):
            with connect(redis_port) as g:
                redis_command(g, "GET", key)
                head = read_line(g)
                return None if head == "$-1" else read_line(g)

        def eventually(key, value, seconds=5.0):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if direct_get(key) == value:
                    return True
                time.sleep(0.02)
            return False

        def read_by_proxy(before, n, seconds=5.0):
            """Waits until the proxy has read n more bytes upward than `before`."""
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if int(control.status("r")["bytes_up"]) >= before + n:
                    return True
                time.sleep(0.02)
            return False

        incr = len("*2\r\n$4\r\nINCR\r\n") + len("$8\r\nlate-old\r\n")
        old = connect(port)
        redis_command(old, "PING")
        check("stall deliver: a connection made before it works", read_line(old) == "+PONG")
        control.fault("r", "stall", "deliver")
        check("stall deliver shows in STATUS", control.status("r")["fault"] == "stall=deliver")
        before = int(control.status("r")["bytes_up"])
        redis_command(old, "INCR", "late-old")
        new = connect(port)
        redis_command(new, "INCR", "late-new")
        check("stall deliver reads what both send", read_by_proxy(before, 2 * incr))
        old.close()
        new.close()
        time.sleep(0.2)  # the proxy sees both ends of file (nothing to observe: a non-event)
        check("stall deliver holds the bytes of closed connections",
              direct_get("late-old") is None and direct_get("late-new") is None)
        control.fault("r", "pass")
        check("stall deliver: a closed connection's request runs once the stall is lifted",
              eventually("late-old", "1"))
        check("stall deliver: a closed new connection's request runs once the stall is lifted",
              eventually("late-new", "1"))

        control.fault("r", "stall-next", 1)
        before = int(control.status("r")["bytes_up"])
        held = connect(port)
        redis_command(held, "INCR", "late-nxt")
        flowing = connect(port)
        flowing.settimeout(2)
        redis_command(flowing, "PING")
        check("stall-next: the connection after the held one flows", read_line(flowing) == "+PONG")
        check("stall-next reads the held connection's bytes", read_by_proxy(before, incr + 14))
        held.close()
        check("stall-next holds the bytes of the held connection", direct_get("late-nxt") is None)
        redis_command(flowing, "PING")
        check("stall-next: other connections still flow", read_line(flowing) == "+PONG")
        control.fault("r", "pass")
        check("stall-next: a closed held connection's request runs once the fault changes",
              eventually("late-nxt", "1"))
        flowing.close()

        control.fault("r", "delay", 800)
        d = connect(port)
        t0 = time.monotonic()
        redis_command(d, "INCR", "late-dly")
        d.close()
        early = direct_get("late-dly")
        check("a long delay: a closed connection's request not run before its delay",
              early is None or time.monotonic() - t0 >= 0.8)
        check("a long delay: a closed connection's request runs after its delay",
              eventually("late-dly", "1") and time.monotonic() - t0 >= 0.75)
        control.fault("r", "pass")

        # blackhole: no answer, no close, for good
        control.fault("r", "blackhole")
        redis_command(s, "INCR", "bh")
        b = connect(port)
        redis_command(b, "INCR", "bh")
        for sock, what in ((s, "an existing"), (b, "a new")):
            sock.settimeout(0.5)
            try:
                data = sock.recv(10)
                check(f"blackhole keeps {what} connection open and silent (got {data!r})", False)
            except socket.timeout:
                check(f"blackhole keeps {what} connection open and silent", True)
        control.fault("r", "pass")
        redis_command(s, "PING")
        try:
            data = s.recv(10)
            check("a blackholed connection stays blackholed", False)
        except socket.timeout:
            check("a blackholed connection stays blackholed", True)
        s.close()
        b.close()
        s = connect(port)
        redis_command(s, "GET", "bh")
        check("blackhole discarded what it read", read_line(s) == "$-1")

        # refuse: connects refused, then listening again on the same port
        control.fault("r", "refuse")
        try:
            connect(port).close()
            check("refuse refuses connects", False)
        except ConnectionRefusedError:
            check("refuse refuses connects", True)
        redis_command(s, "PING")
        check("refuse leaves existing connections", read_line(s) == "+PONG")
        control.fault("r", "pass")
        n = connect(port)
        redis_command(n, "PING")
        check("after refuse the port listens again", read_line(n) == "+PONG")
        n.close()

        # a dead target: the client is reset (on a loaded machine the reset can come before
        # connect() returns: Linux then answers the connect itself with ECONNRESET)
        try:
            d = connect(ports["dead"])
            d.settimeout(2)
            check("a refused target closes the client", d.recv(10) == b"")
        except ConnectionResetError:
            check("a refused target resets the client", True)

        # STATUS, LINKS, ADD, KILL, errors
        status = control.status("r")
        check("STATUS counts connections", int(status["accepted"]) >= 5)
        check("LINKS lists both", "r:" in control.command("LINKS") and "dead:" in control.command("LINKS"))
        new_port = int(control.command(f"ADD r2 {redis_port}"))
        n = connect(new_port)
        redis_command(n, "PING")
        check("ADD makes a working link", read_line(n) == "+PONG")
        check("KILL resets current connections", control.command("KILL r2") == "1")
        try:
            control.fault("r", "bogus")
            check("an unknown fault is refused", False)
        except RuntimeError:
            check("an unknown fault is refused", True)
        check("the short form works", control.command("* pass") == "")

        # in-process API
        inproc = fault_proxy.FaultProxy()
        p = inproc.add("x", redis_port)
        n = connect(p)
        redis_command(n, "PING")
        check("in-process proxy forwards", read_line(n) == "+PONG")
        inproc.fault("x", "delay", 100)
        t0 = time.monotonic()
        redis_command(n, "PING")
        read_line(n)
        check("in-process delay", time.monotonic() - t0 > 0.15)
        check("in-process control line", inproc.command("STATUS x").startswith("OK fault=delay=100"))
        inproc.close()

        # exits when its stdin closes
        control.close()
        proxy.stdin.close()
        try:
            proxy.wait(5)
            check("exits when stdin closes", proxy.returncode == 0)
        except subprocess.TimeoutExpired:
            check("exits when stdin closes", False)
    finally:
        if proxy is not None and proxy.poll() is None:
            proxy.kill()
        redis.kill()
        redis.wait()
    print(f"fault proxy: {checks.passed} passed, {len(checks.failed)} failed")
    return 0 if not checks.failed else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Checks the chaos harness's client (tests/chaos/client.py) against a scripted server: each
reply is classified as its docstring says, and a connection redis-py closes on its own is never
reopened behind the harness's back (a MULTI sent on the old one would silently be gone).

    /usr/bin/python3 tests/chaos/test_client.py      # prints `chaos client: N passed`
"""

import os
import socket
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import client as chaos_client  # noqa: E402


class ScriptedServer:
    """Answers each command on each connection with the next line of `replies` (shared by all
    connections, in order), and records which connection each command came on."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.seen = []  # (connection number, command words)
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                number = self.connections
            threading.Thread(target=self._serve, args=(sock, number), daemon=True).start()

    def _serve(self, sock, number):
        reader = sock.makefile("rb")
        try:
            while True:
                head = reader.readline()
                if not head:
                    return
                words = []
                for _ in range(int(head[1:])):
                    length = int(reader.readline()[1:])
                    words.append(reader.read(length + 2)[:-2].decode())
                with self.lock:
                    self.seen.append((number, words))
                    reply = self.replies.pop(0)
                sock.sendall(reply.encode() + b"\r\n")
        except (OSError, ValueError):
            return
        finally:
            sock.close()

    def close(self):
        self.listener.close()


class Env:
    """What client.Client asks of the harness."""

    def __init__(self, port):
        self.port = port
        self.errors = chaos_client.ErrorLog()

    def port_for(self, _client):
        return self.port

    def register_client(self, _client):
        pass

    def note_client_lifetime(self, _client):
        pass

    def moves_switched(self):
        return 0


passed = 0


def check(condition, what):
    global passed
    if not condition:
        print(f"chaos client: FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    passed += 1


def loading_drops_the_connection():
    # A transaction whose first queued command meets a shard still loading its data set.
    server = ScriptedServer(["+OK", "-LOADING Redis is loading the dataset in memory", ":1"])
    try:
        c = chaos_client.Client(Env(server.port), "t")
        check(c.call("MULTI").ok, "MULTI answered")
        loading = c.call("INCR", "a")
        check(loading.status == chaos_client.UNKNOWN and "LOADING" in (loading.error or ""),
              f"LOADING is an unknown outcome with its text: {loading!r}")
        check(loading.broken, "LOADING: redis-py closed the connection, and the outcome says so")
        after = c.call("INCR", "b")
        check(after.ok, f"the next call is answered: {after!r}")
        check(c.connects == 2, f"the harness opened the second connection itself: {c.connects}")
        check(server.seen == [(1, ["MULTI"]), (1, ["INCR", "a"]), (2, ["INCR", "b"])],
              f"each command on the connection the harness knew of: {server.seen}")
    finally:
        server.close()


def errors_keep_the_connection():
    server = ScriptedServer(["-ERR santral: something else", "+QUEUED"])
    try:
        c = chaos_client.Client(Env(server.port), "t")
        error = c.call("INCR", "a")
        check(not error.broken and error.error.startswith("ERR santral"),
              f"another error keeps the connection: {error!r}")
        check(c.call("INCR", "b").value == "QUEUED", "the next call on it")
        check(c.connects == 1 and server.connections == 1, "one connection throughout")
    finally:
        server.close()


loading_drops_the_connection()
errors_keep_the_connection()
print(f"chaos client: {passed} passed")

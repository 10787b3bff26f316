#!/usr/bin/python3
"""A tenant's client that retries at once: N connections logged in as USER, each sending
`GET key:<n>` again as soon as the reply of the one before came back, refused or not, for
SECONDS. Prints "served=<n> refused=<n>" at the end. For bench.sh limits: unlike
redis-benchmark it goes on after an error reply, and unlike santral-loadgen (open loop) it
sends nothing while its requests are held, so its own CPU is what the router lets it have.

usage: retrying_clients.py <port> <connections> <seconds> <user> <password>"""
import selectors
import socket
import sys
import time

from resp_framing import command, reply_end


def main():
    port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    user, password = sys.argv[4], sys.argv[5]
    selector = selectors.DefaultSelector()
    buffers = {}
    for index in range(count):
        conn = socket.create_connection(("127.0.0.1", port))
        conn.sendall(command("AUTH", user, password))
        if not conn.recv(64).startswith(b"+OK"):
            raise SystemExit("AUTH as %s refused" % user)
        conn.setblocking(False)
        buffers[conn] = b""
        selector.register(conn, selectors.EVENT_READ)
        conn.send(command("GET", "key:%012d" % index))
    served = refused = sent = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.1):
            conn = key.fileobj
            data = conn.recv(65536)
            if not data:
                raise SystemExit("the server closed a connection")
            buffers[conn] += data
            while True:
                end = reply_end(buffers[conn])
                if end == 0:
                    break
                if buffers[conn][:1] == b"-":
                    refused += 1
                else:
                    served += 1
                buffers[conn] = buffers[conn][end:]
                sent += 1
                conn.send(command("GET", "key:%012d" % (sent % 100000)))
    print("served=%d refused=%d" % (served, refused))


main()

#!/usr/bin/python3
"""Opens N client connections to a Redis-protocol server, sends each a PING, reads the PONG,
then holds them all open until stdin closes. Prints "ready" once every connection answered.

Loopback has about 28,000 ephemeral ports per destination; connections beyond KERNEL_PORTS
bind their own source ports below the ephemeral range (skipping ports in use)."""
import resource
import socket
import sys

KERNEL_PORTS = 25000
port, count = int(sys.argv[1]), int(sys.argv[2])
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (min(count + 1024, hard), hard))
next_port = 1024


def connect(index):
    global next_port
    if index < KERNEL_PORTS:
        return socket.create_connection(("127.0.0.1", port))
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", next_port))
        except OSError:
            s.close()
            next_port += 1
            if next_port >= 32768:
                raise SystemExit("no free source port below 32768 for more connections")
            continue
        next_port += 1
        s.connect(("127.0.0.1", port))
        return s


conns = []
for i in range(count):
    s = connect(i)
    conns.append(s)
    s.sendall(b"*1\r\n$4\r\nPING\r\n")
for s in conns:
    assert s.recv(16) == b"+PONG\r\n"
print("ready", flush=True)
sys.stdin.read()

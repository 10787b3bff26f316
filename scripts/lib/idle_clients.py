#!/usr/bin/python3
"""Opens N client connections to a Redis-protocol server, sends each a PING, reads the PONG,
then holds them all open until stdin closes. Prints "ready" once every connection answered."""
import resource
import socket
import sys

port, count = int(sys.argv[1]), int(sys.argv[2])
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (min(count + 1024, hard), hard))
conns = []
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    conns.append(s)
    s.sendall(b"*1\r\n$4\r\nPING\r\n")
for s in conns:
    assert s.recv(16) == b"+PONG\r\n"
print("ready", flush=True)
sys.stdin.read()

#!/usr/bin/env python3
"""A TCP fault proxy for tests: links that delay, stall, reset, blackhole or refuse, switched
at run time. These machines have no iptables, netem or docker; a test puts this proxy between
Santral and a shard (Santral's config names the proxy's port as the shard's address) and cuts
or slows that one link.

One process serves several links. A link listens on 127.0.0.1:<listen port> and forwards each
connection it accepts to <target host>:<target port> (a connection of its own per accepted
one). Each link has one fault at a time:

  pass          forward bytes as they come (the default)
  delay <ms>    forward each chunk <ms> milliseconds after it arrived, both directions, order
                kept; lifting or changing the delay never reorders chunks already waiting
  stall         accept new connections but neither connect them to the target nor forward
                anything; existing connections keep their bytes (read from each side and held).
                When the fault is lifted, held bytes go out in order and new connections are
                connected. A connection that either side closes (or resets) while the link is
                stalled is reset on both sides and its held bytes are dropped, as if its
                packets had been lost: a request given up by its sender never runs late.
                `stall deliver` keeps those bytes instead and delivers them once the fault is
                lifted, then closes (a partition whose retransmissions arrive after it heals).
  stall-new     accept new connections but do not connect them to the target until the fault
                is lifted (their bytes are held, then delivered in order); connections made
                before it keep flowing (a SYN-drop toward the target: only new connections
                stall)
  stall-next <n>  the next <n> connections accepted are held like stall-new (not connected,
                their bytes kept) until the fault changes; every other connection flows.
                One request on one new connection can be made to arrive late
  reset         reset (RST: SO_LINGER 0) every current connection on both sides, and reset each
                new connection as soon as it is accepted, until the fault is changed
  blackhole     accept, read and discard, never answer, never close: every current connection
                and every new one is blackholed for good (its peers' bytes are discarded from
                then on, even after the fault is lifted; only a peer's close ends it); new
                connections after the fault is lifted are served normally
  refuse        close the listening socket, so that connects are refused; existing connections
                are left alone; lifting the fault listens again on the same port

Start (every option but --link is optional):

  fault_proxy.py --link s0=7001 --link s1=127.0.0.1:7002@17002 [--control-port 0]
                 [--ports-file PATH] [--no-parent-watch]

  --link NAME=[HOST:]TARGET_PORT[@LISTEN_PORT]   a link; listen port 0 or absent: a free one

Once every link listens it prints, one per line, on stdout (flushed), and writes the same
lines to --ports-file (atomically, by rename) if given:

  control <control port>
  link <name> <listen port> <target host>:<target port>
  ready

It exits cleanly (closing every connection) on SIGTERM or SIGINT, on the control command
QUIT, when its parent process goes away (the parent pid changes; polled every 200 ms), and
when its stdin is a pipe or a socket that reaches end of file (a parent that dies closes it).
A stdin that is a terminal, a file or /dev/null is ignored.

Control protocol: a TCP connection to 127.0.0.1:<control port>; one command per line (words
separated by spaces, case-insensitive verbs), one reply line per command, `OK ...` or
`ERR <message>`. Several commands may be sent on one connection.

  PING                                  OK PONG
  LINKS                                 OK <name>:<listen port>:<target port>:<fault> ...
  ADD <name> [<host>:]<target port> [<listen port>]
                                        OK <listen port>      a new link, listening
  FAULT <name|*> pass                   OK                    * is every link
  FAULT <name|*> delay <ms>             OK
  FAULT <name|*> stall [deliver]        OK
  FAULT <name|*> stall-new              OK
  FAULT <name|*> stall-next <n>         OK
  FAULT <name|*> reset                  OK
  FAULT <name|*> blackhole              OK
  FAULT <name|*> refuse                 OK
  KILL <name|*>                         OK <n>                reset (RST) the current
                                                              connections once; the fault stays
  STATUS <name>                         OK fault=<f> conns=<n> accepted=<n> resets=<n>
                                           bytes_up=<n> bytes_down=<n>
  QUIT                                  OK, then the proxy exits

`<name> <fault> ...` without the word FAULT is accepted too (e.g. `s0 delay 50`).

From Python, in-process: `FaultProxy` runs the links on an event loop in a thread of its own
(`proxy = FaultProxy(); port = proxy.add("s0", 7001); proxy.fault("s0", "stall");
proxy.close()`); `ProxyControl(port)` speaks the control protocol to a proxy in another
process (`ProxyControl(port).fault("s0", "delay", 50)`).
"""

import argparse
import asyncio
import collections
import faulthandler
import os
import signal
import socket
import stat
import struct
import sys
import threading
import time

FAULTS = ("pass", "delay", "stall", "stall-new", "stall-next", "reset", "blackhole", "refuse")
_BUFFER_LIMIT = 1 << 20  # bytes held per direction of one connection before it stops reading
_CONNECT_TIMEOUT_S = 5.0


def _rst(writer):
    """Closes a stream at once with an RST (SO_LINGER 0), dropping what it had not sent."""
    if writer is None:
        return
    try:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        writer.transport.abort()
    except Exception:
        pass


def _nodelay(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


class _Pipe:
    """One direction of one connection: chunks read from one side, waiting to go out."""

    def __init__(self):
        self.chunks = collections.deque()  # (arrival time, bytes)
        self.size = 0
        self.eof = False
        self.wake = asyncio.Event()
        self.room = asyncio.Event()
        self.room.set()

    def put(self, data):
        self.chunks.append((time.monotonic(), data))
        self.size += len(data)
        if self.size >= _BUFFER_LIMIT:
            self.room.clear()
        self.wake.set()

    def pop(self):
        _, data = self.chunks.popleft()
        self.size -= len(data)
        if self.size < _BUFFER_LIMIT:
            self.room.set()
        return data

    def drop(self):
        self.chunks.clear()
        self.size = 0
        self.room.set()


class _Conn:
    def __init__(self, link, reader, writer):
        self.link = link
        self.client_reader = reader
        self.client_writer = writer
        self.server_reader = None
        self.server_writer = None
        self.connected = asyncio.Event()
        self.up = _Pipe()  # client -> target
        self.down = _Pipe()  # target -> client
        self.blackholed = False
        self.held = False  # stall-next: not connected until the fault changes
        self.done = False
        self.tasks = []

    def start(self):
        loop = asyncio.get_running_loop()
        self.tasks = [
            loop.create_task(self._read(self.client_reader, self.up, True)),
            loop.create_task(self._send(self.up, True)),
            loop.create_task(self._connect()),
        ]

    def blackhole(self):
        self.blackholed = True
        self.up.drop()
        self.down.drop()
        for pipe in (self.up, self.down):
            pipe.wake.set()

    def abort(self):
        """Resets both sides (RST) and drops what was held."""
        if self.done:
            return
        self.done = True
        self.up.drop()
        self.down.drop()
        _rst(self.client_writer)
        _rst(self.server_writer)
        self._finish()

    def close(self):
        """Closes both sides after what was written to them has gone out."""
        if self.done:
            return
        self.done = True
        for writer in (self.client_writer, self.server_writer):
            if writer is not None:
                try:
                    writer.close()
                except Exception:
                    pass
        self._finish()

    def _finish(self):
        self.link.conns.discard(self)
        current = asyncio.current_task()
        for task in self.tasks:
            if task is not current:
                task.cancel()

    async def _connect(self):
        link = self.link
        try:
            await link.wait_for(
                lambda: (link.fault not in ("stall", "stall-new") and not self.held)
                or self.done
                or self.blackholed
            )
            if self.done or self.blackholed:
                return
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(link.target_host, link.target_port), _CONNECT_TIMEOUT_S
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            # The target refused or did not answer: the client sees a reset, as it would.
            self.abort()
            return
        if self.done:
            _rst(writer)
            return
        _nodelay(writer)
        self.server_reader, self.server_writer = reader, writer
        if link.fault == "reset":
            # The fault changed while connecting.
            self.abort()
            return
        loop = asyncio.get_running_loop()
        self.tasks += [
            loop.create_task(self._read(reader, self.down, False)),
            loop.create_task(self._send(self.down, False)),
        ]
        self.connected.set()

    async def _read(self, reader, pipe, upward):
        link = self.link
        try:
            while True:
                await pipe.room.wait()
                data = await reader.read(65536)
                if not data:
                    break
                if self.blackholed:
                    continue
                if upward:
                    link.bytes_up += len(data)
                else:
                    link.bytes_down += len(data)
                pipe.put(data)
        except asyncio.CancelledError:
            raise
        except Exception:
            # Reset by the peer: pass the reset on.
            self.abort()
            return
        # End of file from this side.
        if self.blackholed:
            self.close()
            return
        if link.fault == "stall" and not link.stall_deliver:
            self.abort()
            return
        pipe.eof = True
        pipe.wake.set()

    async def _send(self, pipe, upward):
        link = self.link
        try:
            if upward:
                # Waits for the target's connection; a blackholed one never gets it.
                await self.connected.wait()
            while True:
                if not pipe.chunks:
                    if pipe.eof:
                        self.close()
                        return
                    pipe.wake.clear()
                    await pipe.wake.wait()
                    continue
                if self.blackholed:
                    pipe.drop()
                    continue
                if link.fault == "stall":
                    await link.wait_for(lambda: link.fault != "stall" or self.done)
                    continue
                if link.delay_ms > 0:
                    due = pipe.chunks[0][0] + link.delay_ms / 1000.0
                    wait = due - time.monotonic()
                    if wait > 0:
                        # Woken early when the fault changes, to take the new delay.
                        await link.wait_change(wait)
                        continue
                data = pipe.pop()
                writer = self.server_writer if upward else self.client_writer
                writer.write(data)
                await writer.drain()
        except asyncio.CancelledError:
            raise
        except Exception:
            self.abort()


class _Link:
    def __init__(self, name, target_host, target_port, listen_port):
        self.name = name
        self.target_host = target_host
        self.target_port = target_port
        self.listen_port = listen_port
        self.fault = "pass"
        self.delay_ms = 0
        self.stall_deliver = False
        self.stall_next = 0
        self.conns = set()
        self.server = None
        self.accepted = 0
        self.resets = 0
        self.bytes_up = 0
        self.bytes_down = 0
        self._changed = asyncio.Event()

    def _notify(self):
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait_for(self, condition, timeout=None):
        """Waits until condition() holds (checked at every fault change), or the timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not condition():
            event = self._changed
            if deadline is None:
                await event.wait()
            else:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                try:
                    await asyncio.wait_for(event.wait(), left)
                except asyncio.TimeoutError:
                    return

    async def wait_change(self, timeout):
        """Waits for the next change of fault, or the timeout."""
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    async def listen(self):
        self.server = await asyncio.start_server(
            self._accept, "127.0.0.1", self.listen_port, reuse_address=True, backlog=512
        )
        self.listen_port = self.server.sockets[0].getsockname()[1]

    async def _accept(self, reader, writer):
        self.accepted += 1
        _nodelay(writer)
        conn = _Conn(self, reader, writer)
        if self.stall_next > 0:
            self.stall_next -= 1
            conn.held = True
        if self.fault == "reset":
            self.resets += 1
            _rst(writer)
            return
        self.conns.add(conn)
        if self.fault == "blackhole":
            conn.blackhole()
        conn.start()

    async def set_fault(self, fault, arg=None):
        if fault not in FAULTS:
            raise ValueError(f"unknown fault '{fault}' (one of {', '.join(FAULTS)})")
        delay = 0
        deliver = False
        if fault == "delay":
            try:
                delay = int(arg)
            except (TypeError, ValueError):
                raise ValueError("delay takes a number of milliseconds") from None
            if delay < 0:
                raise ValueError("delay takes a number of milliseconds")
        elif fault == "stall-next":
            try:
                delay = int(arg)
            except (TypeError, ValueError):
                raise ValueError("stall-next takes a number of connections") from None
        elif fault == "stall":
            if arg not in (None, "", "deliver", "drop"):
                raise ValueError("stall takes nothing, 'deliver' or 'drop'")
            deliver = arg == "deliver"
        elif arg not in (None, ""):
            raise ValueError(f"{fault} takes no argument")
        was = self.fault
        self.fault = fault
        # stall-next's count, not a delay; any change of fault lets the held connections go.
        self.stall_next = delay if fault == "stall-next" else 0
        for conn in self.conns:
            conn.held = False
        self.delay_ms = delay if fault == "delay" else 0
        self.stall_deliver = deliver
        if was == "refuse" and fault != "refuse":
            await self.listen()
        if fault == "refuse" and was != "refuse" and self.server is not None:
            self.server.close()
            self.server = None
        if fault == "reset":
            self.kill()
        if fault == "blackhole":
            for conn in list(self.conns):
                conn.blackhole()
        self._notify()

    def kill(self):
        n = 0
        for conn in list(self.conns):
            conn.abort()
            n += 1
        self.resets += n
        return n

    def describe(self):
        fault = self.fault
        if fault == "delay":
            fault += f"={self.delay_ms}"
        if fault == "stall" and self.stall_deliver:
            fault += "=deliver"
        return f"{self.name}:{self.listen_port}:{self.target_port}:{fault}"

    def status(self):
        return (
            f"fault={self.describe().split(':', 3)[3]} conns={len(self.conns)} "
            f"accepted={self.accepted} resets={self.resets} bytes_up={self.bytes_up} "
            f"bytes_down={self.bytes_down}"
        )

    def close(self):
        if self.server is not None:
            self.server.close()
            self.server = None
        for conn in list(self.conns):
            conn.abort()


def _parse_target(text):
    """[HOST:]PORT -> (host, port)"""
    host, _, port = text.rpartition(":")
    return (host or "127.0.0.1"), int(port)


class _Proxy:
    """The links and the control listener, on one event loop."""

    def __init__(self):
        self.links = {}
        self.control = None
        self.control_port = None
        self.stopped = None

    async def add(self, name, target, listen_port=0):
        if name in self.links or name == "*" or not name:
            raise ValueError(f"link '{name}' exists already or is not a valid name")
        host, port = _parse_target(target) if isinstance(target, str) else ("127.0.0.1", target)
        link = _Link(name, host, int(port), int(listen_port))
        await link.listen()
        self.links[name] = link
        return link.listen_port

    def _links(self, name):
        if name == "*":
            return list(self.links.values())
        if name not in self.links:
            raise ValueError(f"no link '{name}'")
        return [self.links[name]]

    async def fault(self, name, fault, arg=None):
        for link in self._links(name):
            await link.set_fault(fault.lower(), arg)

    async def start_control(self, port=0):
        self.control = await asyncio.start_server(self._control_client, "127.0.0.1", port)
        self.control_port = self.control.sockets[0].getsockname()[1]

    async def _control_client(self, reader, writer):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                reply, quit_after = await self.command(line.decode("utf-8", "replace"))
                writer.write((reply + "\n").encode())
                await writer.drain()
                if quit_after:
                    self.stop()
                    break
        except Exception:
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def command(self, line):
        """One control line -> (reply line, whether to exit)."""
        words = line.split()
        if not words:
            return "ERR empty command", False
        verb = words[0].upper()
        try:
            if verb == "PING":
                return "OK PONG", False
            if verb == "QUIT":
                return "OK", True
            if verb == "LINKS":
                return "OK " + " ".join(l.describe() for l in self.links.values()), False
            if verb == "ADD":
                if len(words) not in (3, 4):
                    raise ValueError("use ADD <name> [<host>:]<target port> [<listen port>]")
                port = await self.add(words[1], words[2], int(words[3]) if len(words) == 4 else 0)
                return f"OK {port}", False
            if verb == "KILL":
                if len(words) != 2:
                    raise ValueError("use KILL <name|*>")
                return f"OK {sum(l.kill() for l in self._links(words[1]))}", False
            if verb == "STATUS":
                if len(words) != 2:
                    raise ValueError("use STATUS <name>")
                return "OK " + self._links(words[1])[0].status(), False
            if verb == "FAULT":
                words = words[1:]
            elif words[0] not in self.links and words[0] != "*":
                raise ValueError(f"unknown command '{words[0]}'")
            if len(words) not in (2, 3):
                raise ValueError("use FAULT <name|*> <fault> [<argument>]")
            await self.fault(words[0], words[1], words[2] if len(words) == 3 else None)
            return "OK", False
        except ValueError as e:
            return f"ERR {e}", False
        except OSError as e:
            return f"ERR {e}", False

    def stop(self):
        if self.stopped is not None and not self.stopped.is_set():
            self.stopped.set()

    def close(self):
        if self.control is not None:
            self.control.close()
        for link in self.links.values():
            link.close()


class FaultProxy:
    """The proxy in this process: its event loop runs in a daemon thread of its own."""

    def __init__(self):
        self._loop = asyncio.new_event_loop()
        self._proxy = None
        self._thread = threading.Thread(target=self._run, name="fault-proxy", daemon=True)
        ready = threading.Event()
        self._ready = ready
        self._thread.start()
        ready.wait()

    def _run(self):
        asyncio.set_event_loop(self._loop)

        async def make():
            self._proxy = _Proxy()

        self._loop.run_until_complete(make())
        self._ready.set()
        self._loop.run_forever()

    def _call(self, coro, timeout=10.0):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def add(self, name, target_port, listen_port=0, target_host="127.0.0.1"):
        """Adds a link; returns its listen port."""
        return self._call(self._proxy.add(name, f"{target_host}:{target_port}", listen_port))

    def fault(self, name, fault, arg=None):
        self._call(self._proxy.fault(name, fault, None if arg is None else str(arg)))

    def kill(self, name):
        async def kill():
            return sum(l.kill() for l in self._proxy._links(name))

        return self._call(kill())

    def command(self, line):
        """One line of the control protocol, answered as the control port would."""
        return self._call(self._proxy.command(line))[0]

    def close(self):
        async def close():
            self._proxy.close()

        try:
            self._call(close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)


class ProxyControl:
    """A client of the control protocol (a proxy in another process)."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self._sock = socket.create_connection((host, port), timeout)
        self._file = self._sock.makefile("rwb")
        self._lock = threading.Lock()

    def command(self, line):
        with self._lock:
            self._file.write((line.strip() + "\n").encode())
            self._file.flush()
            reply = self._file.readline().decode().rstrip("\n")
        if not reply:
            raise ConnectionError("the fault proxy closed its control connection")
        if not reply.startswith("OK"):
            raise RuntimeError(f"fault proxy: '{line.strip()}': {reply}")
        return reply[3:] if len(reply) > 2 else ""

    def fault(self, name, fault, arg=None):
        return self.command(f"FAULT {name} {fault}" + ("" if arg is None else f" {arg}"))

    def status(self, name):
        fields = {}
        for word in self.command(f"STATUS {name}").split():
            key, _, value = word.partition("=")
            fields[key] = value
        return fields

    def close(self):
        try:
            self._file.close()
            self._sock.close()
        except OSError:
            pass


def _parse_link(text):
    name, sep, rest = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--link {text}: use NAME=[HOST:]PORT[@LISTEN_PORT]")
    target, _, listen = rest.partition("@")
    try:
        _parse_target(target)
        return name, target, int(listen or 0)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--link {text}: use NAME=[HOST:]PORT[@LISTEN_PORT]"
        ) from None


def _stdin_watchable():
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _main(args):
    # `kill -USR1 <pid>` prints every thread's stack on stderr (a proxy that seems stuck).
    faulthandler.register(signal.SIGUSR1)
    proxy = _Proxy()
    proxy.stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, proxy.stop)
    await proxy.start_control(args.control_port)
    lines = [f"control {proxy.control_port}"]
    for name, target, listen in args.link:
        port = await proxy.add(name, target, listen)
        link = proxy.links[name]
        lines.append(f"link {name} {port} {link.target_host}:{link.target_port}")
    lines.append("ready")
    if args.ports_file:
        tmp = args.ports_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, args.ports_file)
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()

    watchers = []  # referenced: the loop keeps only weak references to tasks
    if _stdin_watchable():
        reader = asyncio.StreamReader()
        try:
            await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(sys.stdin.fileno(), "rb", 0)
            )

            async def watch_stdin():
                while await reader.read(4096):
                    pass
                proxy.stop()

            watchers.append(loop.create_task(watch_stdin()))
        except (OSError, ValueError):
            pass

    if not args.no_parent_watch:
        parent = os.getppid()

        async def watch_parent():
            while os.getppid() == parent:
                await asyncio.sleep(0.2)
            proxy.stop()

        watchers.append(loop.create_task(watch_parent()))

    await proxy.stopped.wait()
    proxy.close()
    await asyncio.sleep(0.05)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="TCP fault proxy (see the top of this file for the control protocol)"
    )
    parser.add_argument("--link", action="append", type=_parse_link, default=[],
                        help="NAME=[HOST:]TARGET_PORT[@LISTEN_PORT]")
    parser.add_argument("--control-port", type=int, default=0)
    parser.add_argument("--ports-file", default="")
    parser.add_argument("--no-parent-watch", action="store_true",
                        help="do not exit when the parent process goes away")
    args = parser.parse_args(argv)
    try:
        asyncio.run(_main(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

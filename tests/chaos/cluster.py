"""The processes of a chaos run: redis-server shards, the fault proxy, Santral.

Every child is started from one long-lived thread (the Spawner) with a parent-death signal
(`setpriv --pdeathsig KILL`, tied to the thread that forked), so that nothing outlives the
harness, even when the harness itself is killed.
"""

import os
import queue
import shutil
import signal as signals
import socket
import subprocess
import sys
import threading
import time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
PROXY = os.path.join(HERE, "..", "support", "fault_proxy.py")
SETPRIV = shutil.which("setpriv")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers_ping(port, timeout=1.0):
    try:
        r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout,
                        socket_connect_timeout=timeout)
        ok = r.ping()
        r.close()
        return ok
    except Exception:
        return False


class Spawner:
    """Starts children from one thread that lives as long as the harness."""

    def __init__(self):
        self._jobs = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="spawner", daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            job, done = self._jobs.get()
            if job is None:
                return
            try:
                done.append(("ok", job()))
            except BaseException as e:  # handed back to the caller
                done.append(("error", e))

    def popen(self, argv, **kwargs):
        if SETPRIV:
            argv = [SETPRIV, "--pdeathsig", "KILL", "--"] + list(argv)
        # Each child in a process group of its own, whose parent (the harness) is in another:
        # never an orphaned group, to which the kernel sends SIGHUP and SIGCONT whenever a
        # member exits while another is stopped (a SIGSTOP fault would end early, and a stopped
        # etcd member would die of the SIGHUP) when the harness runs in the background.
        kwargs.setdefault("process_group", 0)
        done = []
        self._jobs.put((lambda: subprocess.Popen(argv, **kwargs), done))
        while not done:
            time.sleep(0.005)
        kind, value = done[0]
        if kind == "error":
            raise value
        return value


def _signal(proc, sig):
    if proc is not None and proc.poll() is None:
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass


def _kill(proc):
    """SIGKILL (after SIGCONT, in case it is stopped) and wait a little for it."""
    _signal(proc, signals.SIGCONT)
    _signal(proc, signals.SIGKILL)
    if proc is not None:
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass


class Signalled:
    """A child process in `self.proc` that faults stop, continue and kill; `stopped` says it
    is SIGSTOPped. Shards, etcd members and failover mode's servers share this."""

    stopped = False

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        """SIGKILL (after SIGCONT: a stopped process dies only once continued) and reap it."""
        _signal(self.proc, signals.SIGCONT)
        _signal(self.proc, signals.SIGKILL)
        if self.proc is not None:
            self.proc.wait()
        self.stopped = False

    def spawn_redis(self, spawner, argv, timeout):
        """Starts redis-server with `argv` until it answers PING on self.port (only once its
        append-only file is loaded); three tries. False when it never did."""
        for attempt in range(3):
            self.proc = spawner.popen(argv, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.stopped = False
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if answers_ping(self.port):
                    return True
                time.sleep(0.05)
            _signal(self.proc, signals.SIGKILL)
            self.proc.wait()
            time.sleep(0.5)
        return False

    def pause(self):
        _signal(self.proc, signals.SIGSTOP)
        self.stopped = True

    def resume(self):
        _signal(self.proc, signals.SIGCONT)
        self.stopped = False


class Shard(Signalled):
    """One redis-server with `appendonly yes`, `appendfsync always`, on a fixed port; its
    append-only file carries a `#TS:<unix time>` line each second a write came
    (`aof-timestamp-enabled yes`), so that a report can say when a write ran (tests/chaos/aof.py)."""

    def __init__(self, spawner, name, workdir):
        self.spawner = spawner
        self.name = name
        self.port = free_port()
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None
        self.stopped = False
        self.kills = 0

    def start(self, timeout=20.0):
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                "--aof-timestamp-enabled", "yes", "--dir", self.dir, "--logfile", "redis.log",
                "--daemonize", "no"]
        if not self.spawn_redis(self.spawner, argv, timeout):
            raise RuntimeError(f"redis-server {self.name} did not start on port {self.port}")

    def kill(self):
        super().kill()
        self.kills += 1

    def client(self, timeout=10.0):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=timeout,
                           socket_connect_timeout=2.0, decode_responses=True)

    def close(self):
        _kill(self.proc)


class Proxy:
    """tests/support/fault_proxy.py as a child process, driven through its control port."""

    def __init__(self, spawner, shards):
        argv = [sys.executable, PROXY]
        for shard in shards:
            argv += ["--link", f"{shard.name}={shard.port}"]
        self.proc = spawner.popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=None, text=True)
        self.ports = {}
        self.control_port = None
        for line in self.proc.stdout:
            words = line.split()
            if not words:
                continue
            if words[0] == "control":
                self.control_port = int(words[1])
            elif words[0] == "link":
                self.ports[words[1]] = int(words[2])
            elif words[0] == "ready":
                break
        if self.control_port is None or len(self.ports) != len(shards):
            raise RuntimeError("the fault proxy did not start")
        sys.path.insert(0, os.path.dirname(PROXY))
        import fault_proxy  # noqa: E402

        self.control = fault_proxy.ProxyControl(self.control_port)
        self._lock = threading.Lock()

    def fault(self, link, fault, arg=None):
        with self._lock:
            return self.control.fault(link, fault, arg)

    def kill(self, link):
        """Resets (RST) the link's current connections once; its fault stays."""
        with self._lock:
            return self.control.command(f"KILL {link}")

    def heal(self):
        self.fault("*", "pass")

    def close(self):
        try:
            self.control.command("QUIT")
        except Exception:
            pass
        try:
            self.proc.stdin.close()
        except Exception:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class MapModel:
    """What the harness writes in Santral's config: the shards of the map and how keys hash."""

    def __init__(self, shards, hash_name="murmur", hash_tag="{}"):
        self.shards = list(shards)
        self.hash = hash_name
        self.hash_tag = hash_tag

    def copy(self, **changes):
        m = MapModel(self.shards, self.hash, self.hash_tag)
        for k, v in changes.items():
            setattr(m, k, v)
        return m

    def __eq__(self, other):
        return (isinstance(other, MapModel) and self.shards == other.shards
                and self.hash == other.hash and self.hash_tag == other.hash_tag)

    def describe(self):
        return f"[{', '.join(self.shards)}] hash={self.hash} hash_tag={self.hash_tag!r}"


class Santral:
    """One Santral on a config file the harness edits; restarted on the same file."""

    def __init__(self, spawner, binary, workdir, proxy):
        self.spawner = spawner
        self.binary = binary
        self.port = free_port()
        self.config_path = os.path.join(workdir, "santral.yaml")
        self.log_path = os.path.join(workdir, "santral.log")
        self.proxy = proxy
        self.proc = None
        self.max_keys_per_sec = 300
        self.request_ms = 2000  # timeouts.request_ms (--request-ms)
        self.starts = 0
        self._lock = threading.Lock()

    def common_lines(self, model, mode=""):
        """The config's lines every mode shares (listen, workers, placement, timeouts)."""
        return [
            f"# written by tests/chaos (the chaos harness{mode})",
            f"listen: 127.0.0.1:{self.port}",
            "workers: 2",
            "watch_file: false",
            "cross_shard_writes: allow",
            "drain_ms: 3000",
            f"hash: {model.hash}",
            "distribution: ketama",
            f'hash_tag: "{model.hash_tag}"',
            f"timeouts: {{connect_ms: 1000, request_ms: {self.request_ms}}}",
        ]

    def config_text(self, model):
        lines = self.common_lines(model) + [
            f"resharding: {{max_keys_per_sec: {self.max_keys_per_sec}, batch_keys: 25}}",
            "shards:",
        ]
        for name in model.shards:
            lines.append(f"  - {{name: {name}, address: 127.0.0.1:{self.proxy.ports[name]}}}")
        return "\n".join(lines) + "\n"

    def write_config(self, model):
        tmp = self.config_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(self.config_text(model))
        os.replace(tmp, self.config_path)

    def start(self, timeout=20.0):
        with self._lock:
            log = open(self.log_path, "a")
            log.write(f"\n===== chaos: start {self.starts + 1} at {time.strftime('%H:%M:%S')} =====\n")
            log.flush()
            self.proc = self.spawner.popen([self.binary, "--config", self.config_path],
                                           stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            log.close()
            self.starts += 1
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    return False
                if answers_ping(self.port):
                    return True
                time.sleep(0.05)
            return False

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        _signal(self.proc, sig)

    def kill(self, sig=signals.SIGKILL, timeout=15.0):
        _signal(self.proc, signals.SIGCONT)
        _signal(self.proc, sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal(self.proc, signals.SIGKILL)
            self.proc.wait()

    def log_tail(self, lines=20):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def close(self):
        _kill(self.proc)


class Burners:
    """--burners N: N busy-looping processes beside the run (CPU contention, as on a loaded
    machine), started from the Spawner (so they die with the harness) and stopped by it."""

    def __init__(self, spawner, n):
        self.procs = [spawner.popen([sys.executable, "-c", "while True: pass"],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for _ in range(n)]

    def running(self):
        return sum(1 for p in self.procs if p.poll() is None)

    def stop(self):
        for p in self.procs:
            _kill(p)
        self.procs = []

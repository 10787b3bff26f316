"""A client connection through Santral that says what became of each request.

Every call answers an Outcome whose `status` is one of:

  ok        the request was answered (`value`); it took effect
  notrun    Santral (or the shard) answered an error that says the request did not run:
            TRYAGAIN ("... did not run, retry it"), EXECABORT, WRONGTYPE, CROSSSLOT, a syntax
            error, READONLY, a request held past failover.wait_ms ("... so the command was not
            sent"), a write refused because the shard's failover lost acknowledged writes (the
            error names the shard and SANTRAL FAILOVER ACCEPT, or lost writes); the connection
            stays usable
  unknown   sent, but no answer says whether it ran: a timeout, a broken connection, Santral
            killed, or an error such as "the command may or may not have run", or NOREPLICAS
            (write_concern: it ran on the primary, a failover may lose it); a broken or
            timed-out connection is dropped (a late reply must not answer a later request) and
            the next call opens a new one
  notsent   there was no connection to send it on (Santral down): it did not run

A checker treats `unknown` as attempted, never as acknowledged and never as lost; `notrun` as a
claim it checks (a TRYAGAIN'd write found applied is an anomaly).
"""

import re
import socket
import threading
import time

import redis
from redis.connection import Connection
from redis.exceptions import (
    BusyLoadingError,
    ConnectionError as RedisConnectionError,
    ExecAbortError,
    ReadOnlyError,
    ResponseError,
    TimeoutError as RedisTimeoutError,
)

OK = "ok"
NOTRUN = "notrun"
UNKNOWN = "unknown"
NOTSENT = "notsent"

# Errors that say the request did not run (everything else that is an error: unknown).
_NOT_RUN_PREFIXES = (
    "TRYAGAIN",
    "EXECABORT",
    # A fleet's router out of touch with etcd refuses before routing anything (fleet mode).
    "CLUSTERDOWN",
    "WRONGTYPE",
    "CROSSSLOT",
    "ERR syntax error",
    "ERR wrong number of arguments",
    "ERR unknown command",
    # A write refused by a replica (failover mode: a demoted primary): it did not run.
    "READONLY",
)


class Outcome:
    __slots__ = ("status", "value", "error", "broken")

    def __init__(self, status, value=None, error=None, broken=False):
        self.status = status
        self.value = value
        self.error = error
        # The connection is gone: it broke or timed out (no answer), there was none, or redis-py
        # closed it after a LOADING error
        self.broken = broken

    @property
    def ok(self):
        return self.status == OK

    def __repr__(self):
        return f"Outcome({self.status}, {self.value!r}, {self.error!r})"


def error_text(e):
    """The error line as the server sent it (redis-py strips some codes: EXECABORT, LOADING,
    and ERR before every message its table knows)."""
    if isinstance(e, ExecAbortError):
        return "EXECABORT " + str(e)
    if isinstance(e, BusyLoadingError):
        return "LOADING " + str(e)
    if isinstance(e, ReadOnlyError):
        return "READONLY " + str(e)
    text = str(e)
    first = text.split(" ", 1)[0]
    if not (first.isupper() and first.isalpha()):
        text = "ERR " + text
    return text


_LOST_WRITES = re.compile(r"FAILOVER ACCEPT|lost (\w+ )?writes|writes? (were |was |have been )?lost",
                          re.I)


def lost_write_refusal(text):
    """Failover mode: Santral's refusal of a write to a shard whose promotion lost acknowledged
    writes (failover.on_lost_writes: refuse), until SANTRAL FAILOVER ACCEPT <shard>: it names
    the shard and says so. The write did not run."""
    return ("shard" in text and _LOST_WRITES.search(text) is not None
            and "may or may not have run" not in text)


def classify_error(text):
    if lost_write_refusal(text):
        return NOTRUN
    # Failover mode (write_concern): "NOREPLICAS ... applied the write, but only 0 of the 1
    # replicas ... confirmed it": it ran on the primary and a failover may or may not keep it.
    if text.startswith("NOREPLICAS"):
        return UNKNOWN
    # Failover mode (failover.wait_ms): a request held while the shard had no primary, never
    # sent: "... no new primary was put in force within N ms (failover.wait_ms), so the command
    # was not sent". (Its reason, the shard's own failure, may quote other words.)
    if "(failover.wait_ms)" in text and "the command was not sent" in text:
        return NOTRUN
    for prefix in _NOT_RUN_PREFIXES:
        if text.startswith(prefix):
            return NOTRUN
    # A shard marked down: "its requests fail at once" (docs/operating.md), without being sent. (A
    # request that was sent gets "did not answer" or "lost the connection ... may or may not
    # have run" instead.)
    # But the requests in flight when a failure marks the shard down get the same message, with
    # the failure's own words ("... the command may or may not have run there"): unknown.
    if (text.startswith("ERR santral: shard '") and "is unavailable" in text
            and "may or may not have run" not in text):
        return NOTRUN
    return UNKNOWN


class ErrorLog:
    """Counts error replies by their first words, for the report."""

    def __init__(self):
        self._lock = threading.Lock()
        self.counts = {}

    def add(self, text):
        words = text.replace("\n", " ").split()
        key = " ".join(words[:4])[:90]
        if "santral:" in words[:2] and len(words) > 2:
            # ERR santral: shard 's1' (127.0.0.1:1234) did not answer ... -> keep the gist
            gist = " ".join(w for w in words[:12] if "'" not in w and "(" not in w)
            key = gist[:90]
        with self._lock:
            self.counts[key] = self.counts.get(key, 0) + 1


class Client:
    """One long-lived connection to Santral, reopened only after it broke."""

    def __init__(self, env, name, timeout=10.0, router=None):
        self.env = env
        self.name = name
        # Fleet mode: the index of the router this connection is bound to (None: one is
        # assigned, round robin), or "any" (whichever router is not faulted, at each connect).
        self.router = router
        self.bound = router
        self.timeout = timeout
        self.conn = None
        self.connects = 0
        self.moves_at_connect = 0
        env.register_client(self)

    # --- the connection -------------------------------------------------------------------
    def _ensure(self):
        if self.conn is not None:
            return True
        conn = Connection(
            host="127.0.0.1",
            port=self.env.port_for(self),
            socket_timeout=self.timeout,
            socket_connect_timeout=2.0,
            retry_on_timeout=False,
            decode_responses=True,
        )
        try:
            conn.connect()
        except (RedisConnectionError, RedisTimeoutError, OSError):
            try:
                conn.disconnect()
            except Exception:
                pass
            return False
        self.conn = conn
        self.connects += 1
        self.moves_at_connect = self.env.moves_switched()
        return True

    def drop(self):
        if self.conn is not None:
            self.env.note_client_lifetime(self)
            try:
                self.conn.disconnect()
            except Exception:
                pass
            self.conn = None

    def where(self):
        """Which router (its port) this connection is on, and when (for the routers' logs)."""
        port = self.conn.port if self.conn is not None else "-"
        return f"port {port} at {time.strftime('%H:%M:%S')}"

    def moves_seen(self):
        """Moves (approved or aborted, i.e. switches) seen by the current connection."""
        if self.conn is None:
            return 0
        return self.env.moves_switched() - self.moves_at_connect

    # --- requests -------------------------------------------------------------------------
    def call(self, *args, timeout=None):
        if not self._ensure():
            return Outcome(NOTSENT, error="no connection to Santral", broken=True)
        conn = self.conn
        try:
            if timeout is not None and conn._sock is not None:
                conn._sock.settimeout(timeout)
            conn.send_command(*args)
            value = conn.read_response()
            if timeout is not None and conn._sock is not None:
                conn._sock.settimeout(self.timeout)
            return Outcome(OK, value)
        except BusyLoadingError as e:
            # A shard loading its data set answered LOADING (Santral passes it through, as
            # twemproxy does). redis-py raises it as a ConnectionError and has closed the
            # connection already; its next send would open a new one without a word, and a
            # MULTI, WATCH or SELECT of this one would silently be gone (chaos seed 918385: a
            # transaction's last commands ran outside MULTI). So the connection is dropped
            # here, and the outcome says so.
            text = error_text(e)
            self.env.errors.add(text)
            self.drop()
            return Outcome(UNKNOWN, error=text, broken=True)
        except (RedisConnectionError, RedisTimeoutError, OSError, socket.timeout) as e:
            self.drop()
            self.env.errors.add(f"(client) {type(e).__name__}")
            return Outcome(UNKNOWN, error=f"{type(e).__name__}: {e}", broken=True)
        except ResponseError as e:
            text = error_text(e)
            self.env.errors.add(text)
            if lost_write_refusal(text) and hasattr(self.env, "note_lost_write_refusal"):
                self.env.note_lost_write_refusal(text)
            return Outcome(classify_error(text), error=text)
        except Exception as e:  # a parser surprise: the stream can no longer be trusted
            self.drop()
            return Outcome(UNKNOWN, error=f"{type(e).__name__}: {e}", broken=True)

    def call_until_sent(self, *args, deadline_s=30.0, stop=None):
        """Retries while the request could not be sent (Santral down); returns the outcome."""
        end = time.monotonic() + deadline_s
        while True:
            out = self.call(*args)
            if out.status != NOTSENT or time.monotonic() > end or (stop and stop.is_set()):
                return out
            time.sleep(0.1)


def direct(port, timeout=10.0):
    """A plain redis-py client to a shard (for checks behind Santral's back)."""
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout,
                       socket_connect_timeout=2.0, decode_responses=True)

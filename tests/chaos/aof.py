"""What a shard's append-only file says happened to a key, and when.

The shards run with `aof-timestamp-enabled yes`: Redis writes a `#TS:<unix time>` line before
the first write of each second. Redis 7 keeps the file as a directory (appendonlydir/) of a
base (RDB or AOF) and increments (RESP commands) listed in a manifest; this reads the AOF parts
in order, keeps each command that names the key among its arguments (INCR k, RESTORE k, DEL k,
a MIGRATE's KEYS, an EVAL's effects as Redis propagates them, MULTI/EXEC around them), and gives
them with the second they ran in. The failure report (chaos.py) prints that history for the
keys of anomalies, condensed into runs (`INCR x187`), beside the harness's own timeline (its
`[t s]` stamps) and santral.log's wall clock, so that a late write lines up with the fault that
held it.
"""

import os
import time


def _parts(directory):
    """The AOF files of a shard's dir, in order (the manifest's: base, then increments)."""
    aof_dir = os.path.join(directory, "appendonlydir")
    manifest = None
    try:
        names = os.listdir(aof_dir)
    except OSError:
        names = []
    for name in names:
        if name.endswith(".manifest"):
            manifest = os.path.join(aof_dir, name)
    files = []
    if manifest is not None:
        try:
            with open(manifest, errors="replace") as f:
                for line in f:
                    words = line.split()
                    if len(words) >= 6 and words[0] == "file":
                        kind = words[words.index("type") + 1] if "type" in words else "i"
                        seq = int(words[words.index("seq") + 1]) if "seq" in words else 0
                        files.append((0 if kind == "b" else 1, seq, words[1]))
        except (OSError, ValueError):
            files = []
    files.sort()
    paths = [os.path.join(aof_dir, name) for _, _, name in files]
    legacy = os.path.join(directory, "appendonly.aof")  # Redis < 7
    if not paths and os.path.exists(legacy):
        paths = [legacy]
    return paths


def _commands(data):
    """(unix time or None, [args as str]) for each command of an AOF part (RESP); an RDB base
    (or a part cut short by a crash) ends the part."""
    ts = None
    i, n = 0, len(data)
    while i < n:
        if data.startswith(b"#TS:", i):
            end = data.find(b"\r\n", i)
            if end < 0:
                return
            try:
                ts = int(data[i + 4:end])
            except ValueError:
                pass
            i = end + 2
            continue
        if data[i:i + 1] != b"*":
            return  # an RDB preamble or base, or garbage
        end = data.find(b"\r\n", i)
        if end < 0:
            return
        try:
            count = int(data[i + 1:end])
        except ValueError:
            return
        i = end + 2
        args = []
        for _ in range(count):
            if data[i:i + 1] != b"$":
                return
            end = data.find(b"\r\n", i)
            if end < 0:
                return
            try:
                size = int(data[i + 1:end])
            except ValueError:
                return
            start = end + 2
            if start + size > n:
                return
            args.append(data[start:start + size].decode("utf-8", "replace"))
            i = start + size + 2
        yield ts, args


def history(directory, keys):
    """key -> [(unix time or None, command name, args)] of every command naming the key in the
    AOF of the shard whose dir is `directory`."""
    keys = set(keys)
    found = {k: [] for k in keys}
    for path in _parts(directory):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        for ts, args in _commands(data):
            if len(args) < 2:
                continue
            for arg in set(args[1:]) & keys:
                found[arg].append((ts, args[0].upper(), args))
    return found


def runs(entries):
    """Consecutive commands of one name condensed: [(name, count, first ts, last ts)]."""
    out = []
    for ts, name, _ in entries:
        if out and out[-1][0] == name:
            n, first, _last = out[-1][1:]
            out[-1] = (name, n + 1, first, ts)
        else:
            out.append((name, 1, ts, ts))
    return out


def describe(directories, key, t0_wall, at=None, limit=40):
    """Lines saying what each shard's AOF holds for `key`: per shard, its runs of commands with
    the harness's time (seconds since the run began, t0_wall = time.time() then) and the wall
    clock. `directories` is [(shard name, dir)]. With `at` (seconds since the run began: when
    the first anomaly named the key), the runs from 60 s before it to 15 s after it; else the
    last ones; at most `limit` per shard."""
    lines = []
    for name, directory in directories:
        entries = history(directory, [key]).get(key, [])
        if not entries:
            continue
        rs = runs(entries)
        if at is not None:
            lo, hi = t0_wall + at - 60.0, t0_wall + at + 15.0
            first = next((i for i, r in enumerate(rs) if r[3] is None or r[3] >= lo), len(rs))
            end = next((i for i, r in enumerate(rs) if r[2] is not None and r[2] > hi), len(rs))
            end = max(end, first)
        else:
            first, end = 0, len(rs)
        first = max(first, end - limit)
        parts = []
        for cmd, count, t_first, t_last in rs[first:end]:
            when = _when(t_first, t0_wall)
            if count > 1 and t_last is not None and t_last != t_first:
                when += f"..{_when(t_last, t0_wall, clock=False)}"
            parts.append(f"{when} {cmd}" + (f" x{count}" if count > 1 else ""))
        before = f"({first} earlier runs left out) " if first else ""
        after = f" ({len(rs) - end} later runs left out)" if end < len(rs) else ""
        lines.append(f"{name} ({len(entries)} commands): {before}"
                     + (", ".join(parts) or "none in that window") + after)
    return lines or ["(no shard's AOF names it)"]


def _when(ts, t0_wall, clock=True):
    if ts is None:
        return "[?]"
    text = f"[{max(0.0, ts - t0_wall):.0f}s"
    if clock:
        text += " " + time.strftime("%H:%M:%S", time.localtime(ts))
    return text + "]"

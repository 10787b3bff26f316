#!/usr/bin/env python3
"""The floors of the house: which folder may include which.

router/ is built in floors (router/CMakeLists.txt draws them), on the libraries placement/,
config/ and protocol/; a file may include files of its own floor and of the floors below it,
never above. This check reads every #include "..." of app/, router/ and those libraries and
fails on one that climbs.

  scripts/check-floors.py              fail (exit 1) on an include that climbs
  scripts/check-floors.py --count      print the climbing includes per folder pair and in all
  scripts/check-floors.py --order O    check against the floors in file O (one floor a line,
                                       top first; folders of one floor on one line) instead

The build runs it (target `floors`, part of ALL), so an upward include fails to build.
"""
import pathlib
import re
import sys
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Top first. Folders on one line are one floor: they may include each other.
FLOORS = """
app
process
admin
session
plan
commands
balance
hotkeys/detection hotkeys/salting hotkeys/near_cache
routes
acl
runtime
resharding
analysis
cluster
tracking
catalog
backend
transport
merge
metrics
placement
config
protocol
"""

# Top-level folders that are a floor each (the others, router/, are split by their subfolders).
LIBRARIES = ("app", "placement", "config", "protocol")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def floors_from(text):
    floors = {}
    for height, line in enumerate(reversed([l for l in text.split("\n") if l.strip()])):
        for folder in line.split():
            floors[folder] = height
    return floors


def folder_of(path, floors):
    """The floor folder a repository path belongs to: router/x/... -> x (or x/y if listed)."""
    parts = pathlib.PurePosixPath(path).parts
    if parts[0] in LIBRARIES:
        return parts[0]
    if parts[0] != "router" or len(parts) < 3:
        return None
    if len(parts) >= 4 and f"{parts[1]}/{parts[2]}" in floors:
        return f"{parts[1]}/{parts[2]}"
    return parts[1] if parts[1] in floors else None


def climbs(floors):
    found = []
    for base in ("router",) + LIBRARIES:
        for source in sorted((ROOT / base).rglob("*")):
            if source.suffix not in (".h", ".cpp"):
                continue
            rel = source.relative_to(ROOT).as_posix()
            here = folder_of(rel, floors)
            if here is None:
                if base == "router" and source.parent != ROOT / "router":
                    found.append((rel, 0, f"folder not on any floor: {rel}", here, None))
                continue
            text = source.read_text(encoding="utf-8", errors="replace")
            for match in INCLUDE.finditer(text):
                there = folder_of(match.group(1), floors)
                if there is None or floors[there] <= floors[here]:
                    continue
                line = text.count("\n", 0, match.start()) + 1
                found.append((rel, line, match.group(1), here, there))
    return found


def main(argv):
    order = FLOORS
    if "--order" in argv:
        order = pathlib.Path(argv[argv.index("--order") + 1]).read_text()
    floors = floors_from(order)
    found = climbs(floors)
    if "--count" in argv:
        pairs = Counter((here, there) for _, _, _, here, there in found)
        for (here, there), n in sorted(pairs.items(), key=lambda p: (-p[1], p[0])):
            print(f"{n:4d}  {here} -> {there}")
        print(f"{len(found):4d}  includes climb a floor")
        return 0
    for rel, line, target, here, there in found:
        if there is None:
            print(f"{target}: add it to scripts/check-floors.py's FLOORS", file=sys.stderr)
        else:
            print(f"{rel}:{line}: includes {target}: {here}/ may include only the floors "
                  f"below it, and {there}/ is above (scripts/check-floors.py draws them)",
                  file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""The floors of the house: which folder may include which.

router/floors.txt lists each folder of router/, app/ and the libraries protocol/, config/ and
placement/, with the folders it uses (its header says the format): a graph that must have no
cycle. This check reads every #include "..." of those folders' files and fails on one of a
folder that its own folder does not list, on a listed use that no include makes (the library
would link more than it uses), and on a cycle.

  scripts/check-floors.py              fail (exit 1) on any of those
  scripts/check-floors.py --count      print the includes per folder pair, those not listed
                                       marked, and how many are not
  scripts/check-floors.py --floors F   read the floors from file F instead

The build runs it (target `floors`, part of ALL), so an include not listed fails to build; the
build reads the same file for the router's links (cmake/floors.cmake).
"""
import pathlib
import re
import sys
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLOORS = ROOT / "router" / "floors.txt"

# The top-level folders whose files the check reads.
BASES = ("app", "router", "protocol", "config", "placement")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


class Floors:
    def __init__(self, text, name):
        self.library = {}  # folder -> its library
        self.uses = {}  # folder -> the folders it may include, in the file's order
        self.errors = []
        current = None
        for number, raw in enumerate(text.split("\n"), 1):
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            words = line.split()
            if not line[0].isspace():
                if len(words) != 2:
                    self.errors.append(f"{name}:{number}: a folder and its library, no more")
                    current = None
                    continue
                current = words[0]
                if current in self.library:
                    self.errors.append(f"{name}:{number}: {current} is listed twice")
                self.library[current] = words[1]
                self.uses[current] = []
            elif current is None:
                self.errors.append(f"{name}:{number}: a use before any folder")
            else:
                self.uses[current] += words
        for folder, used in self.uses.items():
            for there in used:
                if there not in self.uses:
                    self.errors.append(f"{name}: {folder} uses {there}, which is not listed")
            for there, n in Counter(used).items():
                if n > 1:
                    self.errors.append(f"{name}: {folder} lists {there} twice")

    def folder_of(self, path):
        """The listed folder a repository path is in (the longest that holds it), or None."""
        parts = pathlib.PurePosixPath(path).parts[:-1]
        for n in range(len(parts), 0, -1):
            candidate = "/".join(parts[:n])
            if candidate in self.uses:
                return candidate
        return None

    def cycle(self):
        """A cycle of uses (its folders, the first repeated at the end), or None."""
        state = {}  # folder -> 1 while on the path, 2 when done
        path = []

        def visit(folder):
            state[folder] = 1
            path.append(folder)
            for there in self.uses[folder]:
                if there not in self.uses:
                    continue
                if state.get(there) == 1:
                    return path[path.index(there):] + [there]
                if there not in state:
                    found = visit(there)
                    if found:
                        return found
            path.pop()
            state[folder] = 2
            return None

        for folder in self.uses:
            if folder not in state:
                found = visit(folder)
                if found:
                    return found
        return None


def includes(floors):
    """Every include between two folders: (file, line, included, its folder, the included's)."""
    found = []
    unlisted = []
    for base in BASES:
        for source in sorted((ROOT / base).rglob("*")):
            if source.suffix not in (".h", ".cpp"):
                continue
            rel = source.relative_to(ROOT).as_posix()
            here = floors.folder_of(rel)
            if here is None:
                if source.parent != ROOT / base:
                    unlisted.append(rel)
                continue
            text = source.read_text(encoding="utf-8", errors="replace")
            for match in INCLUDE.finditer(text):
                target = match.group(1)
                there = floors.folder_of(target)
                if there is None and target.split("/")[0] in BASES and "/" in target:
                    there = "/".join(target.split("/")[:-1])  # a folder not listed: never allowed
                if there is None or there == here:
                    continue
                line = text.count("\n", 0, match.start()) + 1
                found.append((rel, line, target, here, there))
    return found, unlisted


def main(argv):
    path = FLOORS
    if "--floors" in argv:
        path = pathlib.Path(argv[argv.index("--floors") + 1])
    floors = Floors(path.read_text(), path.name if path != FLOORS else "router/floors.txt")
    found, unlisted = includes(floors)
    allowed = lambda here, there: there in floors.uses.get(here, ())
    if "--count" in argv:
        pairs = Counter((here, there) for _, _, _, here, there in found)
        for (here, there), n in sorted(pairs.items(), key=lambda p: p[0]):
            mark = "" if allowed(here, there) else "   (not listed)"
            print(f"{n:4d}  {here} -> {there}{mark}")
        print(f"{len(pairs):4d}  folder pairs")
        print(f"{sum(not allowed(h, t) for h, t in pairs):4d}  not listed")
        return 0
    errors = list(floors.errors)
    for rel in unlisted:
        errors.append(f"{rel}: its folder is not in router/floors.txt: add it, with the folders "
                      "it uses")
    made = set()
    for rel, line, target, here, there in found:
        made.add((here, there))
        if not allowed(here, there):
            errors.append(f"{rel}:{line}: includes {target}: {here} may include only the folders "
                          f"router/floors.txt lists under it, and {there} is not one")
    for here, used in floors.uses.items():
        for there in used:
            if (here, there) not in made:
                errors.append(f"router/floors.txt: {here} uses {there}, but none of its files "
                              f"includes one of {there}: remove it (its library links it)")
    cycle = floors.cycle()
    if cycle:
        errors.append("router/floors.txt: the uses make a cycle: " + " -> ".join(cycle))
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

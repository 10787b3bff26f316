#!/usr/bin/env python3
"""Comments that name a file must name one that exists.

Reads the comments (// ... and /* ... */) of every C++ file the repository tracks and each
path-like word in them: `router/routes/keyed_route.cpp`, or `routes/keyed_route.cpp` (read
under router/, config/, placement/ or tests/ too). A path no such file or folder answers to is reported
with its file and line; exit 1 if any. Run by scripts/lint.sh.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATH = re.compile(r"\b[a-z_][a-z0-9_]*(?:/[A-Za-z0-9_.-]+)*/[A-Za-z0-9_-]+\.(?:h|cpp|py|sh|md|txt|js|yaml)\b")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# Where a path that does not start at the root may be read from.
BASES = ("", "router/", "config/", "placement/", "tests/", "tools/")


def exists(path):
    return any((ROOT / base / path).exists() for base in BASES)


def main():
    files = subprocess.run(["git", "ls-files", "*.h", "*.cpp"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    stale = []
    for name in files:
        if not (ROOT / name).is_file():  # deleted in the working tree, not yet in the index
            continue
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for comment in COMMENT.finditer(text):
            # A string literal holding "//" (a URL) is not a comment; such lines are rare and
            # their "paths" are URLs, which have a scheme before them.
            for match in PATH.finditer(comment.group(0)):
                word = match.group(0)
                before = comment.group(0)[:match.start()]
                if before.endswith(("://", ".", "../")) or "http" in before[-40:]:
                    continue
                if not exists(word):
                    line = text.count("\n", 0, comment.start() + match.start()) + 1
                    stale.append(f"{name}:{line}: a comment names {word}, which does not exist")
    for entry in stale:
        print(entry, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

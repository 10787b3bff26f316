#!/usr/bin/python3
"""Checks the documentation: README.md and docs/*.md.

1. Every relative Markdown link points to a file that exists, and every #anchor to a heading of
   its target (GitHub's rule: lower case, punctuation but - and _ dropped, spaces to -, repeated
   headings suffixed -1, -2, ...).
2. Every fenced ```yaml block that is a whole Santral config (a top-level `shards:` key) is
   accepted by `santral --check-config`; fragments are skipped. A block may be excused by the line
   `<!-- docs_test: skip: <why> -->` right above its fence. At least one config must be checked.
3. README.md is at most 300 lines: it is the front door, the manual is in docs/.

usage: docs_test.py --santral path/to/santral [--root repo]
Stdlib only; each failure names the file and the line.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

README_MAX_LINES = 300
FENCE = re.compile(r'^\s{0,3}(```|~~~)')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
LINK = re.compile(r'!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
INLINE_CODE = re.compile(r'(`+)(?:(?!\1).)+?\1')
HTML_ANCHOR = re.compile(r'<a\s+(?:name|id)="([^"]+)"', re.I)
SKIP_MARK = re.compile(r'^\s*<!--\s*docs_test:\s*skip\b')


def slug(text):
    """GitHub's heading anchor."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)  # a link in a heading: its text
    text = re.sub(r'<[^>]+>', '', text)                        # inline HTML
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def scan(path):
    """(line number, text, inside a fence) for every line of a Markdown file."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
                yield number, line, True
                continue
            if m.group(1) == fence:
                fence = None
                yield number, line, True
                continue
        yield number, line, fence is not None


def anchors_of(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line, in_fence in scan(path):
            if in_fence:
                continue
            for name in HTML_ANCHOR.findall(line):
                found.add(name)
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            found.add(base if n == 0 else '%s-%d' % (base, n))
            seen[base] = n + 1
        cache[path] = found
    return cache[path]


def check_links(root, files):
    failures, count = [], 0
    for path in files:
        rel = os.path.relpath(path, root)
        for number, line, in_fence in scan(path):
            if in_fence:
                continue
            for _, target in LINK.findall(INLINE_CODE.sub('', line)):
                if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target):
                    continue  # http:, https:, mailto:
                count += 1
                file_part, _, anchor = target.partition('#')
                dest = path if not file_part else os.path.normpath(
                    os.path.join(os.path.dirname(path), file_part))
                if not os.path.exists(dest):
                    failures.append('%s:%d: link to %s: no such file %s' % (
                        rel, number, target, os.path.relpath(dest, root)))
                    continue
                if anchor:
                    if not dest.endswith('.md') or os.path.isdir(dest):
                        failures.append('%s:%d: link to %s: an anchor into a file that is not '
                                        'Markdown' % (rel, number, target))
                    elif anchor not in anchors_of(dest):
                        failures.append('%s:%d: link to %s: %s has no heading with the anchor '
                                        '#%s' % (rel, number, target, os.path.relpath(dest, root),
                                                 anchor))
    return failures, count


def yaml_blocks(path):
    """(line of the opening fence, text, excused) of every ```yaml block."""
    block, start, excused, previous = None, 0, False, ''
    for number, line, in_fence in scan(path):
        if block is None:
            m = re.match(r'^\s{0,3}```\s*ya?ml\s*$', line)
            if m:
                block, start, excused = [], number, bool(SKIP_MARK.match(previous))
            previous = line if line.strip() else previous
            continue
        if in_fence and FENCE.match(line):
            yield start, '\n'.join(block) + '\n', excused
            block = None
            previous = ''
            continue
        block.append(line)


def check_configs(root, files, santral):
    failures, checked, fragments, excused = [], 0, 0, 0
    with tempfile.TemporaryDirectory(prefix='santral-docs-test-') as tmp:
        for path in files:
            rel = os.path.relpath(path, root)
            for number, text, skip in yaml_blocks(path):
                if not re.search(r'^shards:', text, re.M):
                    fragments += 1
                    continue
                if skip:
                    excused += 1
                    print('skipped (docs_test: skip): %s:%d' % (rel, number))
                    continue
                config = os.path.join(tmp, 'block-%d.yaml' % (checked + 1))
                with open(config, 'w', encoding='utf-8') as f:
                    f.write(text)
                try:
                    run = subprocess.run([santral, '--check-config', config],
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         timeout=60)
                    output, code = run.stdout.decode('utf-8', 'replace'), run.returncode
                except subprocess.TimeoutExpired:
                    output, code = 'santral --check-config did not finish within 60 s', -1
                checked += 1
                if code != 0:
                    failures.append('%s:%d: the yaml block starting here is a whole config (it '
                                    'has shards:) and santral --check-config refuses it (exit %d):'
                                    '\n    %s' % (rel, number, code,
                                                  output.strip().replace('\n', '\n    ')))
                else:
                    print('config ok: %s:%d' % (rel, number))
    print('configs: %d checked with santral --check-config, %d fragments skipped, %d excused'
          % (checked, fragments, excused))
    if checked == 0:
        failures.append('no ```yaml block with a top-level shards: key was found in README.md or '
                        'docs/*.md: the config check checked nothing')
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--santral', required=True, help='the santral binary')
    parser.add_argument('--root', default=os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')))
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    readme = os.path.join(root, 'README.md')
    docs = os.path.join(root, 'docs')
    files = [readme] + sorted(os.path.join(docs, name) for name in os.listdir(docs)
                              if name.endswith('.md'))

    failures, links = check_links(root, files)
    print('links: %d relative links checked in %d files' % (links, len(files)))
    failures += check_configs(root, files, args.santral)
    with open(readme, encoding='utf-8') as f:
        lines = f.read().count('\n')
    print('README.md: %d lines (at most %d)' % (lines, README_MAX_LINES))
    if lines > README_MAX_LINES:
        failures.append('README.md:%d: README.md has %d lines, more than %d: move the detail to '
                        'a page of docs/ and link it' % (README_MAX_LINES + 1, lines,
                                                          README_MAX_LINES))
    for failure in failures:
        print('FAIL ' + failure)
    print('docs_test: %s' % ('%d failures' % len(failures) if failures else 'ok'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())

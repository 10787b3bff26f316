#!/usr/bin/python3
"""The dashboard in a real browser, against a running Santral under load.

Starts 4 redis-server shards and a Santral with admin.token set and a namespace of every
strategy, puts load on it (SETs and GETs spread over the shards, and SANTRAL SALT of a counter
that is then INCRed hard, and of one nobody touches; and new keys of a range namespace whose
numeric shard key rises, for the shard-key analysis panel), and runs dashboard_check.mjs
(playwright-core driving Debian's chromium) against the dashboard. Screenshots go to --out.

  dashboard_test.py --santral build/app/santral --out build/tests/browser-output

Installs its npm package (tests/browser/node_modules, not committed) when missing. Exits 77,
which ctest reports as skipped, only when chromium cannot be installed.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import redis

HERE = Path(__file__).resolve().parent
SKIP = 77
SALTED = "likes:viral"
IDLE_SALTED = "likes:quiet"  # salted, and never requested
NEAR_CACHED = "post:hot"
RISING = "events"  # a range namespace whose new keys' numeric shard key rises with time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ping(port, what, timeout=10):
    client = redis.Redis(port=port, socket_timeout=1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if client.ping():
                return client
        except redis.RedisError:
            time.sleep(0.05)
    sys.exit(f"dashboard test: {what} on port {port} did not answer PING")


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    # scripts/install-deps.sh installs it; a bare ctest run tries once itself.
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("dashboard test: chromium is missing; installing it with apt-get", flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"],
                       env=env, stdout=subprocess.DEVNULL, check=False)
    return shutil.which("chromium")


def install_playwright():
    """npm ci into tests/browser/node_modules unless the locked version is there already."""
    installed = HERE / "node_modules" / "playwright-core" / "package.json"
    lock = (HERE / "package-lock.json").read_text()
    if installed.exists() and f'"version": "{version_of(installed)}"' in lock:
        return
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE,
                   check=True)


def version_of(package_json):
    import json
    return json.loads(package_json.read_text())["version"]


def config_text(shard_ports, port, admin_port, token):
    shards = "".join(f"  - name: shard{i}\n    address: 127.0.0.1:{p}\n"
                     for i, p in enumerate(shard_ports))
    return f"""listen: 127.0.0.1:{port}
workers: 2
hash: murmur
distribution: ketama
hash_tag: "{{}}"
watch_file: false
admin:
  listen: 127.0.0.1:{admin_port}
  token: {token}
hotkeys:
  window_s: 2
near_cache:
  enabled: true
  min_reads_per_sec: 20
shards:
{shards}namespaces:
  - name: users
    match: "user:{{id}}"
    strategy: hashed
  - name: carts
    match: "cart:{{user}}:{{item}}"
    shard_key: user
    strategy: slots
    slots:
      - {{shard: shard0, from: 0, to: 4095}}
      - {{shard: shard1, from: 4096, to: 8191}}
      - {{shard: shard2, from: 8192, to: 12287}}
      - {{shard: shard3, from: 12288, to: 16383}}
  - name: customers
    match: "customer:{{name}}"
    strategy: range
    ranges:
      - {{shard: shard0, to: "h"}}
      - {{shard: shard1, from: "h", to: "p"}}
      - {{shard: shard2, from: "p", to: "t"}}
      - {{shard: shard3, from: "t"}}
  - name: orders
    match: "order:{{seller}}:{{id}}"
    shard_key: seller
    strategy: directory
    groups: {{seller42: shard1, seller7: shard0}}
    fallback: {{strategy: hashed, shards: [shard2, shard3]}}
  - name: accounts
    match: "account:{{region}}:{{id}}"
    shard_key: region
    strategy: zone
    zones: {{eu: [shard0, shard1], us: [shard2, shard3]}}
    groups: {{de: eu, fr: eu, ny: us}}
    default_zone: us
  - name: {RISING}
    match: "event:{{seq}}"
    strategy: range
    order: numeric
    ranges:
      - {{shard: shard0, to: 1000000}}
      - {{shard: shard1, from: 1000000, to: 2000000}}
      - {{shard: shard2, from: 2000000, to: 3000000}}
      - {{shard: shard3, from: 3000000}}
"""


def load(port, stop, errors):
    """Keys on every shard, the salted counter INCRed hard, new event keys numbered in order (a
    rising shard key), and (from a client that does not write, so that the near cache may answer
    it) a key everyone reads."""
    writer = redis.Redis(port=port, decode_responses=True)
    reader = redis.Redis(port=port, decode_responses=True)
    events = redis.Redis(port=port, decode_responses=True)
    n = 0
    event = 0
    try:
        while not stop.is_set():
            pipe = writer.pipeline(transaction=False)
            for i in range(50):
                pipe.set(f"user:{n % 2000}", "x")
                pipe.get(f"customer:{chr(97 + n % 26)}{n}")
                n += 1
            for _ in range(100):
                pipe.execute_command("INCR", SALTED)
            pipe.execute()
            pipe = events.pipeline(transaction=False)
            for _ in range(25):
                pipe.set(f"event:{event}", "x")
                event += 1
            pipe.execute()
            pipe = reader.pipeline(transaction=False)
            for _ in range(50):
                pipe.get(NEAR_CACHED)
            pipe.execute()
            time.sleep(0.01)
    except redis.RedisError as e:
        errors.append(str(e))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--santral", required=True, help="the santral binary")
    parser.add_argument("--out", required=True, help="where the screenshots and logs go")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    chromium = find_chromium()
    if not chromium:
        print("SKIPPED: the dashboard's browser test needs chromium, which is not installed and "
              "could not be installed (scripts/install-deps.sh installs it)")
        return SKIP
    if not shutil.which("node") or not shutil.which("npm"):
        sys.exit("dashboard test: needs node and npm (scripts/install-deps.sh installs them)")
    install_playwright()

    processes = []
    work = Path(tempfile.mkdtemp(prefix="santral-dashboard-"))
    stop = threading.Event()
    try:
        shard_ports = [free_port() for _ in range(4)]
        for p in shard_ports:
            processes.append(subprocess.Popen(
                ["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(work)], stdout=subprocess.DEVNULL))
        for p in shard_ports:
            wait_ping(p, "redis-server")
        port, admin_port, token = free_port(), free_port(), "dash-t0ken"
        config = work / "santral.yaml"
        config.write_text(config_text(shard_ports, port, admin_port, token))
        log = open(out / "santral.log", "w")
        processes.append(subprocess.Popen([args.santral, "--config", str(config)], stdout=log,
                                          stderr=subprocess.STDOUT))
        client = wait_ping(port, "santral", timeout=30)
        client.execute_command("SANTRAL", "SALT", SALTED, 4)
        client.execute_command("SANTRAL", "SALT", IDLE_SALTED, 3)
        client.set(NEAR_CACHED, "a post everyone reads")

        errors = []
        loader = threading.Thread(target=load, args=(port, stop, errors), daemon=True)
        loader.start()
        time.sleep(1)  # some traffic before the page's first look
        env = dict(os.environ, DASHBOARD_URL=f"http://127.0.0.1:{admin_port}/",
                   ADMIN_TOKEN=token, SHARDS="shard0,shard1,shard2,shard3", SALTED_KEY=SALTED, IDLE_SALTED_KEY=IDLE_SALTED, CACHED_KEY=NEAR_CACHED,
                   RISING_NAMESPACE=RISING,
                   CHROMIUM=chromium, OUT_DIR=str(out))
        started = time.monotonic()
        result = subprocess.run(["node", str(HERE / "dashboard_check.mjs")], env=env,
                                timeout=120, check=False)
        print(f"browser checks took {time.monotonic() - started:.1f} s; screenshots in {out}")
        stop.set()
        loader.join(5)
        if errors:
            print(f"FAIL the load saw errors: {errors[:3]}")
            return 1
        return result.returncode
    finally:
        stop.set()
        for p in reversed(processes):
            p.terminate()
        for p in processes:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

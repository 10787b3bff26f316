#!/usr/bin/python3
"""deploy/docker-compose.yml's services as local processes, with the profile grow: Chirp's
five steps, each checked by Chirp itself.

No Docker engine runs here, so each service runs what its image would run, on loopback: the
Redis images as redis-server with the service's command, the etcd images as /usr/bin/etcd with
the service's ETCD_* environment, the santral image (deploy/Dockerfile) as the santral binary
with the file its volume mounts, and the Chirp image (deploy/chirp/Dockerfile) as
deploy/chirp/chirp.py with the service's command. Every "service:port" (and a service's own
"0.0.0.0:port") becomes 127.0.0.1 and a free port of that service's; a file a volume mounts is
translated the same way for the service that mounts it. Services start in depends_on order,
each once what it depends on answers. Chirp's story runs until it says whether every step's
checks passed; its light load afterwards is not waited for.

Before that, the santral binary's shared libraries are each checked to come from a Debian
package the image installs (or that debian:12-slim has).

  compose_test.py --santral build/app/santral
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import redis
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROFILES = {"grow"}
# What debian:12-slim holds already: the C and C++ runtimes.
BASE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except (OSError, redis.RedisError):
            pass
        time.sleep(0.05)
    sys.exit(f"compose test: {what} within {timeout} s")


class Compose:
    """The compose file's services, and where each of their ports is on this machine."""

    def __init__(self, path, profiles):
        self.file = yaml.safe_load(path.read_text())  # PyYAML resolves the << merge keys
        self.services = {name: service for name, service in self.file["services"].items()
                         if not service.get("profiles") or set(service["profiles"]) & profiles}
        self.ports = {}

    def port(self, service, port):
        return self.ports.setdefault((service, int(port)), free_port())

    def local(self, text, service):
        """`text` as seen from `service`, with every service's address made local."""
        def address(match):
            host, port = match.group(1), match.group(2)
            if host == "0.0.0.0":
                return f"127.0.0.1:{self.port(service, port)}"
            if host in self.services:
                return f"127.0.0.1:{self.port(host, port)}"
            return match.group(0)
        return re.sub(r"([A-Za-z0-9_.-]+):(\d+)", address, text)

    def local_args(self, args, service):
        """A command's arguments made local; "<service> <port>" pairs too (--replicaof)."""
        out = []
        i = 0
        while i < len(args):
            if args[i] in self.services and i + 1 < len(args) and args[i + 1].isdigit():
                out += ["127.0.0.1", str(self.port(args[i], args[i + 1]))]
                i += 2
                continue
            out.append(self.local(args[i], service))
            i += 1
        return out

    def dependencies(self, name):
        depends = self.services[name].get("depends_on") or []
        return [d for d in depends if d in self.services]

    def order(self):
        done, order = set(), []

        def visit(name):
            if name in done:
                return
            done.add(name)
            for dependency in self.dependencies(name):
                visit(dependency)
            order.append(name)
        for name in self.services:
            visit(name)
        return order


def dockerfile_of(service):
    build = service.get("build")
    return None if not build else (DEPLOY / build["context"] / build["dockerfile"]).resolve()


def runtime_packages(dockerfile):
    """The packages the final stage of a Dockerfile installs with apt-get."""
    final = dockerfile.read_text().split("FROM ")[-1]
    install = re.search(r"apt-get install[^\n]*(?:\\\n[^\n]*)*", final).group(0)
    return {word for word in install.replace("\\\n", " ").split() if not word.startswith("-")}


def check_image_libraries(santral):
    """Every shared library santral loads comes from a package the image installs."""
    needed = runtime_packages(DEPLOY / "Dockerfile") | BASE_PACKAGES
    libraries = re.findall(r"=> (/\S+)", subprocess.run(["ldd", santral], capture_output=True,
                                                          text=True, check=True).stdout)
    missing = []
    for library in libraries:
        owner = subprocess.run(["dpkg", "-S", os.path.realpath(library)], capture_output=True,
                               text=True)
        if owner.returncode != 0:  # the realpath may be under /usr/lib, the package's under /lib
            owner = subprocess.run(["dpkg", "-S", library], capture_output=True, text=True)
        package = owner.stdout.split(":")[0] if owner.returncode == 0 else f"? ({library})"
        if package not in needed:
            missing.append(f"{Path(library).name} ({package})")
    if missing:
        print(f"FAIL deploy/Dockerfile's image lacks the packages of: {', '.join(missing)}")
        return False
    print(f"ok   the image installs the package of each of santral's {len(libraries)} libraries")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--santral", required=True, help="the santral binary")
    args = parser.parse_args()
    ok = check_image_libraries(args.santral)

    compose = Compose(DEPLOY / "docker-compose.yml", PROFILES)
    work = Path(tempfile.mkdtemp(prefix="santral-compose-"))
    processes = []
    ready = {}  # service -> a function that says whether it answers

    def mounted(name, service):
        """The service's volumes as container path -> a local copy made local for it."""
        files = {}
        for volume in service.get("volumes", []):
            host, container = volume.split(":")[:2]
            copy = work / f"{name}-{Path(container).name}"
            copy.write_text(compose.local((DEPLOY / host).read_text(), name))
            files[container] = str(copy)
        return files

    def start(name):
        service = compose.services[name]
        for dependency in compose.dependencies(name):
            until(ready[dependency], 30, f"{dependency} (for {name}) did not answer")
        log = open(work / f"{name}.log", "w")
        image = service.get("image", "")
        dockerfile = dockerfile_of(service)
        if image.startswith("redis:"):
            port = compose.port(name, 6379)
            command = compose.local_args(service["command"], name)
            assert command[0] == "redis-server", command
            (work / name).mkdir()
            processes.append(subprocess.Popen(
                command + ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(work / name)],
                stdout=log, stderr=subprocess.STDOUT))
            ready[name] = lambda: redis.Redis(port=port, socket_timeout=1).ping()
        elif "etcd" in image:
            environment = {key: compose.local(str(value), name)
                           for key, value in service["environment"].items()}
            environment["ETCD_DATA_DIR"] = str(work / name)
            environment["ETCD_LOG_LEVEL"] = "warn"
            port = compose.port(name, 2379)
            processes.append(subprocess.Popen(["/usr/bin/etcd"], env=dict(os.environ, **environment),
                                              stdout=log, stderr=subprocess.STDOUT))

            def etcd_healthy(port=port):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as page:
                    return json.loads(page.read()).get("health") == "true"
            ready[name] = etcd_healthy
        elif dockerfile == (DEPLOY / "Dockerfile").resolve():
            files = mounted(name, service)
            # The image's ENTRYPOINT is santral, its CMD --config /etc/santral/santral.yaml.
            processes.append(subprocess.Popen(
                [args.santral, "--config", files["/etc/santral/santral.yaml"]],
                stdout=log, stderr=subprocess.STDOUT))
            port = compose.port(name, 6380)
            ready[name] = lambda: redis.Redis(port=port, socket_timeout=1).ping()
        elif dockerfile == (DEPLOY / "chirp" / "Dockerfile").resolve():
            files = mounted(name, service)
            command = [files.get(arg, arg) for arg in compose.local_args(service["command"], name)]
            # The image's ENTRYPOINT runs chirp.py with the service's command.
            chirp = subprocess.Popen([sys.executable, str(DEPLOY / "chirp" / "chirp.py")] + command,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            processes.append(chirp)
            return chirp
        else:
            sys.exit(f"compose test: no local stand-in for service {name} ({image or dockerfile})")
        return None

    try:
        chirp = None
        for name in compose.order():
            chirp = start(name) or chirp
        if chirp is None:
            sys.exit("compose test: the compose file has no Chirp")
        steps, skipped, verdict = [], [], None
        for line in chirp.stdout:
            print(line, end="", flush=True)
            if re.match(r"== (\d)\. ", line):
                steps.append(int(line[3]))
            if line.strip().startswith("skipped:"):
                skipped.append(steps[-1] if steps else 0)
            if line.startswith("Chirp: ") and ("checks passed" in line or "FAILED" in line):
                verdict = line
                break
        if verdict is None or "every step's checks passed" not in verdict:
            print(f"FAIL Chirp's story: {verdict.strip() if verdict else 'no verdict'}")
            ok = False
        if steps != [1, 2, 3, 4, 5] or skipped:
            print(f"FAIL Chirp told steps {steps}, skipping {skipped}; not 1 to 5")
            ok = False
        if ok:
            print("ok   Chirp told the five steps through the compose services, every check passed")
        return 0 if ok else 1
    except BaseException:
        ok = False
        raise
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        if not ok:
            for log in sorted(work.glob("*.log")):
                print(f"== {log.name}\n{log.read_text()[-3000:]}")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""deploy/k8s rendered offline and checked, with no cluster.

Each kustomization (the base, and the demo overlay with the etcd-fleet component) is rendered
by `kubectl kustomize` (the kubectl of this machine's image, with its kustomize; a standalone
`kustomize` is used when there is one instead). Every object is validated against the
Kubernetes API's schemas by validate_k8s.mjs (the npm package kubernetes-models, installed into
tests/deploy/node_modules by this test, as package-lock.json pins it), strictly: a field the
schema does not know fails too. A deliberately broken object must fail, so that a validator
that passes everything is caught. Then what the schemas cannot say:

  - the routers' config from the ConfigMap passes `santral --check-config`;
  - the Deployment mounts that ConfigMap where --config points, probes /livez and /readyz on
    the container port that admin.listen names, serves `listen`'s port as `redis`, announces
    the pod's IP from the downward API, and waits longer at termination than
    shutdown.ready_delay_ms + drain_ms;
  - the Services and the PodDisruptionBudget select the routers' pods;
  - in the demo, the config's etcd members and shards are the pods the StatefulSets make.

  k8s_test.py --santral build/app/santral

Exits 77 (skipped, saying why) only when neither kubectl nor kustomize is on the machine.
"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
K8S = ROOT / "deploy" / "k8s"
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)


def renderer():
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    return None


def render(command, folder):
    out = subprocess.run(command + [str(folder)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"k8s test: {' '.join(command)} {folder} failed:\n{out.stderr}")
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def install_validator():
    """npm ci into tests/deploy/node_modules unless the locked version is there already."""
    installed = HERE / "node_modules" / "kubernetes-models" / "package.json"
    lock = json.loads((HERE / "package-lock.json").read_text())
    want = lock["packages"]["node_modules/kubernetes-models"]["version"]
    if installed.exists() and json.loads(installed.read_text())["version"] == want:
        return
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE,
                   check=True)


def validate(objects):
    """validate_k8s.mjs's verdict: [{kind, name, errors}], and whether all passed."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json.dump(objects, file)
        file.flush()
        out = subprocess.run(["node", str(HERE / "validate_k8s.mjs"), file.name],
                             capture_output=True, text=True, cwd=HERE)
    if not out.stdout.strip():
        sys.exit(f"k8s test: the validator printed nothing:\n{out.stderr}")
    return json.loads(out.stdout), out.returncode == 0


def one(objects, kind, name=None):
    found = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    check(len(found) == 1, f"exactly one {kind} {name or ''}".rstrip())
    return found[0] if found else {}


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def port_of(endpoint):
    return int(endpoint.rsplit(":", 1)[1])


def check_routers(objects, santral, title):
    deployment = one(objects, "Deployment", "santral")
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    container = pod["spec"]["containers"][0]
    args = container["args"]
    config_path = Path(args[args.index("--config") + 1])

    # The ConfigMap the pod mounts, and the config in it.
    mount = next(m for m in container["volumeMounts"] if config_path.is_relative_to(m["mountPath"]))
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
    config_map = one(objects, "ConfigMap", volume["configMap"]["name"])
    text = config_map["data"][config_path.name]
    config = yaml.safe_load(text)
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / config_path.name
        file.write_text(text)
        checked = subprocess.run([santral, "--check-config", str(file)], capture_output=True,
                                 text=True)
    check(checked.returncode == 0, f"{title}: the ConfigMap's config is valid: "
          + (checked.stdout + checked.stderr).strip())

    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    check(ports.get("redis") == port_of(config["listen"]), f"{title}: port redis is listen's")
    check(ports.get("admin") == port_of(config["admin"]["listen"]),
          f"{title}: port admin is admin.listen's")
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz"),
                        ("startupProbe", "/livez")):
        get = container.get(probe, {}).get("httpGet", {})
        check(get.get("path") == path and get.get("port") == "admin",
              f"{title}: {probe} asks {path} on the admin port")
    # Each pod announces its own address: the downward API's pod IP, expanded in args.
    announce = args[args.index("--announce") + 1] if "--announce" in args else ""
    env = {e["name"]: e for e in container.get("env", [])}
    check(announce == f"$(POD_IP):{ports.get('redis')}", f"{title}: --announce is the pod's IP")
    check(env.get("POD_IP", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
          == "status.podIP", f"{title}: POD_IP comes from the downward API")
    grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
    stopping_ms = config.get("shutdown", {}).get("ready_delay_ms", 0) + config.get("drain_ms", 5000)
    check(grace * 1000 > stopping_ms,
          f"{title}: terminationGracePeriodSeconds ({grace} s) outlasts ready_delay_ms + drain_ms")

    for service in (o for o in objects if o["kind"] == "Service" and o["metadata"]["name"].startswith("santral")):
        check(selects(service["spec"]["selector"], labels),
              f"{title}: Service {service['metadata']['name']} selects the routers")
        for port in service["spec"]["ports"]:
            check(port["targetPort"] in ports, f"{title}: Service port {port['name']} is the pod's")
    budget = one(objects, "PodDisruptionBudget", "santral")
    check(selects(budget.get("spec", {}).get("selector", {}).get("matchLabels", {}), labels),
          f"{title}: the PodDisruptionBudget selects the routers")
    return config


def stateful_hosts(objects, name):
    """host:port of each pod of StatefulSet `name` through its headless Service."""
    statefulset = one(objects, "StatefulSet", name)
    service = one(objects, "Service", statefulset["spec"]["serviceName"])
    check(service["spec"].get("clusterIP") == "None", f"Service {service['metadata']['name']} is headless")
    port = service["spec"]["ports"][0]["port"]
    return [f"{name}-{i}.{service['metadata']['name']}:{port}"
            for i in range(statefulset["spec"]["replicas"])]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--santral", required=True)
    args = parser.parse_args()
    command = renderer()
    if command is None:
        print("k8s test: skipped: neither kubectl nor kustomize is installed")
        sys.exit(77)
    if not shutil.which("node") or not shutil.which("npm"):
        sys.exit("k8s test: needs node and npm (scripts/install-deps.sh installs them)")
    install_validator()

    base = render(command, K8S / "base")
    demo = render(command, K8S / "overlays" / "demo")
    for title, objects in (("base", base), ("demo", demo)):
        results, passed = validate(objects)
        for result in results:
            check(not result["errors"], f"{title}: {result['kind']} {result['name']} validates"
                  + "".join(f"\n       {e}" for e in result["errors"]))
        check(passed and len(results) == len(objects), f"{title}: every object validated")

    # The validator refuses what the API would: a wrong type, an unknown field, a missing one.
    broken = json.loads(json.dumps(one(base, "Deployment", "santral")))
    container = broken["spec"]["template"]["spec"]["containers"][0]
    container["ports"][0]["containerPort"] = "6380"
    container["readinessProbes"] = container.pop("readinessProbe")
    del broken["spec"]["selector"]
    results, passed = validate([broken])
    errors = "\n".join(results[0]["errors"])
    check(not passed and "containerPort" in errors and "readinessProbes" in errors
          and "selector" in errors, "a broken Deployment is refused:\n" + errors)

    check_routers(base, args.santral, "base")
    config = check_routers(demo, args.santral, "demo")
    check(all(o["metadata"].get("namespace") == "santral-demo" for o in demo if o["kind"] != "Namespace"),
          "demo: every object is in the namespace santral-demo")
    check(one(demo, "Deployment", "santral")["spec"]["replicas"] == 3, "demo: three routers")
    check(config.get("cluster_endpoint") is True, "demo: the routers answer Redis Cluster clients")
    check(sorted(config["cluster"]["etcd"]) == sorted(stateful_hosts(demo, "etcd")),
          "demo: cluster.etcd names the etcd StatefulSet's three members")
    check(len(stateful_hosts(demo, "etcd")) == 3, "demo: etcd has three members")
    check(sorted(s["address"] for s in config["shards"]) == sorted(stateful_hosts(demo, "redis")),
          "demo: the shards are the redis StatefulSet's pods")

    print(f"{len(failures)} failed" if failures else "k8s test: all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Generate protocol/command_table_data.cpp from a live redis-server and protocol/command_rules.txt.

Usage: scripts/gen-command-table.py [--port PORT]
Without --port it starts a throwaway redis-server on a free loopback port. Fails (exit 1) when the
server has a command that command_rules.txt does not classify, or the rules name one it lacks.
"""
import argparse
import collections
import os
import socket
import subprocess
import sys
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "protocol", "command_rules.txt")
OUTPUT = os.path.join(ROOT, "protocol", "command_table_data.cpp")

COMMAND_FLAGS = {
    "readonly": "kReadonly", "write": "kWrite", "denyoom": "kDenyOom", "admin": "kAdmin",
    "pubsub": "kPubsub", "noscript": "kNoscript", "blocking": "kBlocking", "loading": "kLoading",
    "stale": "kStale", "fast": "kFast", "no_multi": "kNoMulti", "movablekeys": "kMovableKeys",
    "no_mandatory_keys": "kNoMandatoryKeys",
}
KEY_FLAGS = {
    "RO": "kRO", "RW": "kRW", "OW": "kOW", "RM": "kRM", "access": "kAccess", "update": "kUpdate",
    "insert": "kInsert", "delete": "kDelete", "not_key": "kNotKey", "incomplete": "kIncomplete",
    "variable_flags": "kVariableFlags",
}
# Redis 7.0's ACL categories, in Redis's order (protocol/command_categories.h has the same enum).
ACL_CATEGORIES = [
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
    "connection", "transaction", "scripting",
]
# Commands Santral adds to Redis's own; their arity comes from the rules file.
SANTRAL_COMMANDS = {"santral"}
# SANTRAL reloads, reshards and salts: only users allowed @admin (@dangerous) commands run it.
SANTRAL_CATEGORIES = [b"@admin", b"@slow", b"@dangerous"]

ROUTING = {
    "keyed": "Keyed", "split": "Split", "broadcast": "Broadcast", "any": "Any",
    "channel": "Channel", "local": "Local", "stateful": "Stateful", "refused": "Refused",
    "container": "Container",
}
# The verb each stateful kind allows: what the command does to the client's pinned state.
STATEFUL_VERBS = {
    "transaction": {"multi", "exec", "discard", "watch", "unwatch"},
    "subscribe": {"subscribe", "shard-subscribe", "pattern-subscribe", "unsubscribe",
                  "shard-unsubscribe", "pattern-unsubscribe"},
    "blocking": {"wait", "block"},
}
# timeout=...: what a blocking command answers when it times out (or CLIENT UNBLOCK ... TIMEOUT).
TIMEOUT_REPLIES = {"nil-array": "NilArray", "nil-bulk": "NilBulk", "zero": "Zero"}
# The features' columns: option name -> (CommandSpec field, its enum, the values allowed, the
# routings it may go with). Each value is one of the enum's (protocol/command_table.h).
FEATURE_COLUMNS = {
    "gather": ("gather", "GatherAlgorithm", {
        "set-inter", "set-inter-card", "set-union", "set-diff", "z-union", "z-inter",
        "z-inter-card", "z-diff", "pf-count", "lcs"}, {"keyed"}),
    "cross-write": ("cross_write", "CrossShardWrite", {
        "store-set-inter", "store-set-union", "store-set-diff", "store-z-union", "store-z-inter",
        "store-z-diff", "set-move", "list-move", "rename", "rename-nx", "copy"}, {"keyed"}),
    "salted": ("salted", "SaltedOperation", {
        "increment", "increment-float", "get", "mget", "count-keys", "set", "expire", "pexpire",
        "persist", "base-key", "strlen", "hash-increment", "hash-increment-float", "hash-get",
        "hash-get-all", "hash-keys", "hash-length", "hash-exists"}, {"keyed", "split"}),
}
# The read each cross-write=store-<read> stores: it must be a gather= value.
STORE_PREFIX = "store-"

Rule = collections.namedtuple("Rule", "routing detail verb timeout reason script arity features")


def camel(word):
    return "".join(part.capitalize() for part in word.replace("_", "-").split("-"))


def read_rules():
    rules = {}
    with open(RULES) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            head, _, reason = line.partition("--")
            words = head.split()
            if len(words) < 2 or words[1] not in ROUTING:
                sys.exit(f"{RULES}:{lineno}: expected '<name> <routing> [detail] [-- reason]'")
            name, routing = words[0], words[1]
            script = next((w for w in words[2:] if w.startswith("script-")), "")
            arity = next((w for w in words[2:] if w.startswith("arity=")), "")
            timeout = next((w for w in words[2:] if w.startswith("timeout=")), "")
            features = {}
            for word in words[2:]:
                option, _, value = word.partition("=")
                if option not in FEATURE_COLUMNS:
                    continue
                _, _, values, routings = FEATURE_COLUMNS[option]
                if value not in values:
                    sys.exit(f"{RULES}:{lineno}: expected {option}={'|'.join(sorted(values))}")
                if routing not in routings:
                    sys.exit(f"{RULES}:{lineno}: {option}= goes with {' or '.join(routings)}")
                if value.startswith(STORE_PREFIX) and value[len(STORE_PREFIX):] not in (
                        FEATURE_COLUMNS["gather"][2]):
                    sys.exit(f"{RULES}:{lineno}: {value} stores a read no gather= value names")
                features[option] = value
            options = ("script-", "arity=", "timeout=") + tuple(f"{c}=" for c in FEATURE_COLUMNS)
            rest = [w for w in words[2:] if not w.startswith(options)]
            detail = rest[0] if rest else ""
            verb = rest[1] if len(rest) > 1 else ""
            if routing == "refused" and not reason.strip():
                sys.exit(f"{RULES}:{lineno}: a refused command needs a reason after '--'")
            if routing in ("split", "broadcast", "local", "stateful") and not detail:
                sys.exit(f"{RULES}:{lineno}: '{routing}' needs a detail")
            if len(rest) > (2 if routing == "stateful" else 1):
                sys.exit(f"{RULES}:{lineno}: unexpected '{' '.join(rest[1:])}'")
            if routing == "stateful" and detail not in STATEFUL_VERBS:
                sys.exit(f"{RULES}:{lineno}: 'stateful' needs one of {' | '.join(STATEFUL_VERBS)}")
            if routing == "stateful" and verb not in STATEFUL_VERBS[detail]:
                verbs = " | ".join(sorted(STATEFUL_VERBS[detail]))
                sys.exit(f"{RULES}:{lineno}: 'stateful {detail}' needs a verb: {verbs}")
            if timeout and timeout.split("=", 1)[1] not in TIMEOUT_REPLIES:
                sys.exit(f"{RULES}:{lineno}: expected timeout={'|'.join(TIMEOUT_REPLIES)}")
            if name in rules:
                sys.exit(f"{RULES}:{lineno}: '{name}' is listed twice")
            if name.split("|")[0] in SANTRAL_COMMANDS and not arity:
                sys.exit(f"{RULES}:{lineno}: Santral's own command '{name}' needs arity=N")
            rules[name] = Rule(routing, detail, verb, timeout, reason.strip(), script, arity,
                               features)
    return rules


def as_str(value):
    return value.decode() if isinstance(value, bytes) else value


def pairs(seq):
    it = iter(seq)
    return {as_str(k): v for k, v in zip(it, it)}


def key_spec(raw):
    spec = pairs(raw)
    flags = [KEY_FLAGS[as_str(f)] for f in spec.get("flags", []) if as_str(f) in KEY_FLAGS]
    # Every field, in declaration order, so the initializer is complete.
    f = {"begin": "KeySpec::Begin::Unknown", "index": 0, "keyword": '""', "startfrom": 0,
         "find": "KeySpec::Find::Unknown", "lastkey": 0, "keystep": 1, "limit": 0,
         "keynumidx": 0, "firstkey": 0}
    bs = pairs(spec["begin_search"])
    bs_spec = pairs(bs["spec"]) if bs["spec"] else {}
    if as_str(bs["type"]) == "index":
        f.update(begin="KeySpec::Begin::Index", index=bs_spec["index"])
    elif as_str(bs["type"]) == "keyword":
        f.update(begin="KeySpec::Begin::Keyword", keyword=f'"{as_str(bs_spec["keyword"])}"',
                 startfrom=bs_spec["startfrom"])
    fk = pairs(spec["find_keys"])
    fk_spec = pairs(fk["spec"]) if fk["spec"] else {}
    if as_str(fk["type"]) == "range":
        f.update(find="KeySpec::Find::Range", lastkey=fk_spec["lastkey"],
                 keystep=fk_spec["keystep"], limit=fk_spec["limit"])
    elif as_str(fk["type"]) == "keynum":
        f.update(find="KeySpec::Find::Keynum", keystep=fk_spec["keystep"],
                 keynumidx=fk_spec["keynumidx"], firstkey=fk_spec["firstkey"])
    parts = [f".{name} = {value}" for name, value in f.items()]
    parts.append(".flags = " + (" | ".join(f"KeySpec::{flag}" for flag in flags) if flags else "0"))
    return "{" + ", ".join(parts) + "}"


# Subcommands newer than the server (CLUSTER MYSHARDID, Redis 7.2) that Santral answers itself:
# a rule with arity=N for a subcommand of an existing container that the server lacks.
ADDED_SUBCOMMAND_FLAGS = [b"loading", b"stale"]
ADDED_SUBCOMMAND_CATEGORIES = [b"@slow"]


def add_santral_commands(commands, rules):
    """Santral's own commands, shaped like COMMAND's output so the rest needs no special case."""
    for name, rule in rules.items():
        top = name.split("|")[0]
        if top not in SANTRAL_COMMANDS:
            if "|" in name and name not in commands and rule.arity and top in commands:
                raw = [name.encode(), int(rule.arity.split("=")[1]), ADDED_SUBCOMMAND_FLAGS, 0, 0,
                       0, ADDED_SUBCOMMAND_CATEGORIES, [], [], []]
                commands[name] = raw
                commands[top][9].append(raw)
            continue
        raw = [name.encode(), int(rule.arity.split("=")[1]), [], 0, 0, 0, SANTRAL_CATEGORIES, [],
               [], []]
        commands[name] = raw
    for name, raw in commands.items():
        if "|" in name and name.split("|")[0] in SANTRAL_COMMANDS:
            commands[name.split("|")[0]][9].append(raw)


def collect(raw, into):
    name = as_str(raw[0])
    into[name] = raw
    for sub in raw[9]:
        collect(sub, into)


def start_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    for _ in range(100):
        try:
            redis.Redis(port=port).ping()
            return proc, port
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    proc = None
    port = args.port
    if port is None:
        proc, port = start_server()
    try:
        client = redis.Redis(port=port)
        client.response_callbacks.pop("COMMAND", None)
        commands = {}
        for raw in client.execute_command("COMMAND"):
            collect(raw, commands)
        version = client.info("server")["redis_version"]
    finally:
        if proc:
            proc.terminate()
            proc.wait()

    rules = read_rules()
    add_santral_commands(commands, rules)
    missing = sorted(set(commands) - set(rules))
    unknown = sorted(set(rules) - set(commands))
    if missing or unknown:
        for name in missing:
            print(f"no rule in {RULES} for '{name}'", file=sys.stderr)
        for name in unknown:
            print(f"{RULES} has a rule for '{name}', which redis {version} does not have",
                  file=sys.stderr)
        sys.exit(1)
    # Every command that can block says what it answers on timeout; no other command does.
    for name, raw in commands.items():
        rule = rules[name]
        blocks = "blocking" in (as_str(f) for f in raw[2]) or rule.detail == "blocking"
        if blocks and not rule.timeout:
            sys.exit(f"{RULES}: '{name}' can block: it needs timeout={'|'.join(TIMEOUT_REPLIES)}")
        if rule.timeout and not blocks:
            sys.exit(f"{RULES}: '{name}' cannot block: it takes no timeout=")
        # A gathered read only reads; a write run across shards is a write.
        flags = {as_str(f) for f in raw[2]}
        if "gather" in rule.features and "readonly" not in flags:
            sys.exit(f"{RULES}: '{name}' is not read-only: it takes no gather=")
        if "cross-write" in rule.features and "write" not in flags:
            sys.exit(f"{RULES}: '{name}' is not a write: it takes no cross-write=")

    out = []
    out.append(f"// Generated by scripts/gen-command-table.py from redis-server {version}'s COMMAND")
    out.append("// output and protocol/command_rules.txt. Do not edit: change the rules and regenerate.")
    out.append('#include "protocol/command_table_data.h"')
    out.append("")
    out.append("namespace santral::protocol {")
    out.append("namespace {")
    out.append("")

    def ident(name):
        return "k" + camel(name.replace("|", "-"))

    ids = {}
    for name in sorted(n for n in commands if "|" not in n):
        ids[name] = len(ids)
        for sub in sorted(as_str(s[0]) for s in commands[name][9]):
            ids[sub] = len(ids)

    def categories(raw):
        names = [as_str(c).lstrip("@") for c in raw[6]]
        for c in names:
            if c not in ACL_CATEGORIES:
                sys.exit(f"redis {version}: '{as_str(raw[0])}' has an unknown ACL category '@{c}'")
        bits = [f"category_bit(AclCategory::{camel(c)})" for c in ACL_CATEGORIES if c in names]
        return " | ".join(bits) if bits else "0"

    def spec_entry(name):
        raw = commands[name]
        routing, detail, verb, timeout, reason, script, _, features = rules[name]
        flags = [COMMAND_FLAGS[as_str(f)] for f in raw[2] if as_str(f) in COMMAND_FLAGS]
        fields = [f'.name = "{name}"', f".arity = {raw[1]}",
                  ".flags = " + (" | ".join(flags) if flags else "0")]
        fields.append(f".categories = {categories(raw)}")
        fields.append(f".id = {ids[name]}")
        fields.append(f".key_specs = {ident(name)}Keys" if raw[8] else ".key_specs = {}")
        fields.append(f".routing = Routing::{ROUTING[routing]}")
        merge = camel(detail) if routing in ("split", "broadcast") else "None"
        local = camel(detail) if routing == "local" else "None"
        stateful = camel(detail) if routing == "stateful" else "None"
        stateful_verb = camel(verb) if routing == "stateful" else "None"
        timeout_reply = TIMEOUT_REPLIES[timeout.split("=", 1)[1]] if timeout else "None"
        script_arg = camel(script[len("script-"):]) if script else "None"
        fields += [f".merge = Merge::{merge}", f".local = LocalHandler::{local}",
                   f".stateful = StatefulKind::{stateful}",
                   f".verb = StatefulVerb::{stateful_verb}",
                   f".timeout = TimeoutReply::{timeout_reply}",
                   f".script = ScriptArg::{script_arg}"]
        for option, (field, enum, _, _) in FEATURE_COLUMNS.items():
            fields.append(f".{field} = {enum}::{camel(features.get(option, 'none'))}")
        text = reason.replace("\\", "\\\\").replace('"', '\\"')
        fields.append(f'.reason = "{text}"')
        fields.append(f".subcommands = {ident(name)}Subcommands" if raw[9] else ".subcommands = {}")
        return "    {" + ", ".join(fields) + "},"

    for name in sorted(commands):
        specs = commands[name][8]
        if specs:
            out.append(f"constexpr KeySpec {ident(name)}Keys[] = {{")
            for spec in specs:
                out.append(f"    {key_spec(spec)},")
            out.append("};")
    out.append("")
    top = sorted(n for n in commands if "|" not in n)
    for name in top:
        subs = sorted(as_str(s[0]) for s in commands[name][9])
        if subs:
            out.append(f"constexpr CommandSpec {ident(name)}Subcommands[] = {{")
            out.extend(spec_entry(sub) for sub in subs)
            out.append("};")
    out.append("")
    out.append("constexpr CommandSpec kCommands[] = {")
    out.extend(spec_entry(name) for name in top)
    out.append("};")
    out.append("")
    out.append("}  // namespace")
    out.append("")
    out.append("std::span<const CommandSpec> generated_commands() { return kCommands; }")
    out.append(f'std::string_view generated_from_version() {{ return "{version}"; }}')
    out.append(f"std::size_t generated_command_ids() {{ return {len(ids)}; }}")
    out.append("")
    out.append("}  // namespace santral::protocol")
    with open(OUTPUT, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {OUTPUT}: {len(top)} commands, {len(commands) - len(top)} subcommands, redis {version}")


if __name__ == "__main__":
    main()

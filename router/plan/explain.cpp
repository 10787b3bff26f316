// SANTRAL EXPLAIN <command> [args ...]: how Santral would route a command, without running it,
// in the spirit of MongoDB's explain (SINGLE_SHARD vs SHARD_MERGE).
#include <strings.h>
#include <algorithm>

#include <fmt/format.h>

#include "config/shard_map.h"
#include "protocol/command_table.h"
#include "protocol/key_extraction.h"
#include "protocol/resp_writer.h"
#include "router/session/client_session.h"
#include "router/commands/santral_commands.h"
#include "router/process/worker.h"

namespace santral::router {

using protocol::Routing;
using protocol::StatefulKind;

namespace {

constexpr std::string_view kRoutingNames[] = {
    "keyed", "split", "broadcast", "any", "channel", "local", "stateful", "refused", "container"};

struct Explanation {
  std::string command;
  std::string rule;
  std::string kind;
  std::vector<std::size_t> shards;  // in the order the request would use them
  std::vector<config::Placement> keys;
  std::vector<std::string> key_texts;
  std::string note;
};

void add_shard(Explanation& e, std::size_t shard) {
  if (std::find(e.shards.begin(), e.shards.end(), shard) == e.shards.end())
    e.shards.push_back(shard);
}

void place_key(Explanation& e, const config::ShardMap& map, std::string_view key) {
  e.keys.push_back(map.place(key));
  e.key_texts.emplace_back(key);
  add_shard(e, e.keys.back().shard);
}

void place_keys(Explanation& e, const config::ShardMap& map, std::span<const std::string_view> args,
                const std::vector<std::uint32_t>& positions) {
  for (auto p : positions) place_key(e, map, args[p]);
}

bool block_option(std::span<const std::string_view> args) {
  for (auto arg : args)
    if (arg.size() == 5 && ::strncasecmp(arg.data(), "BLOCK", 5) == 0) return true;
  return false;
}

Explanation explain(const Routed& outer, std::span<const std::string_view> args) {
  auto& session = outer.session;
  const auto& map = session.worker().shard_map();
  Explanation e;
  const protocol::CommandSpec* spec = protocol::find_command(args[0]);
  if (spec == nullptr) {
    e.command = std::string(args[0]);
    e.kind = "UNKNOWN_COMMAND";
    e.note = "Redis 7.0 has no such command; Santral answers it with an error";
    return e;
  }
  if (!spec->subcommands.empty() && args.size() >= 2)
    if (const auto* sub = protocol::find_subcommand(*spec, args[1])) spec = sub;
  e.command = std::string(spec->name);
  e.rule = std::string(kRoutingNames[static_cast<std::size_t>(spec->routing)]);
  if (!spec->arity_ok(args.size())) {
    e.kind = "WRONG_ARITY";
    e.note = "wrong number of arguments: Santral answers with an error";
    return e;
  }
  protocol::Request request{args, {}, false};
  Routed routed{session, request, *spec};
  std::vector<std::uint32_t> positions;
  bool keys_found = protocol::find_keys(*spec, args, positions);
  switch (spec->routing) {
    case Routing::Keyed:
    case Routing::Split:
      if (!keys_found) {
        e.kind = "NO_KEYS_FOUND";
        e.note = "the keys cannot be found in these arguments; Santral answers with an error";
        return e;
      }
      place_keys(e, map, args, positions);
      if (positions.empty()) {
        add_shard(e, 0);
        e.note = "no key in this call: the first shard";
      }
      if (e.shards.size() == 1) {
        e.kind = "SINGLE_SHARD";
        if (spec->has(protocol::kBlocking) && block_option(args))
          e.note = "blocks: runs on a connection lent to the client for the call";
      } else if (spec->routing == Routing::Split) {
        e.kind = "SHARD_SPLIT";
        e.note = fmt::format("one {} per shard with that shard's keys, replies merged", e.command);
      } else {
        e.kind = "CROSSSLOT";
        e.note = "keys on several shards: refused; give them one hash tag to keep them together";
      }
      return e;
    case Routing::Broadcast:
      e.kind = "SHARD_MERGE";
      e.shards = broadcast_targets(routed);
      e.note = spec->merge == protocol::Merge::Scan
                   ? "one shard per call, in turn; the cursor says which"
                   : "sent to these shards, replies merged";
      return e;
    case Routing::Any:
      e.kind = "ANY_SHARD";
      add_shard(e, any_shard(routed));
      e.note = "every shard gives the same answer; one that is up is asked";
      return e;
    case Routing::Channel:
      e.kind = "SINGLE_SHARD";
      place_key(e, map, args[1]);
      e.note = "routed by the channel name";
      return e;
    case Routing::Local:
      e.kind = "LOCAL";
      e.note = "answered by Santral itself";
      return e;
    case Routing::Refused:
      e.kind = "REFUSED";
      e.note = std::string(spec->reason);
      return e;
    case Routing::Stateful:
      break;
    case Routing::Container:
      e.kind = "WRONG_ARITY";
      return e;
  }
  switch (spec->stateful) {
    case StatefulKind::Transaction:
      e.kind = "TRANSACTION";
      if (keys_found) place_keys(e, map, args, positions);
      e.note = "the transaction runs on one shard, on a connection lent for its life";
      break;
    case StatefulKind::Blocking:
      if (spec->key_specs.empty()) {
        e.kind = "SHARD_MERGE";
        for (std::size_t s = 0; s < map.shard_count(); ++s) add_shard(e, s);
        e.note = "after the client's earlier replies, on every shard; the smallest count";
      } else {
        e.kind = keys_found ? "SINGLE_SHARD" : "NO_KEYS_FOUND";
        if (keys_found) place_keys(e, map, args, positions);
        if (e.shards.size() > 1) e.kind = "CROSSSLOT";
        e.note = "blocks: runs on a connection lent to the client for the call";
      }
      break;
    case StatefulKind::Subscribe: {
      e.kind = "PUBSUB";
      bool patterns = e.command == "psubscribe" || e.command == "punsubscribe";
      if (patterns) {
        for (std::size_t s = 0; s < map.shard_count(); ++s) add_shard(e, s);
      } else {
        for (std::size_t i = 1; i < args.size(); ++i) place_key(e, map, args[i]);
      }
      e.note = patterns ? "patterns listen on every shard"
                        : "each channel on the shard that owns its name";
      break;
    }
    case StatefulKind::None:
      break;
  }
  return e;
}

}  // namespace

void santral_explain(const Routed& routed) {
  auto args = routed.request.args.subspan(2);
  Explanation e = explain(routed, args);
  const auto& map = routed.session.worker().shard_map();
  std::string out;
  protocol::RespWriter w(out, routed.session.state().protocol);
  w.map_header(6);
  w.bulk("command");
  w.bulk(e.command);
  w.bulk("rule");
  w.bulk(e.rule);
  w.bulk("kind");
  w.bulk(e.kind);
  w.bulk("shards");
  w.array_header(e.shards.size());
  for (auto s : e.shards) w.bulk(map.shard(s).name);
  w.bulk("keys");
  w.array_header(e.keys.size());
  for (std::size_t i = 0; i < e.keys.size(); ++i) {
    const auto& p = e.keys[i];
    w.map_header(6);
    w.bulk("key");
    w.bulk(e.key_texts[i]);
    w.bulk("namespace");
    w.bulk(p.namespace_name.empty() ? std::string_view("(default)") : p.namespace_name);
    w.bulk("strategy");
    w.bulk(p.strategy);
    w.bulk("shard_key");
    w.bulk(p.shard_key);
    w.bulk("detail");
    w.bulk(p.detail);
    w.bulk("shard");
    w.bulk(map.shard(p.shard).name);
  }
  w.bulk("note");
  w.bulk(e.note);
  routed.session.reply(out);
}

}  // namespace santral::router

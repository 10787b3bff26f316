// SANTRAL EXPLAIN <command> [args ...]: the plan Santral would carry out for a command, without
// running it, in the spirit of MongoDB's explain (SINGLE_SHARD vs SHARD_MERGE). The plan is
// the one dispatch builds (router/plan/planner.h), so EXPLAIN cannot drift from what happens.
#include <algorithm>

#include <fmt/format.h>

#include "placement/shard_map.h"
#include "protocol/command_table.h"
#include "protocol/resp_writer.h"
#include "router/commands/santral_commands.h"
#include "router/hotkeys/salting/salted_layout.h"
#include "router/hotkeys/salting/salted_route.h"
#include "router/merge/gathered/gather_rules.h"
#include "router/plan/planner.h"
#include "router/routes/subscriptions.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::Routing;

namespace {

constexpr std::string_view kRoutingNames[] = {
    "keyed", "split", "broadcast", "any", "channel", "local", "stateful", "refused", "container"};

// What EXPLAIN says of a plan: MongoDB-style kind, the shards in the order the request would
// use them, and a note.
struct Explanation {
  std::string kind;
  std::vector<std::size_t> shards;
  std::string note;
  // A plan of several steps (a cross-shard read): what each shard is sent, and what the
  // router does with the replies, in order.
  std::vector<std::string> steps;
};

void add_shard(Explanation& e, std::size_t shard) {
  if (std::find(e.shards.begin(), e.shards.end(), shard) == e.shards.end())
    e.shards.push_back(shard);
}

void add_key_shards(Explanation& e, const Plan& plan) {
  for (const auto& key : plan.keys) {
    if (key.salted == nullptr) {
      add_shard(e, key.owner.shard);
      continue;
    }
    for (std::size_t shard : key.salted->shards) add_shard(e, shard);
  }
}

void add_every_shard(Explanation& e, const placement::ShardMap& map) {
  for (std::size_t s = 0; s < map.shard_count(); ++s) add_shard(e, s);
}

Explanation explain_error(const Plan& plan) {
  switch (plan.error_code) {
    case ClientError::UnknownCommand:
      return {"UNKNOWN_COMMAND",
              {},
              "neither Santral's table (Redis 7.0), every shard's COMMAND INFO nor commands: in "
              "the config has such a command; Santral answers it with an error",
              {}};
    case ClientError::UnknownSubcommand:
      return {"UNKNOWN_SUBCOMMAND", {}, "no such subcommand; Santral answers it with an error", {}};
    case ClientError::WrongArity:
      return {"WRONG_ARITY", {}, "wrong number of arguments: Santral answers with an error", {}};
    case ClientError::NoKeysFound:
      return {"NO_KEYS_FOUND",
              {},
              "the keys cannot be found in these arguments; Santral answers with an error",
              {}};
    case ClientError::CrossShard:
      return {"CROSSSLOT",
              {},
              "keys on several shards: refused; give them one hash tag to keep them together",
              {}};
    case ClientError::SaltedCommand:
      return {"REFUSED", {}, plan.error, {}};
    default:
      return {"ERROR", {}, plan.error, {}};
  }
}

// The fetches of a gathered read, one line per shard, then what the router computes.
void explain_gathered(Explanation& e, const placement::ShardMap& map,
                      const protocol::Request& request, const Plan& plan,
                      std::size_t max_merge_bytes) {
  const GatherRule& rule = *gather_rule(*plan.spec);
  e.kind = "SHARD_GATHER";
  add_key_shards(e, plan);
  for (std::size_t shard : e.shards) {
    std::string line = fmt::format("read on shard '{}':", map.shard(shard).name);
    for (const auto& key : plan.keys) {
      if (key.owner.shard != shard) continue;
      for (const FetchCommand& fetch : rule.fetch)
        fmt::format_to(std::back_inserter(line), " {};",
                       fetch_text(fetch, request.args[key.position]));
    }
    line.pop_back();
    e.steps.push_back(std::move(line));
  }
  e.steps.push_back(
      fmt::format("compute at the router: {} {}", upper_name(*plan.spec), rule.computes));
  e.note = fmt::format(
      "keys on several shards: each key is read from its shard and the answer computed at the "
      "router as Redis would; refused if the replies exceed limits.max_merge_bytes ({} bytes)",
      max_merge_bytes);
}

// A cross-shard write's stages: what is read, written and deleted where.
void explain_staged_write(Explanation& e, const placement::ShardMap& map,
                          const protocol::Request& request, const Plan& plan) {
  const WriteRule& rule = *cross_shard_write_rule(*plan.spec);
  e.kind = "STAGED_WRITE";
  add_key_shards(e, plan);
  auto key = [&](std::size_t i) { return request.args[plan.keys[i].position]; };
  auto shard = [&](std::size_t i) { return map.shard(plan.keys[i].owner.shard).name; };
  switch (rule.kind) {
    case StagedWriteKind::Store: {
      const GatherRule& read = stored_read(rule);
      for (std::size_t i = 1; i < plan.keys.size(); ++i) {
        std::string line = fmt::format("read on shard '{}':", shard(i));
        for (const FetchCommand& fetch : read.fetch)
          fmt::format_to(std::back_inserter(line), " {};", fetch_text(fetch, key(i)));
        line.pop_back();
        e.steps.push_back(std::move(line));
      }
      e.steps.push_back(fmt::format("compute at the router: {}", read.computes));
      e.steps.push_back(fmt::format(
          "write on shard '{}': MULTI, DEL {}, {} {} <result>, EXEC (DEL {} alone when empty)",
          shard(0), key(0), read.algorithm >= GatherAlgorithm::ZUnion ? "ZADD" : "SADD", key(0),
          key(0)));
      break;
    }
    case StagedWriteKind::SetMove:
      e.steps = {fmt::format("read on shards '{}', '{}': TYPE {}; TYPE {}", shard(0), shard(1),
                             key(0), key(1)),
                 fmt::format("delete on shard '{}': SREM {} <member>", shard(0), key(0)),
                 fmt::format("write on shard '{}': SADD {} <member>", shard(1), key(1))};
      break;
    case StagedWriteKind::ListMove:
      e.steps = {fmt::format("read on shards '{}', '{}': TYPE {}; TYPE {}", shard(0), shard(1),
                             key(0), key(1)),
                 fmt::format("delete on shard '{}': pop from {}", shard(0), key(0)),
                 fmt::format("write on shard '{}': push to {}", shard(1), key(1))};
      break;
    case StagedWriteKind::Rename:
    case StagedWriteKind::Copy:
      e.steps = {fmt::format("read on shards '{}', '{}': DUMP {}; PEXPIRETIME {}; EXISTS {}",
                             shard(0), shard(1), key(0), key(0), key(1)),
                 fmt::format("write on shard '{}': RESTORE {} <expiry> <payload> [REPLACE] ABSTTL",
                             shard(1), key(1))};
      if (rule.kind == StagedWriteKind::Rename)
        e.steps.push_back(fmt::format("delete on shard '{}': DEL {}", shard(0), key(0)));
      break;
  }
  e.note =
      "keys on several shards, cross_shard_writes: allow: run as these steps one after the "
      "other, not atomically; the client's later requests wait for it";
}

Explanation explain(RequestContext& client, const protocol::Request& request, const Plan& plan) {
  const auto& map = client.worker().shard_map();
  const auto& spec = *plan.spec;
  Explanation e;
  switch (plan.kind) {
    case RouteKind::Answered:
      e = explain_error(plan);
      add_key_shards(e, plan);
      if (plan.error_code == ClientError::CrossShard && cross_shard_write_rule(spec) != nullptr)
        e.note +=
            "; cross_shard_writes is refuse (set it to allow to run it as a read, a write "
            "and a delete, not atomically)";
      return e;
    case RouteKind::SingleShard:
      e.kind = "SINGLE_SHARD";
      add_shard(e, *plan.shard);
      if (spec.routing == Routing::Channel)
        e.note = "routed by the channel name";
      else if (plan.keys.empty())
        e.note = "no key in this call: the first shard";
      return e;
    case RouteKind::NearCache:
      e.kind = "SINGLE_SHARD";
      add_shard(e, *plan.shard);
      e.note =
          "near-cached: while the key is hot this worker answers it from memory (kept coherent "
          "by Redis client-side caching); otherwise, or before it is cached, the shard answers";
      return e;
    case RouteKind::Split:
      e.kind = "SHARD_SPLIT";
      add_key_shards(e, plan);
      e.note = fmt::format("one {} per shard with that shard's keys, replies merged", spec.name);
      return e;
    case RouteKind::Broadcast:
      e.kind = "SHARD_MERGE";
      e.shards = plan.shards;
      e.note = spec.merge == protocol::Merge::Scan
                   ? "one shard per call, in turn; the cursor says which"
                   : "sent to these shards, replies merged";
      return e;
    case RouteKind::AnyShard:
      e.kind = "ANY_SHARD";
      add_shard(e, any_shard(client));
      e.note = "every shard gives the same answer; one that is up is asked";
      return e;
    case RouteKind::Blocking:
      if (spec.verb == protocol::StatefulVerb::Wait) {
        e.kind = "SHARD_MERGE";
        add_every_shard(e, map);
        e.note = "after the client's earlier replies, on every shard; the smallest count";
        return e;
      }
      if (plan.has_error()) {
        e = explain_error(plan);
        add_key_shards(e, plan);
        return e;
      }
      e.kind = "SINGLE_SHARD";
      add_shard(e, *plan.shard);
      e.note = "blocks: runs on a connection lent to the client for the call";
      return e;
    case RouteKind::Transaction:
      e.kind = "TRANSACTION";
      add_key_shards(e, plan);
      e.note = "the transaction runs on one shard, on a connection lent for its life";
      return e;
    case RouteKind::Queued:
      e.kind = "QUEUED";
      add_key_shards(e, plan);
      e.note = plan.has_error() ? plan.error : "queued on the transaction's shard";
      return e;
    case RouteKind::Subscription: {
      e.kind = "PUBSUB";
      bool patterns = spec.verb == protocol::StatefulVerb::PatternSubscribe ||
                      spec.verb == protocol::StatefulVerb::PatternUnsubscribe;
      if (patterns) {
        add_every_shard(e, map);
      } else {
        bool sharded = spec.verb == protocol::StatefulVerb::ShardSubscribe ||
                       spec.verb == protocol::StatefulVerb::ShardUnsubscribe;
        for (std::size_t i = 1; i < request.args.size(); ++i)
          for (std::size_t shard : channel_shards(map, request.args[i], sharded))
            add_shard(e, shard);
      }
      e.note = patterns ? "patterns listen on every shard"
                        : "each channel on the shard that owns its name; a key's notifications "
                          "(__keyspace@N__:key) on the key's shard, key events on every shard";
      return e;
    }
    case RouteKind::Salted:
      e.kind = "SALTED";
      add_key_shards(e, plan);
      e.note = fmt::format("{} on a salted counter: {}", upper_name(spec), salted_effect(spec));
      return e;
    case RouteKind::Gathered:
      explain_gathered(e, map, request, plan, client.worker().config().limits.max_merge_bytes);
      return e;
    case RouteKind::StagedWrite:
      explain_staged_write(e, map, request, plan);
      return e;
    case RouteKind::Local:
      e.kind = "LOCAL";
      e.note = "answered by Santral itself";
      return e;
    case RouteKind::Refused:
      e.kind = "REFUSED";
      e.note = std::string(spec.reason);
      return e;
  }
  return e;
}

// The connection the request takes to each shard (Plan::connection).
std::string connection_text(const Plan& plan, const config::Config& config) {
  switch (plan.connection) {
    case ConnectionKind::ReadFrom:
      return fmt::format("read_from: {}",
                         config::read_from_name(plan.read_from.value_or(config.read_from)));
    case ConnectionKind::TrackingLane:
      return "tracking lane (CLIENT TRACKING)";
    case ConnectionKind::Primary:
      break;
  }
  return "primary";
}

// A key whose owner a move changes says where it is pulled from (the plan's `moving_from`).
void write_key(protocol::RespWriter& w, const placement::ShardMap& map, std::string_view key,
               const PlannedKey& planned, bool near_cached) {
  placement::Placement p = map.place(key);
  const SaltedCounter* salted = planned.salted;
  const auto& source = planned.moving_from;
  w.map_header(6 + (salted != nullptr ? 2 : 0) + (near_cached ? 1 : 0) + (source ? 1 : 0));
  w.bulk("key");
  w.bulk(key);
  w.bulk("namespace");
  w.bulk(p.namespace_name.empty() ? std::string_view("(default)") : p.namespace_name);
  w.bulk("strategy");
  w.bulk(p.strategy);
  w.bulk("shard_key");
  w.bulk(p.shard_key);
  w.bulk("detail");
  w.bulk(p.detail);
  w.bulk("shard");
  w.bulk(map.shard(planned.owner.shard).name);
  if (source) {
    // A move is under way: the key is pulled from its old owner first, if it is still there.
    w.bulk("moving_from");
    w.bulk(map.shard(*source).name);
  }
  if (salted != nullptr) {
    w.bulk("salts");
    w.integer(salted->salts);
    w.bulk("sub_keys");
    w.array_header(salted->sub_keys.size());
    for (std::size_t k = 0; k < salted->sub_keys.size(); ++k)
      w.bulk(fmt::format("{} -> {}", salted->sub_keys[k], map.shard(salted->shards[k]).name));
  }
  if (near_cached) {
    w.bulk("near_cache");
    w.bulk("yes");
  }
}

// Where a command missing from the built-in table was learned, and what its shards say it does.
std::string learned_note(const protocol::LearnedCommands& learned,
                         const protocol::CommandSpec& spec) {
  std::string note = spec.origin == protocol::CommandOrigin::Config
                         ? "declared under commands: in the config"
                         : "learned from every shard's COMMAND INFO";
  if (auto summary = learned.summary(spec); !summary.empty()) note += fmt::format(" ({})", summary);
  return note;
}

}  // namespace

void santral_explain(const Routed& routed) {
  auto& client = routed.client;
  auto& worker = client.worker();
  const auto& topology = worker.topology();
  const auto& map = *topology.map;
  protocol::Request request{routed.request.args.subspan(2), {}, false};
  // As if sent outside MULTI and subscriptions, by this client.
  Plan plan;
  build_plan(PlanContext{map,
                         &worker.salts(),
                         client.state(),
                         false,
                         false,
                         topology.config->backend.database,
                         topology.config->cross_shard_writes,
                         nullptr,
                         topology.move.get(),
                         topology.version,
                         &worker.learned(),
                         topology.config->cluster_endpoint,
                         {},
                         worker.write_refusals()},
             request, plan);
  Explanation e = plan.spec == nullptr ? explain_error(plan) : explain(client, request, plan);
  if (plan.spec != nullptr && plan.spec->origin != protocol::CommandOrigin::BuiltIn)
    e.note += (e.note.empty() ? "" : "; ") + learned_note(worker.learned(), *plan.spec);
  std::string out;
  protocol::RespWriter w(out, client.state().protocol);
  w.map_header(e.steps.empty() ? 8 : 9);
  w.bulk("command");
  if (plan.spec == nullptr) {
    w.bulk(request.args[0]);
    w.bulk("rule");
    w.bulk("");
  } else {
    w.bulk(plan.spec->name);
    w.bulk("rule");
    w.bulk(kRoutingNames[static_cast<std::size_t>(plan.spec->routing)]);
  }
  w.bulk("kind");
  w.bulk(e.kind);
  w.bulk("route");
  w.bulk(route_kind_name(plan.kind));
  w.bulk("shards");
  w.array_header(e.shards.size());
  for (auto s : e.shards) w.bulk(map.shard(s).name);
  w.bulk("connection");
  w.bulk(connection_text(plan, *topology.config));
  w.bulk("keys");
  w.array_header(plan.keys.size());
  for (const auto& key : plan.keys)
    write_key(w, map, request.args[key.position], key, plan.near_cached);
  if (!e.steps.empty()) {
    w.bulk("steps");
    w.array_header(e.steps.size());
    for (const auto& step : e.steps) w.bulk(step);
  }
  w.bulk("note");
  w.bulk(e.note);
  client.reply(out);
}

}  // namespace santral::router

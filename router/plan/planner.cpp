#include "router/plan/planner.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "protocol/arguments.h"
#include "protocol/command_table.h"
#include "protocol/errors.h"
#include "protocol/key_extraction.h"
#include "router/acl/access_check.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/merge/gathered/gather_rules.h"

namespace santral::router {

using protocol::ClientError;
using protocol::CommandSpec;
using protocol::error_message;
using protocol::LocalHandler;
using protocol::Routing;
using protocol::StatefulKind;

namespace {

// Redis's words for an unknown command: "unknown command 'x', with args beginning with: 'a' 'b' "
void fail_unknown_command(const protocol::Request& request, Plan& plan) {
  std::string args;
  for (std::size_t i = 1; i < request.args.size() && args.size() < 128; ++i)
    fmt::format_to(std::back_inserter(args), "'{}' ", request.args[i].substr(0, 128));
  plan.fail(ClientError::UnknownCommand, std::string(request.name().substr(0, 128)), args);
}

// Commands a client may send before AUTH, as in Redis (CMD_NO_AUTH).
bool allowed_before_auth(const CommandSpec& spec) {
  return spec.local == LocalHandler::Auth || spec.local == LocalHandler::Hello ||
         spec.local == LocalHandler::Quit || spec.local == LocalHandler::Reset;
}

// What a RESP2 client may send while subscribed, as in Redis.
bool allowed_while_subscribed(const CommandSpec& spec) {
  return spec.stateful == StatefulKind::Subscribe || spec.local == LocalHandler::Ping ||
         spec.local == LocalHandler::Quit || spec.local == LocalHandler::Reset;
}

const CommandSpec* get_command() {
  static const CommandSpec* const get = protocol::find_command("get");
  return get;
}

// The command and its subcommand, from the built-in table or else the learned one; nullptr
// after setting the error.
const CommandSpec* find_spec(const PlanContext& context, const protocol::Request& request,
                             Plan& plan) {
  const CommandSpec* spec = protocol::find_command(request.name());
  if (spec == nullptr && context.learned != nullptr) spec = context.learned->find(request.name());
  if (spec == nullptr) {
    fail_unknown_command(request, plan);
    return nullptr;
  }
  // A container needs a subcommand; COMMAND also runs without one.
  if (spec->routing == Routing::Container && request.args.size() < 2) {
    plan.fail(ClientError::WrongArity, spec->name);
    return nullptr;
  }
  if (!spec->subcommands.empty() && request.args.size() >= 2) {
    const CommandSpec* sub = protocol::find_subcommand(*spec, request.args[1]);
    if (sub == nullptr && context.learned != nullptr)
      sub = context.learned->find_subcommand(*spec, request.args[1]);
    if (sub == nullptr) {
      plan.fail(ClientError::UnknownSubcommand, std::string(request.args[1].substr(0, 128)),
                upper_name(*spec));
      return nullptr;
    }
    spec = sub;
  }
  return spec;
}

// The user's ACL rules, checked after authentication as Redis's ACLCheckAllPerm.
void fail_access(const config::Permissions& user, const protocol::Request& request, Plan& plan) {
  switch (check_access(user, *plan.spec, request.args).denial) {
    case AccessDenial::None:
      return;
    case AccessDenial::Command:
      return plan.fail(ClientError::NoPermCommand, plan.spec->name);
    case AccessDenial::Key:
      return plan.fail(ClientError::NoPermKey);
    case AccessDenial::Channel:
      return plan.fail(ClientError::NoPermChannel);
  }
}

// The checks Redis makes before running anything; false after setting the error.
bool admitted(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  const CommandSpec& spec = *plan.spec;
  if (!spec.arity_ok(request.args.size())) {
    plan.fail(ClientError::WrongArity, spec.name);
  } else if (!context.client.authenticated && !allowed_before_auth(spec)) {
    plan.fail(ClientError::NoAuth);
  } else if (context.permissions != nullptr) {
    fail_access(*context.permissions, request, plan);
  }
  if (plan.has_error()) return false;
  if (context.client.protocol == 2 && context.subscribed && !allowed_while_subscribed(spec)) {
    plan.fail(ClientError::SubscribedMode, spec.name);
  } else if (context.client.monitoring &&
             (spec.has(protocol::kReadonly) || spec.has(protocol::kWrite))) {
    plan.fail(ClientError::MonitorKeyspace);
  }
  return !plan.has_error();
}

// Finds the keys once and resolves each one's owner and salting; sets `shard` when they all
// live on one.
void place_keys(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  const CommandSpec& spec = *plan.spec;
  auto& positions = plan.positions;
  if (spec.routing == Routing::Channel) {
    positions.push_back(1);  // PUBLISH-like: the channel name is placed as a key
  } else if (!spec.key_specs.empty() && !protocol::find_keys(spec, request.args, positions)) {
    plan.keys_found = false;
    return;
  }
  bool salting = context.salts != nullptr && !context.salts->empty() && !spec.key_specs.empty();
  bool one_shard = true;
  for (std::uint32_t position : positions) {
    std::string_view key = request.args[position];
    PlannedKey planned{position, context.map.owner(key), nullptr, std::nullopt};
    if (salting) planned.salted = context.salts->find(key);
    if (context.move != nullptr) planned.moving_from = context.move->source_of(key, planned.owner);
    one_shard = one_shard && (plan.keys.empty() || planned.owner.shard == plan.keys[0].owner.shard);
    plan.keys.push_back(planned);
  }
  if (plan.keys.empty()) {
    if (!spec.key_specs.empty()) plan.shard = 0;  // EVAL with numkeys 0: the first shard
  } else if (one_shard) {
    plan.shard = plan.keys[0].owner.shard;
  }
  // A namespace's read_from applies to its single-key reads (not to MGET's split keys).
  if (!plan.keys.empty() && spec.has(protocol::kReadonly) && spec.routing != Routing::Split &&
      spec.routing != Routing::Channel)
    plan.read_from = context.map.read_from_of(plan.keys[0].owner.ns);
  // And its write_concern to its single-key writes (a split's fragments, transactions and
  // scripts take the config's).
  if (!plan.keys.empty() && spec.has(protocol::kWrite) && spec.routing != Routing::Split)
    plan.write_concern = context.map.write_concern_of(plan.keys[0].owner.ns);
}

// Why the keys cannot run together on one shard, in the words of the error table.
void fail_cross_shard(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  if (!plan.keys_found) return plan.fail(ClientError::NoKeysFound, plan.spec->name);
  const auto& first = plan.keys[0];
  for (const auto& other : plan.keys) {
    if (other.owner.shard == first.owner.shard) continue;
    return plan.fail(ClientError::CrossShard,
                     fmt::format("'{}' is on shard '{}', '{}' on shard '{}'",
                                 request.args[first.position].substr(0, 64),
                                 context.map.shard(first.owner.shard).name,
                                 request.args[other.position].substr(0, 64),
                                 context.map.shard(other.owner.shard).name));
  }
}

// The glob of KEYS <pattern> and SCAN ... MATCH <pattern>: it may rule shards out.
std::optional<std::string_view> match_pattern(const CommandSpec& spec,
                                              std::span<const std::string_view> args) {
  static const CommandSpec* const keys = protocol::find_command("keys");
  if (&spec == keys) return args[1];
  if (spec.merge != protocol::Merge::Scan) return std::nullopt;
  for (std::size_t i = 2; i + 1 < args.size(); ++i)
    if (protocol::equals_nocase(args[i], "MATCH")) return args[i + 1];
  return std::nullopt;
}

void plan_broadcast(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  plan.kind = RouteKind::Broadcast;
  if (auto glob = match_pattern(*plan.spec, request.args)) {
    plan.shards = context.map.shards_for_pattern(*glob);
    return;
  }
  plan.shards.resize(context.map.shard_count());
  for (std::size_t s = 0; s < plan.shards.size(); ++s) plan.shards[s] = s;
}

// Inside MULTI: the shard the command is queued on, or why it cannot be.
// Its keys follow a numkeys argument (EVAL, FCALL, SINTERCARD, LMPOP, ZUNION, ...).
bool counts_its_keys(const CommandSpec& spec) {
  return std::any_of(spec.key_specs.begin(), spec.key_specs.end(), [](const protocol::KeySpec& k) {
    return k.find == protocol::KeySpec::Find::Keynum;
  });
}

void plan_queued(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  const CommandSpec& spec = *plan.spec;
  plan.kind = RouteKind::Queued;
  if (spec.has(protocol::kNoMulti)) {  // SAVE, SHUTDOWN, ...: Redis refuses them there
    plan.fail(ClientError::NotAllowedInMulti);
    return;
  }
  // Answered by Santral outside a transaction, by the shard inside one (in EXEC's reply).
  if (spec.local == LocalHandler::Ping || spec.local == LocalHandler::Echo) {
    plan.any_shard = true;
    return;
  }
  if (const PlannedKey* salted = plan.salted_key()) {
    plan.fail(ClientError::SaltedInTransaction, request.args[salted->position]);
    return;
  }
  bool keyed = spec.routing == Routing::Keyed || spec.routing == Routing::Split ||
               spec.routing == Routing::Channel ||
               // inside MULTI a blocking command does not block
               (spec.stateful == StatefulKind::Blocking && !spec.key_specs.empty());
  if (keyed) {
    if (!plan.shard) fail_cross_shard(context, request, plan);
    return;
  }
  if (spec.routing == Routing::Any) {
    plan.any_shard = true;  // asks the same of every shard: the transaction's shard will do
    return;
  }
  // FLUSHDB, FLUSHALL, SCRIPT FLUSH...: OK from every shard. A transaction of keyless commands
  // may hold them; it then runs on every shard (router/routes/transaction.h).
  if (spec.routing == Routing::Broadcast && spec.merge == protocol::Merge::AllOk) {
    plan.shards.resize(context.map.shard_count());
    for (std::size_t s = 0; s < plan.shards.size(); ++s) plan.shards[s] = s;
    plan.every_shard = true;
    return;
  }
  plan.fail(ClientError::NotInTransaction, upper_name(spec), "it does not run on a single shard");
}

// A request naming a salted counter: spread or gathered when the salting supports the
// command, refused otherwise.
void plan_salted(const protocol::Request& request, Plan& plan, const PlannedKey& salted) {
  if (plan.spec->salted != protocol::SaltedOperation::None) {
    plan.kind = RouteKind::Salted;
    return;
  }
  std::string_view key = request.args[salted.position];
  plan.kind = RouteKind::Answered;
  plan.fail(ClientError::SaltedCommand, key, salted.salted->salts, upper_name(*plan.spec), key);
}

// A command that must run on one shard: there, or the reason it cannot. A read Santral can
// merge (router/merge/gathered/gather_rules.h) is gathered from its keys' shards instead.
void plan_one_shard(const PlanContext& context, const protocol::Request& request, Plan& plan,
                    RouteKind kind) {
  plan.kind = kind;
  bool across =
      !plan.shard && kind == RouteKind::SingleShard && plan.keys_found && !plan.keys.empty();
  if (across && gather_rule(*plan.spec) != nullptr) {
    plan.kind = RouteKind::Gathered;
    return;
  }
  if (across && context.cross_shard_writes && cross_shard_write_rule(*plan.spec) != nullptr) {
    plan.kind = RouteKind::StagedWrite;
    return;
  }
  if (!plan.shard) {
    plan.kind = kind == RouteKind::SingleShard ? RouteKind::Answered : kind;
    fail_cross_shard(context, request, plan);
  }
}

void plan_keyed(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  const CommandSpec& spec = *plan.spec;
  // XREAD and XREADGROUP block only when given BLOCK; without it they are plain reads.
  if (spec.has(protocol::kBlocking) && protocol::has_option(request.args, "BLOCK")) {
    plan.blocks = true;
    return plan_one_shard(context, request, plan, RouteKind::Blocking);
  }
  plan_one_shard(context, request, plan, RouteKind::SingleShard);
  // Only the clients' default database is cached; a client that caches itself reads through
  // its tracking lane.
  if (plan.kind == RouteKind::SingleShard && &spec == get_command() && request.args.size() == 2 &&
      !context.client.tracking.on && context.client.database == context.default_database &&
      context.map.near_cached(plan.keys[0].owner.ns)) {
    plan.near_cached = true;
    plan.kind = RouteKind::NearCache;
  }
}

void plan_split(Plan& plan) {
  if (!plan.keys_found || plan.keys.empty()) {
    plan.fail(ClientError::NoKeysFound, plan.spec->name);
    return;
  }
  // Most calls have every key on one shard: then the request goes there untouched.
  if (plan.shard) {
    plan.kind = RouteKind::SingleShard;
    return;
  }
  plan.kind = RouteKind::Split;
  for (auto& key : plan.keys) {
    auto found = std::find(plan.shards.begin(), plan.shards.end(), key.owner.shard);
    key.fragment = static_cast<std::uint32_t>(found - plan.shards.begin());
    if (found == plan.shards.end()) plan.shards.push_back(key.owner.shard);
  }
}

void plan_stateful(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  const CommandSpec& spec = *plan.spec;
  switch (spec.stateful) {
    case StatefulKind::Transaction:
      plan.kind = RouteKind::Transaction;
      // WATCH pins the transaction's shard: its keys must share one.
      if (!spec.key_specs.empty() && !plan.shard) fail_cross_shard(context, request, plan);
      return;
    case StatefulKind::Blocking:
      plan.blocks = true;
      if (spec.verb == protocol::StatefulVerb::Wait) {  // every shard
        plan.kind = RouteKind::Blocking;
        return;
      }
      return plan_one_shard(context, request, plan, RouteKind::Blocking);
    case StatefulKind::Subscribe:
      plan.kind = RouteKind::Subscription;
      return;
    case StatefulKind::None:
      break;
  }
}

// The kinds of plan whose keys are stored keys on a shard: those a move must pull first.
bool touches_stored_keys(const Plan& plan) {
  switch (plan.kind) {
    case RouteKind::SingleShard:
    case RouteKind::Split:
    case RouteKind::Blocking:
    case RouteKind::Transaction:
    case RouteKind::Queued:
    case RouteKind::Salted:
    case RouteKind::NearCache:
    case RouteKind::Gathered:
    case RouteKind::StagedWrite:
      return plan.spec != nullptr && !plan.spec->has(protocol::kPubsub) && !plan.has_error();
    default:
      return false;
  }
}

void add_pull(std::size_t source, std::size_t target, std::string_view key,
              std::vector<PullGroup>& pulls) {
  for (auto& group : pulls) {
    if (group.source == source && group.target == target) {
      group.keys.emplace_back(key);
      return;
    }
  }
  pulls.push_back({source, target, {std::string(key)}});
}

// Under a move, the keys not settled yet (and salted counters' sub-keys, which are stored
// keys too), grouped by source and target: pulled before the route runs.
void plan_pulls(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  plan.topology_version = context.topology_version;
  if (context.move == nullptr || !touches_stored_keys(plan)) return;
  for (const auto& key : plan.keys) {
    if (key.moving_from)
      add_pull(*key.moving_from, key.owner.shard, request.args[key.position], plan.pulls);
    if (key.salted == nullptr) continue;
    const auto& counter = *key.salted;
    for (std::size_t i = 1; i < counter.sub_keys.size() && i < counter.shards.size(); ++i)
      if (auto source = context.move->source_of(counter.sub_keys[i], counter.shards[i]))
        add_pull(*source, counter.shards[i], counter.sub_keys[i], plan.pulls);
  }
}

void plan_route(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  const CommandSpec& spec = *plan.spec;
  // A numkeys Redis refuses (not a number, negative, more than the arguments given): any
  // shard answers it in Redis's own words, and runs nothing. Inside MULTI Redis queues it and
  // EXEC carries the error, so it is queued on the transaction's shard.
  if (!plan.keys_found && counts_its_keys(spec)) {
    plan.kind = context.in_multi ? RouteKind::Queued : RouteKind::AnyShard;
    plan.any_shard = context.in_multi;
    return;
  }

  if (context.in_multi && !runs_inside_multi(spec)) return plan_queued(context, request, plan);
  if (const PlannedKey* salted = plan.salted_key()) return plan_salted(request, plan, *salted);
  switch (spec.routing) {
    case Routing::Keyed:
      return plan_keyed(context, request, plan);
    case Routing::Split:
      return plan_split(plan);
    case Routing::Broadcast:
      return plan_broadcast(context, request, plan);
    case Routing::Any:
      plan.kind = RouteKind::AnyShard;
      return;
    case Routing::Channel:
      plan.kind = RouteKind::SingleShard;
      return;
    case Routing::Local:
      if (protocol::serves_cluster_clients(spec.local) && !context.cluster_endpoint) {
        plan.kind = RouteKind::Refused;
        plan.fail(ClientError::ClusterSupportDisabled);
        return;
      }
      plan.kind = RouteKind::Local;
      return;
    case Routing::Stateful:
      return plan_stateful(context, request, plan);
    case Routing::Refused:
      plan.kind = RouteKind::Refused;
      plan.fail(ClientError::Refused, upper_name(spec), spec.reason);
      return;
    case Routing::Container:
      break;  // handled by find_spec
  }
}

}  // namespace

bool runs_inside_multi(const CommandSpec& spec) {
  return spec.stateful == StatefulKind::Transaction || spec.local == LocalHandler::Quit ||
         spec.local == LocalHandler::Reset;
}

namespace {

// The two checks of lost_standing are inlined into build_plan, on every request's path (they
// were, until lost_standing made them two-caller functions the compiler left out of line).

// In a fleet, a router that has not confirmed its lease lately may have been left out of a
// move; until it has, nothing it routes reaches a shard. False: the plan stands.
[[gnu::always_inline]] inline bool out_of_touch(const FleetStanding& fleet, Plan& plan) {
  if (plan.kind == RouteKind::Answered || plan.kind == RouteKind::Local) return false;
  if (fleet.map_refused != 0) {
    plan.kind = RouteKind::Answered;
    plan.fail(ClientError::FleetMapRefused, fleet.map_refused);
    return true;
  }
  if (fleet.late_ns <= 0) return false;
  plan.kind = RouteKind::Answered;
  plan.fail(ClientError::FleetOutOfTouch, fleet.late_ns / 1'000'000);
  return true;
}

// Whether the command may write: Redis's `write` flag, or a script (not the _RO forms).
bool may_write(const CommandSpec& spec) {
  return spec.has(protocol::kWrite) || (protocol::runs_script(spec) && !spec.name.ends_with("_ro"));
}

// After a failover to a primary that lacks acknowledged writes (failover.on_lost_writes:
// refuse), a write that would reach that shard is refused until SANTRAL FAILOVER ACCEPT; reads
// go on. Inside MULTI the refusal dooms the transaction, as any command that fails to queue.
// False: the plan stands.
[[gnu::always_inline]] inline bool refused_write(const PlanContext& context, Plan& plan) {
  if (context.refusals == nullptr || plan.kind == RouteKind::Answered ||
      plan.kind == RouteKind::Local || plan.kind == RouteKind::Refused || !may_write(*plan.spec))
    return false;
  const WriteRefusal* refusal = nullptr;
  auto check = [&](std::size_t shard) {
    if (refusal == nullptr && shard < context.map.shard_count())
      refusal = context.refusals->find(context.map.shard(shard).name);
  };
  if (plan.shard) check(*plan.shard);
  for (std::size_t shard : plan.shards) check(shard);
  for (const auto& key : plan.keys) {
    check(key.owner.shard);
    if (key.salted != nullptr)
      for (std::size_t shard : key.salted->shards) check(shard);
  }
  if (refusal == nullptr) return false;
  plan.kind = RouteKind::Answered;
  plan.fail(ClientError::LostWritesRefused, refusal->shard, refusal->to, refusal->from,
            refusal->why);
  return true;
}

}  // namespace

void build_plan(const PlanContext& context, const protocol::Request& request, Plan& plan) {
  plan.clear();
  plan.spec = find_spec(context, request, plan);
  if (plan.spec == nullptr || !admitted(context, request, plan)) return;
  place_keys(context, request, plan);
  if (context.client.tracking.on)
    plan.connection = ConnectionKind::TrackingLane;
  else if (plan.spec->has(protocol::kReadonly))
    plan.connection = ConnectionKind::ReadFrom;
  plan_route(context, request, plan);
  if (out_of_touch(context.fleet, plan) || refused_write(context, plan)) return;  // lost_standing
  plan_pulls(context, request, plan);
}

bool lost_standing(const PlanContext& context, Plan& plan) {
  return out_of_touch(context.fleet, plan) || refused_write(context, plan);
}

std::string_view route_kind_name(RouteKind kind) {
  static constexpr std::string_view kNames[kRouteKinds] = {
      "ANSWERED",  "LOCAL",      "SINGLE_SHARD", "SHARD_SPLIT",  "SHARD_MERGE",
      "ANY_SHARD", "BLOCKING",   "TRANSACTION",  "QUEUED",       "PUBSUB",
      "SALTED",    "NEAR_CACHE", "SHARD_GATHER", "STAGED_WRITE", "REFUSED"};
  return kNames[static_cast<std::size_t>(kind)];
}

}  // namespace santral::router

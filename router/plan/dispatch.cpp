#include "router/plan/dispatch.h"

#include "protocol/command_table.h"
#include "router/acl/user_directory.h"
#include "router/backend/lease_clock.h"
#include "router/commands/acl_commands.h"
#include "router/hotkeys/detection/hot_key_detector.h"
#include "router/hotkeys/detection/hot_key_observer.h"
#include "router/hotkeys/near_cache/near_cache_route.h"
#include "router/hotkeys/near_cache/write_coherence.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/hotkeys/salting/salted_route.h"
#include "router/plan/planner.h"
#include "router/plan/request_sampler.h"
#include "router/routes/key_pull.h"
#include "router/routes/monitor_feed.h"
#include "router/routes/routing.h"
#include "router/routes/staged_writes.h"
#include "router/routes/tracked_requests.h"
#include "router/routes/transaction.h"
#include "router/runtime/request_context.h"
#include "router/runtime/tenant_limiter.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::CommandSpec;
using protocol::LocalHandler;
using protocol::StatefulKind;

namespace {

// WAIT counts the replicas that have this client's earlier writes, so those must be done;
// RESET closes connections whose earlier replies must arrive first; CLIENT TRACKING (and
// HELLO, which may end it) moves the client's requests between its shared connections and
// its tracking lanes, where later requests could overtake earlier ones.
bool waits_for_earlier_replies(const CommandSpec& spec) {
  return spec.verb == protocol::StatefulVerb::Wait || spec.local == LocalHandler::Reset ||
         spec.local == LocalHandler::ClientTracking || spec.local == LocalHandler::Hello;
}

// An error found while planning. Inside MULTI it also dooms the transaction: EXEC answers
// EXECABORT, as Redis does for a command that fails to queue.
void answer(RequestContext& client, const Plan& plan) {
  if (client.held().in_transaction() && plan.spec != nullptr &&
      plan.spec->verb == protocol::StatefulVerb::Exec)
    return client.held().transaction().refuse_exec(client, plan.error);
  if (client.held().in_transaction() && (plan.spec == nullptr || !runs_inside_multi(*plan.spec)))
    return client.held().transaction().refuse(client, plan.error);
  client.reply_error(plan.error);
}

void answer_error(const Routed& routed) {
  answer(routed.client, routed.plan);
}

// One route strategy per kind of plan, in RouteKind's order.
using Route = void (*)(const Routed&);
constexpr Route kRoutes[kRouteKinds] = {
    answer_error,             // Answered
    run_local,                // Local
    route_single_shard,       // SingleShard
    route_split,              // Split
    route_broadcast,          // Broadcast
    route_any,                // AnyShard
    route_blocking,           // Blocking
    route_transaction,        // Transaction
    route_queued,             // Queued
    route_subscription,       // Subscription
    route_salted,             // Salted
    route_near_cache,         // NearCache
    route_gathered,           // Gathered
    route_cross_shard_write,  // StagedWrite
    answer_error,             // Refused
};

// What a request does besides being routed: SANTRAL ANALYZE's and hot-key sampling, and
// evicting the near-cache entries of the keys it may write.
void observe(const Routed& routed) {
  auto& worker = routed.client.worker();
  const auto& plan = routed.plan;
  if (auto every = worker.shared().analysis_every.load(std::memory_order_relaxed);
      every != 0 && worker.sampler().due(every))
    worker.sampler().sample(routed);
  if (routed.spec.key_specs.empty()) {
    if (routed.spec.has(protocol::kWrite) && worker.shard_map().near_cache_anywhere())
      forget_all_keys(routed);  // FLUSHALL, FLUSHDB
    return;
  }
  if (plan.keys.empty()) return;
  if (worker.hotkeys().due()) observe_hot_key(routed);
  // Anything not read-only may change its keys (a script's included).
  if (worker.shard_map().near_cache_anywhere() && !routed.spec.has(protocol::kReadonly))
    forget_written_keys(routed);
}

// A move is under way and some of the plan's keys may still be on their old shard: the plan
// says which (Plan::pulls); they are pulled over first (router/routes/key_pull.h) and the
// request waits. When it comes round again under the same topology it runs, or answers why
// its keys could not be moved; under another one it is planned and pulled again. The outcome
// names its request, so no other request can take it. False: run it now.
bool pulls_first(RequestContext& client, Plan& plan) {
  if (plan.pulls.empty() || plan.kind == RouteKind::Answered) return false;
  auto& pull = client.pull_outcome();
  if (!pull.answers(client.state().requests_dispatched, plan.topology_version)) {
    start_pull(client, plan);
    // A source that is down fails the pull at once, before the request could wait for it:
    // nothing would wake the request then, so it takes that outcome now.
    if (!pull.answers(client.state().requests_dispatched, plan.topology_version)) return true;
  }
  pull.done = false;
  // Fresh from the primary: a replica may not have the key that just arrived.
  if (plan.connection == ConnectionKind::ReadFrom) plan.connection = ConnectionKind::Primary;
  if (pull.error.empty()) return false;
  plan.kind = RouteKind::Answered;
  plan.error = std::exchange(pull.error, {});
  return false;
}

// How this router stands with its fleet, for the planner (router/cluster/ keeps the lease).
FleetStanding fleet_standing(RequestContext& client) {
  const auto& shared = client.worker().shared();
  auto until = shared.fleet_serve_until_ns.load(std::memory_order_relaxed);
  if (until == std::numeric_limits<std::int64_t>::max()) return {};
  return {lease_clock_ns() - until, shared.fleet_map_refused.load(std::memory_order_relaxed)};
}

// namespaces[].limits: a request on a limited namespace's keys takes one of its tokens (one
// per namespace it names); without one it is answered with an error that names the limit, and
// not run. Without limits anywhere this is one empty check.
void take_namespace_tokens(RequestContext& client, Plan& plan) {
  auto limiters = client.worker().namespace_limiters();
  if (limiters.empty() || plan.kind == RouteKind::Answered) return;
  const auto& namespaces = client.worker().shard_map().namespaces();
  const placement::Namespace* counted = nullptr;
  for (const auto& key : plan.keys) {
    const auto* ns = key.owner.ns;
    if (ns == nullptr || ns == counted || ns < namespaces.data()) continue;
    auto index = static_cast<std::size_t>(ns - namespaces.data());
    if (index >= limiters.size() || limiters[index] == nullptr) continue;
    counted = ns;
    if (limiters[index]->take_request(client.state().last_active)) continue;
    auto limits = limiters[index]->limits();
    plan.kind = RouteKind::Answered;
    plan.fail(ClientError::NamespaceRateLimited, ns->name(), limits.requests_per_s, limits.burst);
    return;
  }
}

// Makes the request's plan; or, for a request resuming after a wait, keeps the one it made
// then when nothing it was made from changed (PlannedUnder), checking again only what changes
// by the moment.
void plan_request(RequestContext& client, ActiveRequest& active) {
  auto& worker = client.worker();
  const auto& topology = worker.topology();
  refresh_permissions(client.state(), worker.config(), topology.version);
  PlanContext context{*topology.map,
                      &worker.salts(),
                      client.state(),
                      client.held().in_transaction(),
                      client.held().subscribed(),
                      topology.config->backend.database,
                      topology.config->cross_shard_writes,
                      client.state().permissions.get(),
                      topology.move.get(),
                      topology.version,
                      &worker.learned(),
                      topology.config->cluster_endpoint,
                      fleet_standing(client),
                      worker.write_refusals()};
  if (active.planned) {  // it waited with its plan made
    auto planned = std::move(*active.planned);
    active.planned.reset();
    if (planned.topology_version == topology.version &&
        planned.salts_generation == worker.salts().generation() &&
        planned.learned.get() == &worker.learned()) {
      lost_standing(context, active.plan);
      return;
    }
  }
  build_plan(context, active.request, active.plan);
  if (denied_by_acl(active.plan) && !std::exchange(active.denial_logged, true))
    log_denial(client, active.request, active.plan);
}

// The request waits (for earlier replies, a pull, its lanes' PINGs) and keeps its plan, with
// what it was made from.
Dispatched wait_with_plan(RequestContext& client, ActiveRequest& active) {
  auto& worker = client.worker();
  active.planned =
      PlannedUnder{worker.topology().version, worker.salts().generation(), worker.learned_now()};
  return Dispatched::AfterEarlierReplies;
}

bool admitted(const Plan& plan) {
  return plan.kind != RouteKind::Answered ||
         (plan.error_code != ClientError::WrongArity && plan.error_code != ClientError::NoAuth &&
          plan.error_code != ClientError::SubscribedMode);
}

}  // namespace

Dispatched dispatch(RequestContext& client, ActiveRequest& active) {
  auto& worker = client.worker();
  const protocol::Request& request = active.request;
  Plan& plan = active.plan;
  plan_request(client, active);
  if (plan.spec == nullptr) {  // no such command (or subcommand): not counted
    answer(client, plan);
    return Dispatched::Done;
  }
  const CommandSpec& spec = *plan.spec;
  auto wait = [&] { return wait_with_plan(client, active); };
  if (!client.link().idle() && waits_for_earlier_replies(spec)) return wait();
  if (client.caching().coherence().fills_in_flight() > 0 && !spec.has(protocol::kReadonly))
    return wait();
  // A cross-shard write sends its later stages as the earlier ones answer: nothing of this
  // client may overtake it.
  if (staged_write_in_flight(client.state().id)) return wait();
  // EXEC ran on the transaction's own connection: a later request on another one could
  // overtake it (a GET reading what the EXEC has not written yet).
  if (client.held().transaction_ending()) {
    if (!client.link().idle()) return wait();
    client.held().transaction().ended_answered();
  }
  // The first request under a new topology waits for this client's earlier ones: the new pool
  // may carry it over another connection (connections_per_shard changed, a shard moved), which
  // must not let it overtake them.
  auto& routed_version = client.state().routed_version;
  if (routed_version != worker.topology().version) {
    if (!client.link().idle()) return wait();
    routed_version = worker.topology().version;
  }
  if (pulls_first(client, plan)) return wait();
  if (lanes_barrier_first(client, plan)) return wait();
  take_namespace_tokens(client, plan);
  client.begin(spec, request.args, plan);
  Routed routed{client, request, spec, plan};
  if (admitted(plan)) {
    client.state().last_command = spec.name;
    observe(routed);
  }
  if (worker.shared().monitors.watching() && plan.kind != RouteKind::Answered &&
      plan.kind != RouteKind::Refused && !spec.has(protocol::kAdmin))
    feed_monitors(routed);
  std::uint64_t slots_before = client.opened_slots();
  kRoutes[static_cast<std::size_t>(plan.kind)](routed);
  note_tracked_request(routed, slots_before);
  return Dispatched::Done;
}

}  // namespace santral::router

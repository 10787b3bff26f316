#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/read_from.h"
#include "placement/shard_map.h"
#include "protocol/command_table.h"
#include "protocol/errors.h"

namespace santral::router {

struct SaltedCounter;

// How a plan is carried out: one route strategy per kind (router/routes/, router/hotkeys/).
enum class RouteKind : std::uint8_t {
  Answered,      // answered with `error` before any routing (unknown command, arity, NOAUTH, ...)
  Local,         // Santral answers it itself (router/commands/)
  SingleShard,   // every key on `shard`: the request goes there whole
  Split,         // keys on several shards: one sub-command per shard, replies merged
  Broadcast,     // to `shards`, replies merged; SCAN visits them one per call
  AnyShard,      // keyless, the same answer everywhere: one shard that is up
  Blocking,      // on a connection lent for the call (or, keyless WAIT, one per shard)
  Transaction,   // MULTI, EXEC, DISCARD, WATCH, UNWATCH
  Queued,        // inside MULTI: queued on the transaction's shard (or refused with `error`)
  Subscription,  // SUBSCRIBE and friends
  Salted,        // names a salted counter: spread over or gathered from its sub-keys
  NearCache,     // GET of a near-cached key: answered from memory, or filled and kept
  Gathered,      // a read whose keys live on several shards: each key fetched, merged here
  StagedWrite,   // a write across shards (cross_shard_writes: allow): read, write, delete
  Refused,       // the command table refuses it, with its reason
};
inline constexpr std::size_t kRouteKinds = static_cast<std::size_t>(RouteKind::Refused) + 1;

// Which of the client's connections to a shard carries the request (RequestContext::backend).
enum class ConnectionKind : std::uint8_t {
  Primary,   // the shared connection to the shard's primary
  ReadFrom,  // a read-only command: the primary or a replica, as `read_from` (or the config) says
  // A tracking client's lane to the primary, for reads and writes alike: the invalidations it
  // carries come in order with the replies (router/tracking/).
  TrackingLane,
};

// One key of a request, resolved once: where it is in the arguments, who owns it, and
// whether it is a salted counter.
struct PlannedKey {
  std::uint32_t position = 0;  // index into request.args
  placement::KeyOwner owner;
  const SaltedCounter* salted = nullptr;
  // Under a move, the shard the key may still be on (its old owner) when that is not `owner`:
  // the key is pulled from there before the request runs (router/routes/key_pull.h).
  std::optional<std::size_t> moving_from;
  // Split: the sub-command it goes in, one per shard, numbered in the order of each shard's
  // first key (Plan::shards names their shards).
  std::uint32_t fragment = 0;
};

// Keys of a request that a move has not settled, by the shard they may still be on (source)
// and the one that serves them now (target): one MIGRATE per group before the request runs.
struct PullGroup {
  std::size_t source = 0;
  std::size_t target = 0;
  std::vector<std::string> keys;
};

// A request resolved once, before anything is sent: every decision the route strategies and
// SANTRAL EXPLAIN need. Built by build_plan() (router/plan/planner.h); nothing recomputes it.
//
//   request ──► command (and subcommand) ──► checks (arity, auth, mode) ──► keys, found once
//        ──► each key's owner (namespace matched once) and salting ──► kind ──► route
struct Plan {
  const protocol::CommandSpec* spec = nullptr;  // the subcommand's for a container
  RouteKind kind = RouteKind::Answered;
  // Answered: the error. Queued, Transaction, Blocking: why it cannot run (CROSSSLOT, ...).
  std::string error;
  protocol::ClientError error_code{};
  std::vector<PlannedKey> keys;  // in argument order
  bool keys_found = true;        // false: the arguments hide where the keys are
  // The one shard every key lives on (none: keys on several, or no key and no default).
  std::optional<std::size_t> shard;
  // Broadcast: the shards that can hold what it asks about. Split: the shard of each
  // sub-command (PlannedKey::fragment).
  std::vector<std::size_t> shards;
  ConnectionKind connection = ConnectionKind::Primary;
  // Read-only commands: the first key's namespace's read_from, if it says.
  std::optional<config::ReadFrom> read_from;
  // Single-key writes: the key's namespace's write_concern, if it says.
  std::optional<config::WriteConcern> write_concern;
  bool near_cached = false;  // a GET whose key's namespace caches hot reads
  bool blocks = false;       // a blocking command that will block (XREAD needs BLOCK)
  bool any_shard = false;    // keyless with the same answer everywhere (queued ANY commands)
  bool every_shard = false;  // queued FLUSHDB, FLUSHALL...: the transaction runs on every shard
  // Under a move: what must be pulled before the route may touch a stored key (keys and
  // salted counters' sub-keys), decided with the topology the plan was built with.
  std::vector<PullGroup> pulls;
  std::uint64_t topology_version = 0;  // that topology's (Topology::version)
  // Where find_keys() leaves the keys' positions while the plan is built; only build_plan
  // reads it (kept here so that its buffer is reused, never shared between sessions).
  std::vector<std::uint32_t> positions;

  bool has_error() const { return !error.empty(); }
  template <typename... Args>
  void fail(protocol::ClientError code, Args&&... args) {
    error_code = code;
    error = protocol::error_message(code, std::forward<Args>(args)...);
  }
  const PlannedKey* salted_key() const {
    for (const auto& key : keys)
      if (key.salted != nullptr) return &key;
    return nullptr;
  }

  // Empties the plan for the next request, keeping its buffers.
  void clear() {
    spec = nullptr;
    kind = RouteKind::Answered;
    error.clear();
    keys.clear();
    pulls.clear();
    topology_version = 0;
    positions.clear();
    keys_found = true;
    shard.reset();
    shards.clear();
    connection = ConnectionKind::Primary;
    read_from.reset();
    write_concern.reset();
    near_cached = blocks = any_shard = every_shard = false;
  }
};

// The names EXPLAIN prints for each kind, MongoDB's explain() style.
std::string_view route_kind_name(RouteKind kind);

}  // namespace santral::router

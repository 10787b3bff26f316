#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "protocol/command_table.h"
#include "protocol/request.h"
#include "router/runtime/plan.h"

namespace santral::router {

class RequestContext;

// One request on its way through a routing strategy.
struct Routed {
  RequestContext& client;
  const protocol::Request& request;
  const protocol::CommandSpec& spec;  // the subcommand's spec for a container command
  const Plan& plan;                   // what dispatch resolved the request into
};

// Every key on the plan's one shard: sent there whole (EVALSHA may send the script first).
void route_single_shard(const Routed& routed);
// Split: keys grouped by shard, one sub-command per shard, replies merged (MGET, MSET, DEL...).
void route_split(const Routed& routed);
// Broadcast: sent to the plan's shards (SCAN: to one at a time), replies merged.
void route_broadcast(const Routed& routed);
// Any: keyless with the same answer everywhere; sent to one shard that is up.
void route_any(const Routed& routed);
// PING while a script has been out a while (router/runtime/scripts_in_flight.h): asked of the
// shards running one, each over a connection lent for it, so that a busy one answers BUSY as
// one Redis would; their PONG otherwise. Returns false when no script has been out that long.
bool route_ping_past_scripts(const Routed& routed);
// Blocking commands, each on a connection of its own (router/routes/blocking_route.cpp).
void route_blocking(const Routed& routed);
// MULTI, EXEC, DISCARD, WATCH, UNWATCH (router/routes/transaction.cpp).
void route_transaction(const Routed& routed);
// A read whose keys live on several shards: each key fetched from its shard, the answer
// computed here (router/routes/gather_route.cpp).
void route_gathered(const Routed& routed);
// A write whose keys live on several shards, with `cross_shard_writes: allow`: a read, a write
// and a delete in stages (router/routes/cross_shard_write.cpp).
void route_cross_shard_write(const Routed& routed);
// Any other command while the client is inside MULTI.
void route_queued(const Routed& routed);
// SUBSCRIBE and friends (router/routes/subscriptions.cpp).
void route_subscription(const Routed& routed);
// Local: answered by Santral (router/commands/local_commands.cpp,
// router/commands/client_commands.cpp).
void run_local(const Routed& routed);

// The shard an `any` command goes to: the first one whose connection is up.
std::size_t any_shard(RequestContext& client);
// The request as bytes to forward: the client's own bytes, or a multibulk re-encoding of an
// inline request (in the client's scratch buffer).
std::string_view request_bytes(const Routed& routed);
// Sends the request unchanged to `shard`.
void forward_whole(const Routed& routed, std::size_t shard);
using protocol::upper_name;

}  // namespace santral::router

#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "protocol/command_table.h"
#include "protocol/request.h"

namespace santral::router {

class ClientSession;

// One request on its way through a routing strategy.
struct Routed {
  ClientSession& session;
  const protocol::Request& request;
  const protocol::CommandSpec& spec;  // the subcommand's spec for a container command
};

// Keyed: every key on one shard, sent there whole; keys on several shards get CROSSSLOT.
void route_keyed(const Routed& routed);
// Split: keys grouped by shard, one sub-command per shard, replies merged (MGET, MSET, DEL...).
void route_split(const Routed& routed);
// Broadcast: sent to every shard (SCAN: to one shard at a time), replies merged.
void route_broadcast(const Routed& routed);
// Channel: PUBLISH-like, routed by the channel name as a key.
void route_channel(const Routed& routed);
// Any: keyless with the same answer everywhere; sent to one shard that is up.
void route_any(const Routed& routed);
// Blocking commands, each on a connection of its own (router/blocking_route.cpp).
void route_blocking(const Routed& routed);
// MULTI, EXEC, DISCARD, WATCH, UNWATCH (router/transaction.cpp).
void route_transaction(const Routed& routed);
// Any other command while the client is inside MULTI.
void route_queued(const Routed& routed);
// SUBSCRIBE and friends (router/subscriptions.cpp).
void route_subscription(const Routed& routed);
// Local: answered by Santral (router/local_commands.cpp, router/client_commands.cpp).
void run_local(const Routed& routed);

// The one shard all of the request's keys live on. nullopt after answering the client with
// the reason (CROSSSLOT, or keys that cannot be found in malformed arguments). A keyed command
// with no keys in this call (EVAL with numkeys 0) belongs to the first shard.
std::optional<std::size_t> single_shard(const Routed& routed);
// The shards a broadcast goes to: those a KEYS or SCAN MATCH pattern can match, else all.
std::vector<std::size_t> broadcast_targets(const Routed& routed);
// The shard an `any` command goes to: the first one whose connection is up.
std::size_t any_shard(const Routed& routed);
// The request as bytes to forward: the client's own bytes, or a multibulk re-encoding of an
// inline request (in the session's scratch buffer).
std::string_view request_bytes(const Routed& routed);
// Sends the request unchanged to `shard`.
void forward_whole(const Routed& routed, std::size_t shard);
// The command name in upper case, for messages.
std::string upper_name(const protocol::CommandSpec& spec);

}  // namespace santral::router

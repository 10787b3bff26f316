#pragma once

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
// Channel: PUBLISH-like, routed by the channel name as a key.
void route_channel(const Routed& routed);
// Any: keyless with the same answer everywhere; sent to one shard that is up.
void route_any(const Routed& routed);
// Local: answered by Santral (router/local_commands.cpp).
void run_local(const Routed& routed);

// Sends the request unchanged (re-encoded as multibulk if it came inline) to `shard`.
void forward_whole(const Routed& routed, std::size_t shard);

}  // namespace santral::router

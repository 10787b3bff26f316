#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/topology.h"
#include "protocol/request.h"
#include "router/plan/plan.h"

namespace santral::router {

class ClientSession;

// A request's keys that a move has not settled, by the shard they may still be on (source)
// and the one that serves them now (target).
struct PullGroup {
  std::size_t source = 0;
  std::size_t target = 0;
  std::vector<std::string> keys;
};

// What became of the pull for the request a session is dispatching: dispatch sends it, and
// when the same request comes round again it runs (done, same epoch), fails with `error`, or
// is pulled again (another epoch: the move changed direction meanwhile).
struct PullOutcome {
  std::uint64_t epoch = 0;
  bool done = false;
  std::string error;  // for the client, when a MIGRATE failed
};

// The keys of `plan` that are moving under `move`, grouped; salted counters' sub-keys count
// as keys. Empty for plans that touch no stored key (pub/sub channels, local commands).
std::vector<PullGroup> moving_keys(const config::Move& move, const config::ShardMap& map,
                                   const Plan& plan, const protocol::Request& request);

// Pulls each group's keys from its source to its target (one MIGRATE per group, on this
// client's connection to the source, so that it follows the client's earlier requests there)
// and records the outcome in the session. Opens a reply slot the client never sees; the
// request waits behind it and is dispatched again once it is answered.
void start_pull(ClientSession& session, std::vector<PullGroup> groups, std::uint64_t epoch);
// The MIGRATEs of a pull whose slot is open: sent now (the worker holds pulls while a move
// changes direction, and sends them when every worker has switched).
void send_pull(ClientSession& session, std::uint64_t slot, const std::vector<PullGroup>& groups);

}  // namespace santral::router

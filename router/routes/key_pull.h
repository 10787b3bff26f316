#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "placement/topology.h"
#include "protocol/request.h"
#include "router/runtime/plan.h"

namespace santral::router {

class RequestContext;

// What became of the pull of one request: dispatch sends it, and when the same request comes
// round again under the same topology it runs (done), fails with `error`, or, under another
// topology (the move changed direction or ended meanwhile), is planned and pulled again. It
// names its request (the client's count of requests dispatched before it), so that an
// outcome left over from one request can never let another one skip its pull.
struct PullOutcome {
  std::uint64_t request = 0;
  std::uint64_t topology_version = 0;  // the topology the pull was planned with
  bool done = false;
  std::string error;  // for the client, when a MIGRATE failed

  bool answers(std::uint64_t current_request, std::uint64_t version) const {
    return done && request == current_request && topology_version == version;
  }
};

// Pulls each of the plan's groups from its source to its target (one MIGRATE per group, on
// this client's connection to the source, so that it follows the client's earlier requests
// there) and records the outcome, named after the request, in the client. Opens a reply slot
// the client never sees; the request waits behind it and is dispatched again once it is
// answered.
void start_pull(RequestContext& client, const Plan& plan);
// The MIGRATEs of a pull whose slot is open: sent now (the worker holds pulls while a move
// changes direction, and sends them when every worker has switched).
void send_pull(RequestContext& client, std::uint64_t slot, const std::vector<PullGroup>& groups);

}  // namespace santral::router

#pragma once

#include "router/runtime/active_request.h"

namespace santral::router {

class RequestContext;

enum class Dispatched {
  Done,
  // Not handled yet: the request must wait until every earlier request of this client has
  // its reply (WAIT, a pull), then be dispatched again; it keeps its plan (ActiveRequest).
  AfterEarlierReplies,
  // Not handled yet: its user's token is due later (users[].limits.wait_ms), and its
  // connection holds it until then (ClientSession::hold), then dispatches it again.
  Held,
};

// Routes one request of `client` by the command table: finds the command (and subcommand),
// checks its arity and the client's authentication and mode (MULTI, subscribed), then hands
// it to the strategy its routing rule names. A request that waited resumes here with what it
// kept (its plan, unless what the plan was made from changed).
Dispatched dispatch(RequestContext& client, ActiveRequest& active);

}  // namespace santral::router

#pragma once

#include "protocol/request.h"

namespace santral::router {

class ClientSession;

// Routes one request of `session` by the command table: finds the command (and subcommand),
// checks its arity and the client's authentication, then hands it to the strategy its
// routing rule names.
void dispatch(ClientSession& session, const protocol::Request& request);

}  // namespace santral::router

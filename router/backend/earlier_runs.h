#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "router/backend/backend_connection.h"

namespace santral::router {

// A router that stopped (SIGKILL, a crash, a restart) may have left requests in a stalled
// shard's socket buffer, which the shard runs when it wakes. Before this run resumes a move
// its earlier run was carrying out, it ends those connections, proven by the shard: on each
// of `servers`, CLIENT LIST, then CLIENT KILL ID for every client named by an earlier run of
// this router (connection_name.h). `done` runs once every server has answered for all of
// them; a server that cannot be asked (down) is asked again every second, and the move waits
// for it. A stalled one answers when it wakes; one silent longer than the request timeout
// (doubled each time, up to 16 s) is asked again on a new connection, since a link may have
// lost the question without closing its connection.
void end_earlier_runs(boost::asio::io_context& io, std::vector<BackendTarget> servers,
                      const std::shared_ptr<const config::Config>& config,
                      std::function<void()> done);

// The ids of CLIENT LIST's clients whose name starts with `prefix` but is not `mine`.
std::vector<std::string> earlier_run_clients(std::string_view client_list, std::string_view prefix,
                                             std::string_view mine);

}  // namespace santral::router

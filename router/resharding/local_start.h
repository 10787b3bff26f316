#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "placement/topology.h"
#include "router/resharding/local_ledger.h"
#include "router/resharding/move_driver.h"

namespace santral::router {

// Where a router alone starts from (resharding.state_file): the map in force the state file
// keeps, a move under way there (resumed), or the file's map; a file whose map differs from
// the one in force is planned as a move, never switched to.
struct LocalStart {
  placement::TopologyPtr topology;      // what to serve first
  std::optional<LedgerMove> kept_move;  // the move the state file holds, resumed at run()
  placement::TopologyPtr planned;       // the file's map, planned as a move at run()
  std::string error;                    // the router does not start (a bad state file)
  bool file_in_force = false;           // it serves the file's map: the state file says so
};
LocalStart restore_local_moves(LocalLedger& ledger, MoveHost& host,
                               const placement::TopologyPtr& file,
                               const std::filesystem::path& config_path);

}  // namespace santral::router

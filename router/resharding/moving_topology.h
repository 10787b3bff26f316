#pragma once

#include <cstdint>

#include "placement/topology.h"

namespace santral::router {

// The topology a move serves with: `to`'s config and map, with the shards only `from` has
// appended as draining (the map places nothing on them; they hold what is not moved yet), and
// the move from `from`'s map. `epoch` tells this direction of the move from any other.
placement::TopologyPtr moving_topology(const placement::Topology& from,
                                       const placement::Topology& to, std::uint64_t version,
                                       std::uint64_t epoch);

}  // namespace santral::router

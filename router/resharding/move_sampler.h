#pragma once

#include <functional>
#include <vector>

#include "placement/topology.h"
#include "router/status/reshard_state.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace santral::router {

// Estimates what each unit of a move holds, from the sources: DBSIZE and RANDOMKEY (`samples`
// times) on every shard keys may leave, then MEMORY USAGE of the sampled keys that move. A
// sampled key counts for the unit of its placement and its pair of shards; a unit gets its
// sources' key counts times the share of samples that fell in it. Gives up on a shard that has
// not answered within a few seconds. `done` runs on `io`'s thread. Returns what ends the
// sampling at once (its connections closed; `done` then gets what is in so far).
std::function<void()> sample_move(boost::asio::io_context& io,
                                  const placement::TopologyPtr& topology,
                                  std::vector<UnitProgress> units, unsigned samples,
                                  std::function<void(std::vector<UnitProgress>)> done);

}  // namespace santral::router

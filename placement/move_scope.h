#pragma once

#include "placement/topology.h"

namespace santral::placement {

// Which placements a move cannot touch (Move::settled, Move::default_settled), computed once
// when the move's topology is made: a namespace of `to` is settled when the way keys become
// shards is the same in both maps (no key_function_change: the hash, its tag, the namespaces'
// patterns, order, shard-key fields and what a range passes on), `from` has a namespace of the
// same name at the same place, moving_units() names none of its units, and no shard the two
// maps share by name changed its address. The default placement likewise, unless keys are
// placed at random. A settled placement's keys are looked up once, on the map in force: the
// planner skips the second placement (issue 44: a move costs nothing for keys it cannot touch).
void settle_unmoved(Move& move, const ShardMap& to);

}  // namespace santral::placement
